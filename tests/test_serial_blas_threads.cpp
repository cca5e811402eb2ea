// One BLAS thread per rank by default (core/BlasThreads.hpp): a 2-rank run's summary line
// reports the thread count that OpenBLAS itself returns on every rank (openblas_get_num_threads),
// 1 when no variable is set, and the user's OPENBLAS_NUM_THREADS or OMP_NUM_THREADS when one is.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "core/BlasThreads.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

/// The summary line "BLAS: ..." that `optistep check` prints on 2 ranks with `environment`
/// (after the thread variables are removed), or "" if it printed none.
std::string BlasLine(const fs::path& dir, const std::string& environment) {
  const std::string scene = std::string(OPTISTEP_SOURCE_DIR) + "/tests/data/smoke.yaml";
  const std::string command =
      test::Mpiexec(2, "-u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS -u OMP_NUM_THREADS " + environment) +
      " " + OPTISTEP_EXECUTABLE + " check " + scene + " > stdout.txt 2> stderr.txt";
  EXPECT_EQ(test::Shell(dir.string(), command), 0) << test::ReadFile((dir / "stderr.txt").string());
  const std::string out = test::ReadFile((dir / "stdout.txt").string());
  const auto start = out.find("BLAS: ");
  if (start == std::string::npos) return "";
  return out.substr(start, out.find('\n', start) - start);
}

class BlasThreadLimit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (QueryBlasThreads().version.rfind("OpenBLAS", 0) != 0)
      GTEST_SKIP() << "the BLAS is not OpenBLAS (" << QueryBlasThreads().library
                   << "): its threads are not optistep's to set";
    dir_ = fs::path(test::SharedTempDir("blas_threads"));
  }
  fs::path dir_;
};

TEST_F(BlasThreadLimit, EachRankRunsOneThreadByDefault) {
  const std::string line = BlasLine(dir_, "");
  EXPECT_NE(line.find(", 1 thread per rank (one per rank: optistep's default)"), std::string::npos)
      << line;
}

TEST_F(BlasThreadLimit, AnExplicitOpenblasNumThreadsIsRespected) {
  const std::string line = BlasLine(dir_, "OPENBLAS_NUM_THREADS=2");
  EXPECT_NE(line.find(", 2 threads per rank (OPENBLAS_NUM_THREADS)"), std::string::npos) << line;
}

TEST_F(BlasThreadLimit, AnExplicitOmpNumThreadsIsRespected) {
  const std::string line = BlasLine(dir_, "OMP_NUM_THREADS=2");
  EXPECT_NE(line.find(", 2 threads per rank (OMP_NUM_THREADS)"), std::string::npos) << line;
}

}  // namespace
}  // namespace optistep
