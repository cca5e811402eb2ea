#pragma once
// Small helpers shared by the test suites.
#include <gtest/gtest.h>
#include <mpi.h>

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
