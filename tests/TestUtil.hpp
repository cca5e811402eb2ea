#pragma once
// Small helpers shared by the test suites.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace optistep::test {

/// Path of a file in the source tree (configs/, tests/data/).
inline std::string SourcePath(const std::string& relative) {
  return std::string(OPTISTEP_SOURCE_DIR) + "/" + relative;
}

/// The whole text of a file ("" if it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Path of data/meshes/<file>, a CGAL demo mesh that scripts/fetch-meshes.sh makes (not
/// in the repository: fetched from Debian's libcgal-demo), or "" when it is absent.
inline std::string FetchedMesh(const std::string& file) {
  const std::string path = SourcePath("data/meshes/" + file);
  return std::filesystem::exists(path) ? path : "";
}

/// For a test whose fetched mesh is absent; the test returns right after. A skip for a
/// developer's ctest without data/meshes/; a failure when OPTISTEP_REQUIRE_MESHES is set,
/// as scripts/test.sh (and so CI) sets it after fetching, so that a broken fetch cannot
/// pass as skipped tests.
inline void MissingFetchedMesh(const std::string& file) {
  const std::string absent =
      "data/meshes/" + file + " is absent; run scripts/fetch-meshes.sh " + file;
  if (std::getenv("OPTISTEP_REQUIRE_MESHES")) FAIL() << absent << " (OPTISTEP_REQUIRE_MESHES is set)";
  GTEST_SKIP() << absent;
}

/// The number of rows of the stats.csv at path if it has its header and then the rows of
/// steps 1, 2, ... once each, in order; otherwise -1.
inline long StepsInOrder(const std::string& path) {
  std::istringstream csv(ReadFile(path));
  std::string line;
  if (!std::getline(csv, line) || line.rfind("step,", 0) != 0) return -1;
  long steps = 0;
  while (std::getline(csv, line))
    if (std::strtol(line.c_str(), nullptr, 10) != ++steps) return -1;
  return steps;
}

/// How many lines of text start with prefix.
inline int LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::istringstream lines(text);
  int count = 0;
  for (std::string line; std::getline(lines, line);) count += line.rfind(prefix, 0) == 0;
  return count;
}

/// Runs a shell command in folder dir; its exit code, or -1 if it did not exit normally.
inline int Shell(const std::string& dir, const std::string& command) {
  const int status = std::system(("cd '" + dir + "' && { " + command + "; }").c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The start of a shell command that runs `mpiexec -n ranks` from a test process, with the
/// variables `environment` ("NAME=value ..."). The test is an MPI singleton whose own Open
/// MPI and PMIx variables would make the nested mpiexec take itself for part of the
/// singleton (and run nothing): they are removed.
inline std::string Mpiexec(int ranks, const std::string& environment = "") {
  std::string command = "env";
  for (char** variable = environ; *variable; ++variable) {
    const std::string entry = *variable;
    const std::string name = entry.substr(0, entry.find('='));
    for (const char* prefix : {"OMPI_MCA_", "OMPI_COMMAND", "OMPI_APP_", "PMIX_", "ORTE_"})
      if (name.rfind(prefix, 0) == 0) command += " -u " + name;
  }
  return command + " " + environment + " " + OPTISTEP_MPIEXEC +
         " --oversubscribe --bind-to none -n " + std::to_string(ranks);
}

inline int Rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

inline int Size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

}  // namespace optistep::test
