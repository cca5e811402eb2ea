// The optistep executable with checkpoints, end to end (as an MPI singleton; the suite
// test_checkpoint covers 1, 2 and 4 ranks in-process): a real SIGUSR1, as SLURM sends it
// before the walltime, stops a run with exit code 0 after a checkpoint, and
// `--restart latest` finishes it with the same last frame, bit for bit, as a run never
// interrupted; a run folder moved elsewhere resumes bitwise; kill -9 at random moments
// (with a checkpoint after every step, most land inside a checkpoint write) never costs
// more than the steps since the last complete checkpoint; `--restart` with nothing to
// restart from exits 1 with one line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "io/Hdf5File.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

using test::ReadFile;
using test::Shell;

class CheckpointCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::SharedTempDir("checkpoint_cli");
    // 200 steps of a few milliseconds: a signal sent after the first rows lands mid-run.
    test::WriteDropScene(dir_, 100);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// The frame file `last` of out/ and whole/ hold the same positions, bit for bit, and
  /// out/stats.csv has a header and the rows of steps 1..steps once each, in order.
  void ExpectSameEnd(const std::string& last, long steps) const {
    std::vector<double> resumed, whole;
    for (auto [folder, positions] : {std::pair{"out", &resumed}, {"whole", &whole}}) {
      const Hdf5File file = Hdf5File::Open(MPI_COMM_SELF, (dir_ / folder / "frames" / last).string());
      *positions = file.ReadArray<double>("positions", 0, file.Shape("positions")[0]);
    }
    ASSERT_EQ(resumed.size(), whole.size());
    ASSERT_FALSE(resumed.empty());
    EXPECT_EQ(std::memcmp(resumed.data(), whole.data(), resumed.size() * sizeof(double)), 0);
    EXPECT_EQ(test::StepsInOrder((dir_ / "out" / "stats.csv").string()), steps);
  }

  fs::path dir_;
};

TEST_F(CheckpointCli, RestartWithNothingToRestartFromExitsOne) {
  const std::string optistep = OPTISTEP_EXECUTABLE;
  EXPECT_EQ(Shell(dir_, optistep + " run drop.yaml --restart latest > o.txt 2> e.txt"), 1);
  const std::string err = ReadFile(dir_ / "e.txt");
  EXPECT_NE(err.find("no checkpoint in out/checkpoints"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "stats.csv")) << "nothing may be written";
  EXPECT_EQ(Shell(dir_, optistep + " check drop.yaml --restart latest > o.txt 2> e.txt"), 1);
  EXPECT_NE(ReadFile(dir_ / "e.txt").find("options of run"), std::string::npos);
}

TEST_F(CheckpointCli, SigusrStopsTheRunAndRestartFinishesItBitwise) {
  const std::string optistep = std::string(OPTISTEP_EXECUTABLE) + " run drop.yaml --quiet";
  // The interrupted run: SIGUSR1 once stats.csv has 3 steps.
  ASSERT_EQ(Shell(dir_, optistep + " > first.txt 2>&1 & pid=$!; "
                  "while kill -0 $pid 2>/dev/null && "
                  "[ \"$(cat out/stats.csv 2>/dev/null | wc -l)\" -lt 4 ]; do sleep 0.01; done; "
                  "kill -USR1 $pid; wait $pid"), 0)
      << ReadFile(dir_ / "first.txt");
  const std::string first = ReadFile(dir_ / "first.txt");
  ASSERT_NE(first.find("stopped by SIGUSR1"), std::string::npos) << first;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "frames" / "drop_000100.h5"));
  ASSERT_EQ(Shell(dir_, optistep + " --restart latest > second.txt 2>&1"), 0)
      << ReadFile(dir_ / "second.txt");
  EXPECT_NE(ReadFile(dir_ / "second.txt").find("restarting from out/checkpoints/ckpt_"),
            std::string::npos);
  ASSERT_EQ(Shell(dir_, optistep + " --set output.directory=whole > whole.txt 2>&1"), 0);
  ExpectSameEnd("drop_000100.h5", 200);
}

TEST_F(CheckpointCli, AMovedRunFolderResumesBitwise) {
  // Output keys (folder, frame and checkpoint intervals) cannot change the trajectory, so
  // they do not count as a scene change.
  const std::string run = std::string(OPTISTEP_EXECUTABLE) +
                          " run drop.yaml --quiet --set time.frames=40 "
                          "--set output.checkpoint_every_steps=30";
  ASSERT_EQ(Shell(dir_, run + " > first.txt 2>&1"), 0) << ReadFile(dir_ / "first.txt");
  fs::create_directories(dir_ / "whole" / "frames");
  fs::copy_file(dir_ / "out" / "frames" / "drop_000040.h5",
                dir_ / "whole" / "frames" / "drop_000040.h5");
  fs::rename(dir_ / "out", dir_ / "moved");
  fs::remove(dir_ / "moved" / "frames" / "drop_000040.h5");
  const std::string moved = " --restart latest --set output.directory=moved --set output.every=5";
  ASSERT_EQ(Shell(dir_, run + moved + " > second.txt 2>&1"), 0) << ReadFile(dir_ / "second.txt");
  const std::string second = ReadFile(dir_ / "second.txt");
  EXPECT_NE(second.find("restarting from moved/checkpoints/ckpt_00000060.h5"), std::string::npos)
      << second;
  EXPECT_NE(second.find("(continues bitwise)"), std::string::npos) << second;
  fs::rename(dir_ / "moved", dir_ / "out");
  ExpectSameEnd("drop_000040.h5", 80);

  // A change that does matter is named, refused, and with --allow-scene-change reported
  // as what it is (the rank count is the same: nothing is repartitioned).
  const std::string changed = " --restart latest --set bodies.0.material.E=2.0e5";
  EXPECT_EQ(Shell(dir_, run + changed + " > third.txt 2>&1"), 1);
  EXPECT_NE(ReadFile(dir_ / "third.txt").find("bodies[0].material.E"), std::string::npos)
      << ReadFile(dir_ / "third.txt");
  ASSERT_EQ(Shell(dir_, run + changed + " --allow-scene-change > fourth.txt 2>&1"), 0);
  const std::string fourth = ReadFile(dir_ / "fourth.txt");
  EXPECT_NE(fourth.find("bodies[0].material.E"), std::string::npos) << fourth;
  EXPECT_EQ(fourth.find("repartitioned"), std::string::npos) << fourth;
  EXPECT_EQ(fourth.find("continues bitwise"), std::string::npos) << fourth;
}

TEST_F(CheckpointCli, KillNineAtAnyMomentThenRestartFinishesBitwise) {
  const std::string optistep = std::string(OPTISTEP_EXECUTABLE) +
                               " run drop.yaml --quiet --set time.frames=40 "
                               "--set output.checkpoint_every_steps=1";
  ASSERT_EQ(Shell(dir_, optistep + " > run.txt 2>&1"), 0) << ReadFile(dir_ / "run.txt");
  fs::rename(dir_ / "out", dir_ / "whole");
  int left_tmp = 0;
  for (int kill = 0; kill < 3; ++kill) {
    // kill -9 once 4 more steps than at the start are in stats.csv.
    Shell(dir_, optistep + std::string(kill ? " --restart latest" : "") +
                    " > run.txt 2>&1 & pid=$!; "
                    "start=$(cat out/stats.csv 2>/dev/null | wc -l); "
                    "while kill -0 $pid 2>/dev/null && "
                    "[ \"$(cat out/stats.csv 2>/dev/null | wc -l)\" -lt $((start + 4)) ]; do "
                    "sleep 0.005; done; kill -9 $pid; wait $pid");
    for (const auto& entry : fs::directory_iterator(dir_ / "out" / "checkpoints"))
      left_tmp += entry.path().extension() == ".tmp";
  }
  ASSERT_EQ(Shell(dir_, optistep + " --restart latest > run.txt 2>&1"), 0)
      << ReadFile(dir_ / "run.txt");
  ExpectSameEnd("drop_000040.h5", 80);
  std::printf("(%d of 3 kills landed inside a checkpoint write)\n", left_tmp);
}

}  // namespace
}  // namespace optistep
