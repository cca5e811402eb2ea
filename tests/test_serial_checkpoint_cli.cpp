// The optistep executable with checkpoints, end to end (as an MPI singleton, and on 2 ranks
// under a real mpiexec; the suite test_checkpoint covers 1, 2 and 4 ranks in-process): a
// real SIGUSR1, as SLURM sends it before the walltime, stops a run with exit code 0 after
// a checkpoint, and `--restart latest` finishes it with the same last frame, bit for bit,
// as a run never interrupted; SIGTERM to mpiexec (what scancel and the walltime send to
// the launcher) stops every rank with exit code 0 and a checkpoint within Open MPI's grace
// period, also when the step under way would outlast it (the step is abandoned and the
// state before it checkpointed); a run folder moved elsewhere resumes bitwise; kill -9 at
// random moments (with a checkpoint after every step, most land inside a checkpoint write)
// never costs more than the steps since the last complete checkpoint. (A restart that is
// refused is in the table of test_serial_bad_input.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "io/Checkpoint.hpp"
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

TEST_F(CheckpointCli, SigusrStopsTheRunAndRestartFinishesItBitwise) {
  const std::string optistep = std::string(OPTISTEP_EXECUTABLE) + " run drop.yaml --quiet";
  // The interrupted run: SIGUSR1 once stats.csv has 3 steps. The whole run takes about a
  // second; on a loaded machine the polling shell can wake only after the run has ended
  // (all 200 steps in stats.csv), and the signal then lands in the process's exit. Such an
  // attempt says nothing about SIGUSR1 and is made again (at most 3 times).
  int code = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    fs::remove_all(dir_ / "out");
    code = Shell(dir_, test::InBackgroundUntil(optistep + " > first.txt 2>&1",
                                               test::StatsHasLines("out/stats.csv", "4"),
                                               "kill -USR1 $pid"));
    if (test::StepsInOrder((dir_ / "out" / "stats.csv").string()) < 200) break;
  }
  ASSERT_EQ(code, 0) << ReadFile(dir_ / "first.txt");
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

/// Rows /fem/x and /fem/v of a checkpoint file, one after the other.
std::vector<double> CheckpointState(const fs::path& path) {
  const Hdf5File file = Hdf5File::Open(MPI_COMM_SELF, path.string());
  std::vector<double> state;
  for (const char* name : {"/fem/x", "/fem/v"}) {
    const std::vector<double> rows = file.ReadArray<double>(name, 0, file.Shape(name)[0]);
    state.insert(state.end(), rows.begin(), rows.end());
  }
  return state;
}

/// A shell command that runs `optistep args` on 2 ranks under mpiexec, with Open MPI's
/// grace period between SIGTERM and SIGKILL at 5 s (its default of 1 s is shorter than
/// MPI_Finalize takes once mpiexec is terminating the job; docs/user/running.md); each
/// rank writes its exit code to exit.<rank>. (mpiexec's own exit code says nothing about
/// the ranks once it was told to terminate: Open MPI 4.1 exits 1 then. A wrapper shell
/// hands the SIGTERM it gets on.)
std::string TwoRanksReportingExit(const std::string& args) {
  return test::Mpiexec(2, "OMPI_MCA_odls_base_sigkill_timeout=5") + " bash -c '" +
         OPTISTEP_EXECUTABLE + " " + args +
         " & c=$!; trap \"kill -TERM $c; t=1\" TERM; wait $c; s=$?; "
         "if [ -n \"$t\" ]; then wait $c; s=$?; fi; echo $s > exit.$OMPI_COMM_WORLD_RANK'";
}

TEST_F(CheckpointCli, SigtermToMpiexecCheckpointsWithinTheGracePeriod) {
  // Open MPI's mpiexec turns SIGTERM into SIGCONT, then after odls_base_sigkill_timeout
  // seconds SIGTERM to the ranks, and as long again later SIGKILL.
  // A run that could not end on its own in the time this takes.
  const std::string run = "run drop.yaml --quiet --set time.frames=1000000";
  const auto stop_after = [&](const std::string& args, const std::string& log,
                              const std::string& ready) {
    for (const char* rank : {"exit.0", "exit.1"}) fs::remove(dir_ / rank);
    Shell(dir_, test::InBackgroundUntil(TwoRanksReportingExit(args) + " > " + log + " 2>&1",
                                        ready, "kill -TERM $pid"));
    const std::string out = ReadFile(dir_ / log);
    for (const char* rank : {"exit.0", "exit.1"})
      EXPECT_EQ(ReadFile(dir_ / rank), "0\n") << rank << "\n" << out;
    EXPECT_NE(out.find("optistep: stopped by SIGTERM"), std::string::npos) << out;
    EXPECT_NE(out.find("resume with --restart latest"), std::string::npos) << out;
    return out;
  };
  // While the run steps (once stats.csv has its first row): the step under way is finished
  // if it can be, or abandoned.
  stop_after(run, "first.txt", test::StatsHasLines("out/stats.csv", "2"));
  std::vector<std::string> files = ListCheckpoints((dir_ / "out" / "checkpoints").string());
  ASSERT_FALSE(files.empty());
  const std::string first = files.front();
  const std::vector<double> at_stop = CheckpointState(first);

  // A step that would outlast any grace period: these options make its linear solves
  // endless. It is abandoned; the checkpoint is the state before it, bit for bit.
  const std::string out = stop_after(
      run + " --restart latest -newton_ksp_type richardson -newton_ksp_richardson_scale 1e-9 "
            "-newton_ksp_max_it 2000000000",
      "second.txt", "grep -q 'restarting from' second.txt");
  EXPECT_NE(out.find("abandoned"), std::string::npos) << out;
  files = ListCheckpoints((dir_ / "out" / "checkpoints").string());
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files.front(), first);
  const std::vector<double> after_abandon = CheckpointState(first);
  ASSERT_EQ(after_abandon.size(), at_stop.size());
  EXPECT_EQ(std::memcmp(after_abandon.data(), at_stop.data(), at_stop.size() * sizeof(double)), 0);

  // The run goes on from there: SIGUSR1 once it has taken 2 more steps.
  const long steps = std::stol(first.substr(first.rfind("ckpt_") + 5));
  ASSERT_EQ(Shell(dir_, test::InBackgroundUntil(
                            std::string(OPTISTEP_EXECUTABLE) + " " + run +
                                " --restart latest > third.txt 2>&1",
                            test::StatsHasLines("out/stats.csv", std::to_string(steps + 3)),
                            "kill -USR1 $pid")),
            0)
      << ReadFile(dir_ / "third.txt");
  const std::string third = ReadFile(dir_ / "third.txt");
  const std::string relative = fs::relative(first, dir_).string();
  EXPECT_NE(third.find("restarting from " + relative), std::string::npos) << third;
  EXPECT_GE(test::StepsInOrder((dir_ / "out" / "stats.csv").string()), steps + 2);
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

  // A change that does matter (refused without --allow-scene-change: test_serial_bad_input)
  // is reported with it as what it is (the rank count is the same: nothing is
  // repartitioned).
  const std::string changed = " --restart latest --set bodies.0.material.E=2.0e5";
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
    Shell(dir_, "start=$(cat out/stats.csv 2>/dev/null | wc -l); " +
                    test::InBackgroundUntil(
                        optistep + std::string(kill ? " --restart latest" : "") + " > run.txt 2>&1",
                        test::StatsHasLines("out/stats.csv", "$((start + 4))"), "kill -9 $pid"));
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
