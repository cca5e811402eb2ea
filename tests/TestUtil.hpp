#pragma once
// Small helpers shared by the test suites.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <petscvec.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/Error.hpp"

namespace optistep::test {

/// Starts PETSc's default logging unless it runs already (for EventCount).
inline void StartPetscLogging() {
  PetscBool logging = PETSC_FALSE;
  OPTISTEP_PETSC(PetscLogIsActive(&logging));
  if (!logging) OPTISTEP_PETSC(PetscLogDefaultBegin());
}

/// How many times this process has entered the PETSc log event `name` (logging on).
inline int EventCount(const char* name) {
  PetscLogEvent event = 0;
  OPTISTEP_PETSC(PetscLogEventGetId(name, &event));
  PetscEventPerfInfo info;
  OPTISTEP_PETSC(PetscLogEventGetPerfInfo(0, event, &info));
  return info.count;
}

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

/// A shell condition: the stats.csv at path has at least `lines` lines (its header and
/// lines - 1 steps); `lines` may be shell arithmetic, "$((start + 4))".
inline std::string StatsHasLines(const std::string& path, const std::string& lines) {
  return "[ \"$(cat " + path + " 2>/dev/null | wc -l)\" -ge " + lines + " ]";
}

/// A shell command: starts `command` in the background (its pid in $pid), polls until it
/// has ended or the shell condition `ready` holds, runs `then` (which may signal $pid) and
/// waits for the command, whose exit code is the shell's.
inline std::string InBackgroundUntil(const std::string& command, const std::string& ready,
                                     const std::string& then) {
  return command + " & pid=$!; while kill -0 $pid 2>/dev/null && ! { " + ready +
         "; }; do sleep 0.005; done; " + then + "; wait $pid";
}

/// What a run of the executable printed and returned.
struct Outcome {
  int exit_code = -1;  ///< -1 if it did not exit normally
  std::string out;
  std::string err;
};

/// Runs `optistep <args>` in folder dir, in a shell, as an MPI singleton (OptistepOnRanks
/// runs it under mpiexec), with its output in dir/stdout.txt and dir/stderr.txt. `around`,
/// if given, turns that shell command into the one run: under a ulimit, or as the `then`
/// of InBackgroundUntil while another run holds the folder.
inline Outcome Optistep(const std::string& args, const std::filesystem::path& dir,
                        const std::function<std::string(const std::string&)>& around = {}) {
  const std::string command = std::string(OPTISTEP_EXECUTABLE) + " " + args +
                              " > stdout.txt 2> stderr.txt";
  Outcome o;
  o.exit_code = Shell(dir.string(), around ? around(command) : command);
  o.out = ReadFile((dir / "stdout.txt").string());
  o.err = ReadFile((dir / "stderr.txt").string());
  return o;
}

/// Runs `optistep <args>` on `ranks` ranks under mpiexec in folder dir. Per rank, its exit
/// code and its own output (each rank writes dir/stdout.<rank>, stderr.<rank> and
/// exit.<rank> through a shell, so that "printed once" can be told from "printed by every
/// rank" and mpiexec's own report of a failed job stays out of it).
inline std::vector<Outcome> OptistepOnRanks(int ranks, const std::string& args,
                                            const std::filesystem::path& dir) {
  Shell(dir.string(), Mpiexec(ranks) + " bash -c '" + OPTISTEP_EXECUTABLE + " " + args +
                          " > stdout.$OMPI_COMM_WORLD_RANK 2> stderr.$OMPI_COMM_WORLD_RANK; "
                          "echo $? > exit.$OMPI_COMM_WORLD_RANK'");
  std::vector<Outcome> outcomes(ranks);
  for (int r = 0; r < ranks; ++r) {
    const std::string rank = std::to_string(r);
    const std::string code = ReadFile((dir / ("exit." + rank)).string());
    outcomes[r].exit_code = code.empty() ? -1 : std::atoi(code.c_str());
    outcomes[r].out = ReadFile((dir / ("stdout." + rank)).string());
    outcomes[r].err = ReadFile((dir / ("stderr." + rank)).string());
    for (const char* file : {"exit.", "stdout.", "stderr."}) std::filesystem::remove(dir / (file + rank));
  }
  return outcomes;
}

/// Expects exit code `code` and exactly one line on stderr, starting with `prefix`
/// ("optistep: error: ") and containing every piece (the file, key, element or option).
inline void ExpectOneLine(const Outcome& o, int code, const std::string& prefix,
                          const std::vector<std::string>& pieces) {
  EXPECT_EQ(o.exit_code, code) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_EQ(o.err.rfind(prefix, 0), 0u) << o.err;
  for (const auto& p : pieces) EXPECT_NE(o.err.find(p), std::string::npos) << o.err << " lacks " << p;
}

/// Every file and folder below dir, by path relative to dir (folders end in '/'), with its
/// bytes; the top-level entries named in skip are left out.
inline std::map<std::string, std::string> FolderContents(const std::filesystem::path& dir,
                                                         const std::set<std::string>& skip = {}) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> contents;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string path = fs::relative(it->path(), dir).string();
    if (it.depth() == 0 && skip.count(path)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_directory())
      contents[path + "/"] = "";
    else
      contents[path] = ReadFile(it->path().string());
  }
  return contents;
}

/// The paths that two FolderContents do not share or hold different bytes under, one a
/// line ("" when they are the same).
inline std::string ContentsDiffer(const std::map<std::string, std::string>& before,
                                  const std::map<std::string, std::string>& after) {
  std::string differ;
  for (const auto& [path, bytes] : before) {
    const auto now = after.find(path);
    if (now == after.end())
      differ += "removed " + path + "\n";
    else if (now->second != bytes)
      differ += "changed " + path + "\n";
  }
  for (const auto& [path, bytes] : after)
    if (!before.count(path)) differ += "added " + path + "\n";
  return differ;
}

/// Flips one bit of the byte at offset in the file at path.
inline void FlipByte(const std::string& path, std::uintmax_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.get(c);
  f.seekp(static_cast<std::streamoff>(offset));
  f.put(static_cast<char>(c ^ 0x10));
}

/// The file offset of row `row` of a contiguous dataset of `columns` doubles in the HDF5
/// file at path (serial HDF5, not collective).
inline std::uintmax_t OffsetOfRow(const std::string& path, const std::string& name, int64_t row,
                                  int columns) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t dataset = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
  const haddr_t address = H5Dget_offset(dataset);
  H5Dclose(dataset);
  H5Fclose(file);
  EXPECT_NE(address, HADDR_UNDEF) << name;
  return address + static_cast<std::uintmax_t>(row) * columns * sizeof(double);
}

/// How many entries of a and b (of equal size) differ (!=): 0 when two runs are bitwise
/// the same.
inline std::size_t DifferingValues(const std::vector<double>& a, const std::vector<double>& b) {
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.size(); ++i) differing += a[i] != b[i];
  return differing;
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

/// A run on all ranks against the same run on rank 0 alone (rank-invariance tests).
/// `parallel` and `serial` are state vectors laid out as positions then velocities, each
/// half of the vector; worst_x and worst_v are the largest differences over either half
/// (m, m/s), scale_v the largest |velocity| of the 1-rank run.
struct OneRankComparison {
  std::vector<double> parallel, serial;
  double worst_x = 0.0, worst_v = 0.0, scale_v = 0.0;
};

/// Collective on MPI_COMM_WORLD: run(PETSC_COMM_WORLD) on every rank, then
/// run(PETSC_COMM_SELF) on rank 0 alone, broadcast to all. run returns the state vector
/// (any layout; the halves of OneRankComparison when worst_x and worst_v are read). A
/// 1-rank result of another size fails the calling test and leaves serial empty.
template <class Run>
OneRankComparison CompareWithOneRank(const Run& run) {
  OneRankComparison c;
  c.parallel = run(PETSC_COMM_WORLD);
  if (Rank() == 0) c.serial = run(PETSC_COMM_SELF);
  long long size = static_cast<long long>(c.serial.size());
  MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  EXPECT_EQ(static_cast<std::size_t>(size), c.parallel.size()) << "state sizes on 1 rank and on all";
  if (static_cast<std::size_t>(size) != c.parallel.size()) {
    c.serial.clear();
    return c;
  }
  c.serial.resize(c.parallel.size());
  MPI_Bcast(c.serial.data(), static_cast<int>(size), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const std::size_t half = c.parallel.size() / 2;
  for (std::size_t i = 0; i < c.parallel.size(); ++i) {
    const double d = std::abs(c.parallel[i] - c.serial[i]);
    if (i < half) {
      c.worst_x = std::max(c.worst_x, d);
    } else {
      c.worst_v = std::max(c.worst_v, d);
      c.scale_v = std::max(c.scale_v, std::abs(c.serial[i]));
    }
  }
  return c;
}


/// Fills v (owned entries) with a deterministic pseudo-random field in [-amplitude,
/// amplitude], seeded by the global index so that it is rank-count independent.
inline void RandomField(Vec v, double amplitude, unsigned seed) {
  PetscInt begin = 0, end = 0;
  VecGetOwnershipRange(v, &begin, &end);
  PetscScalar* a = nullptr;
  VecGetArray(v, &a);
  for (PetscInt i = begin; i < end; ++i) {
    std::mt19937 rng(seed * 7919u + static_cast<unsigned>(i));
    a[i - begin] = amplitude * std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  }
  VecRestoreArray(v, &a);
}


}  // namespace optistep::test
