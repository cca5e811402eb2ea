#pragma once
// Small helpers shared by the test suites.
#include <mpi.h>

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
