// The output folder of a run, end to end: one run at a time (a second one in the same
// folder, --restart included, is refused with exit code 5 naming the holder, while the
// first goes on untouched; the lock of a process that died is taken over with a warning),
// and a folder that becomes unwritable mid-run ends the run on every rank with exit code 4
// and one line, keeping the last checkpoint to resume from. (What the lines say, and that
// they leave the folder alone: the table of test_serial_bad_input.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "TestScenes.hpp"
#include "TestUtil.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

using test::LinesStartingWith;
using test::ReadFile;
using test::Shell;

class OutputCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::SharedTempDir("output_cli");
    // Steps of a millisecond or a few.
    test::WriteDropScene(dir_, 2000);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// test::StepsInOrder of out/stats.csv.
  long StepsInOrder() const { return test::StepsInOrder((dir_ / "out" / "stats.csv").string()); }

  fs::path dir_;
};

TEST_F(OutputCli, ASecondRunInAFolderInUseIsRefused) {
  const std::string optistep = std::string(OPTISTEP_EXECUTABLE) + " run drop.yaml --quiet";
  // The first run, in the background until SIGTERM (it could not end on its own in the
  // time this takes); the others start once it has stepped.
  const int status = Shell(
      dir_, test::InBackgroundUntil(
                optistep + " --set time.frames=1000000 > first.txt 2>&1",
                "echo $pid > first.pid; " + test::StatsHasLines("out/stats.csv", "3"),
                optistep + " > second.txt 2> second.err; echo $? > second.status; " + optistep +
                    " --restart latest > third.txt 2> third.err; echo $? > third.status; "
                    "kill -TERM $pid"));
  EXPECT_EQ(status, 0) << ReadFile(dir_ / "first.txt");
  const std::string pid = ReadFile(dir_ / "first.pid");
  for (const char* run : {"second", "third"}) {
    SCOPED_TRACE(run);
    const std::string err = ReadFile(dir_ / (std::string(run) + ".err"));
    EXPECT_EQ(ReadFile(dir_ / (std::string(run) + ".status")), "5\n") << err;
    EXPECT_NE(err.find("pid " + pid.substr(0, pid.size() - 1)), std::string::npos) << err;
  }
  // The first run's output is its own: its rows, once each, and the lock is gone.
  EXPECT_NE(ReadFile(dir_ / "first.txt").find("stopped by SIGTERM"), std::string::npos);
  EXPECT_GE(StepsInOrder(), 2);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "optistep.lock"));
}

TEST_F(OutputCli, TheLockOfADeadProcessIsTakenOverWithAWarning) {
  // A run killed with kill -9 leaves its lock file behind.
  const std::string optistep = std::string(OPTISTEP_EXECUTABLE) + " run drop.yaml --quiet";
  Shell(dir_, test::InBackgroundUntil(optistep + " --set time.frames=1000000 > first.txt 2>&1",
                                      "echo $pid > first.pid; " +
                                          test::StatsHasLines("out/stats.csv", "2"),
                                      "kill -9 $pid"));
  ASSERT_TRUE(fs::exists(dir_ / "out" / "optistep.lock"));
  const std::string pid = ReadFile(dir_ / "first.pid");
  EXPECT_EQ(Shell(dir_, optistep + " --set time.frames=5 > second.txt 2> second.err"), 0)
      << ReadFile(dir_ / "second.err");
  const std::string err = ReadFile(dir_ / "second.err");
  EXPECT_EQ(LinesStartingWith(err, "optistep: warning: "), 1) << err;
  EXPECT_NE(err.find("pid " + pid.substr(0, pid.size() - 1)), std::string::npos) << err;
  EXPECT_EQ(StepsInOrder(), 10);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "optistep.lock"));
}

TEST_F(OutputCli, AFolderThatBecomesUnwritableEndsEveryRankWithExitCodeFour) {
  // On 2 ranks: the failing frame write is collective, and every rank must end cleanly.
  const std::string run = test::Mpiexec(2) + " " + OPTISTEP_EXECUTABLE +
                          " run drop.yaml --quiet --set time.frames=30 --set output.every=1 "
                          "--set output.checkpoint_every_steps=1";
  // Once 4 steps are done, a file takes the place of out/frames (root ignores permissions).
  const int status = Shell(dir_, test::InBackgroundUntil(
                                     run + " > first.txt 2> first.err",
                                     test::StatsHasLines("out/stats.csv", "5"),
                                     "mv out/frames out/frames.away; touch out/frames"));
  const std::string err = ReadFile(dir_ / "first.err");
  EXPECT_EQ(status, 4) << err;
  EXPECT_EQ(LinesStartingWith(err, "optistep:"), 1) << err;
  EXPECT_EQ(err.find("MPI_ABORT"), std::string::npos) << err;
  EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
  // The last checkpoint is kept: with the folder back, the run resumes and ends.
  fs::remove(dir_ / "out" / "frames");
  fs::rename(dir_ / "out" / "frames.away", dir_ / "out" / "frames");
  ASSERT_EQ(Shell(dir_, run + " --restart latest > second.txt 2>&1"), 0)
      << ReadFile(dir_ / "second.txt");
  EXPECT_EQ(StepsInOrder(), 60);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "frames" / "drop_000030.h5"));
}

}  // namespace
}  // namespace optistep
