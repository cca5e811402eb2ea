#pragma once
// Temporary folders a suite makes (test::SharedTempDir); tests/mpi_main.cpp removes them
// on rank 0 after the last test.
#include <string>
#include <vector>

namespace optistep::test {

inline std::vector<std::string>& TempDirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

}  // namespace optistep::test
