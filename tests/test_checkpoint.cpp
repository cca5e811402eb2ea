// Checkpoint and restart (io/Checkpoint, app/Simulation), on 1, 2 and 4 ranks. The
// reference of every comparison is the same scene run without interruption:
//  - interrupted mid-frame, checkpointed and resumed on the same ranks, FEM and MPM runs
//    end bitwise equal to the uninterrupted run (positions, velocities, t, step count),
//    FEM also with DOT (solver.method dot, 2 subdomains per rank);
//  - resumed on another rank count (world -> rank 0 alone, and back) they agree to the
//    solver tolerance;
//  - a truncated newest checkpoint, a flipped byte in its data or in its superblock, and a
//    .tmp left by a write killed half-way are detected (or ignored), and the previous
//    checkpoint is loaded; a damaged row read by one rank only fails every rank alike;
//  - resuming from an older file abandons the newer checkpoints;
//  - a FEM state kept and restored (a step abandoned half-way) continues bitwise;
//  - SIGTERM during Run finishes the step, leaves a loadable checkpoint and stops; the
//    resumed Run ends equal to an uninterrupted one, with stats.csv rows and XDMF frames
//    each listed once;
//  - --restart latest with no checkpoint, and a changed scene text, are refused.
#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "app/MpmSimulation.hpp"
#include "core/Error.hpp"
#include "io/Checkpoint.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;
using test::FlipByte;
using test::OffsetOfRow;
using test::Rank;

/// A scene folder shared by all ranks, removed at the end of the test.
class Folder {
 public:
  explicit Folder(const std::string& tag) : path_(test::SharedTempDir(tag)) {}
  ~Folder() {
    MPI_Barrier(MPI_COMM_WORLD);
    if (Rank() == 0) fs::remove_all(path_);
  }
  const std::string& path() const { return path_; }
  std::string Checkpoints() const { return path_ + "/out/checkpoints"; }

 private:
  std::string path_;
};

/// A 2 x 0.5 x 0.5 m bar twisted at one end and dropped on a floor with friction: 2 steps
/// per frame, 4 frames.
SceneConfig FemScene(const Folder& dir, const std::vector<std::string>& overrides = {}) {
  test::WriteBoxMesh(dir.path() + "/bar", 4, 1, 1, Vec3(2.0, 0.5, 0.5));
  std::vector<std::string> all = {"output.directory=" + dir.path() + "/out"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return test::MakeScene(dir.path() + "/fem.yaml", R"(
time: {dt: 0.025, frame_dt: 0.05, frames: 4}
bodies:
  - mesh: bar.node
    material: {E: 1.0e5, nu: 0.4, density: 1000}
    transform: {translate: [0, 0.1, 0]}
boundary_conditions:
  - select: {axis: x, end: min, within: 0.01}
    motion: [{rotate: {axis: [1, 0, 0], angular_velocity: 3.0}}]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], friction: 0.3}
solver: {cn_epsilon: 1.0e-9}
)", all);
}

/// A snow bar (432 particles, 6 grid blocks along x) thrown onto a sticky floor: about 2
/// CFL steps per frame, 3 frames; it hits the floor, so plasticity and contact matter.
SceneConfig MpmScene(const Folder& dir, const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> all = {"output.directory=" + dir.path() + "/out"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return test::MakeScene(dir.path() + "/mpm.yaml", R"(
discretization: mpm
mpm: {dx: 0.1, ppc: 2}
time: {dt: 0.01, frame_dt: 0.02, frames: 3}
bodies:
  - shape: {type: box, min: [0, 0.15, 0], max: [2.4, 0.45, 0.3]}
    material: {E: 2.0e4, nu: 0.3, density: 400, plasticity: {model: snow}}
    initial_velocity: [0.3, -2.0, 0]
collision_objects:
  - {type: half_space, point: [0, 0.1, 0], normal: [0, 1, 0], boundary: sticky}
solver: {cn_epsilon: 1.0e-9}
)", all);
}

/// Everything a run's result is: positions and velocities by global id, t and steps.
struct State {
  std::vector<double> x, v;
  double t = 0.0;
  long steps = 0;
  int frame = 0;
};

State StateOf(FemSimulation& sim) {
  return {sim.GatherPositions(), sim.GatherVelocities(), sim.time(), sim.steps(), sim.frame()};
}

State StateOf(MpmSimulation& sim) {
  State s{{}, {}, sim.time(), sim.steps(), sim.frame()};
  sim.GatherParticles(&s.x, &s.v);
  return s;
}

template <class Sim>
State RunToEnd(Sim& sim, const SceneConfig& scene) {
  while (sim.frame() < scene.time.frames) sim.AdvanceStep(nullptr);
  return StateOf(sim);
}

size_t DifferingBits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return std::max(a.size(), b.size());
  size_t differing = 0;
  for (size_t i = 0; i < a.size(); ++i) differing += std::memcmp(&a[i], &b[i], sizeof(double)) != 0;
  return differing;
}

void ExpectBitwiseEqual(const State& a, const State& b) {
  EXPECT_EQ(DifferingBits(a.x, b.x), 0u) << "positions differ";
  EXPECT_EQ(DifferingBits(a.v, b.v), 0u) << "velocities differ";
  EXPECT_EQ(std::memcmp(&a.t, &b.t, sizeof(double)), 0) << a.t << " s vs " << b.t << " s";
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.frame, b.frame);
}

double MaxDifference(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = a.size() == b.size() ? 0.0 : INFINITY;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

double MaxAbs(const std::vector<double>& a) {
  double m = 0.0;
  for (const double value : a) m = std::max(m, std::abs(value));
  return m;
}

/// Restart("latest") throws an InputError whose message has `piece`.
void ExpectRestartRefused(Simulation& sim, const std::string& piece) {
  try {
    sim.Restart("latest", false);
    ADD_FAILURE() << "restarted; expected an error with '" << piece << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
  }
}

/// Rank 0's state on every rank.
State Broadcast(State s) {
  long sizes[2] = {static_cast<long>(s.x.size()), static_cast<long>(s.v.size())};
  MPI_Bcast(sizes, 2, MPI_LONG, 0, MPI_COMM_WORLD);
  s.x.resize(sizes[0]);
  s.v.resize(sizes[1]);
  MPI_Bcast(s.x.data(), static_cast<int>(sizes[0]), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(s.v.data(), static_cast<int>(sizes[1]), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&s.t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&s.steps, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  MPI_Bcast(&s.frame, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return s;
}

// --- same rank count: bitwise ------------------------------------------------------------

/// Steps `interrupt_after` steps (mid-frame), checkpoints, drops the simulation, resumes a
/// fresh one from "latest" and runs it to the end; returns the resumed run's end state.
template <class Sim>
State InterruptedRun(const SceneConfig& scene, long interrupt_after) {
  {
    Sim first(PETSC_COMM_WORLD, scene);
    while (first.steps() < interrupt_after) first.AdvanceStep(nullptr);
    first.WriteCheckpoint();
  }
  Sim resumed(PETSC_COMM_WORLD, scene);
  const CheckpointHeader h = resumed.Restart("latest", false);
  EXPECT_EQ(h.step, interrupt_after);
  EXPECT_EQ(resumed.steps(), interrupt_after);
  return RunToEnd(resumed, scene);
}

TEST(Checkpoint, FemResumedMidFrameIsBitwiseTheUninterruptedRun) {
  const Folder dir("ckpt_fem");
  const SceneConfig scene = FemScene(dir);
  FemSimulation whole(PETSC_COMM_WORLD, scene);
  const State reference = RunToEnd(whole, scene);
  ASSERT_EQ(reference.steps, 8);
  EXPECT_GT(MaxAbs(reference.v), 0.1) << "the scene should move";
  ExpectBitwiseEqual(InterruptedRun<FemSimulation>(scene, 3), reference);
}

TEST(Checkpoint, FemDotResumedMidFrameIsBitwiseTheUninterruptedRun) {
  // DOT keeps nothing across steps but its subdomains, which the partition determines.
  const Folder dir("ckpt_fem_dot");
  const SceneConfig scene =
      FemScene(dir, {"solver.method=dot", "dot.subdomains_per_rank=2", "solver.cn_epsilon=1e-6"});
  FemSimulation whole(PETSC_COMM_WORLD, scene);
  const State reference = RunToEnd(whole, scene);
  ASSERT_EQ(reference.steps, 8);
  EXPECT_GT(MaxAbs(reference.v), 0.1) << "the scene should move";
  ExpectBitwiseEqual(InterruptedRun<FemSimulation>(scene, 3), reference);
}

TEST(Checkpoint, MpmResumedMidFrameIsBitwiseTheUninterruptedRun) {
  const Folder dir("ckpt_mpm");
  const SceneConfig scene = MpmScene(dir);
  MpmSimulation whole(PETSC_COMM_WORLD, scene);
  const State reference = RunToEnd(whole, scene);
  ASSERT_GE(reference.steps, 5) << "the test wants several steps per frame";
  ExpectBitwiseEqual(InterruptedRun<MpmSimulation>(scene, 3), reference);
}

TEST(Checkpoint, FemKeptStateRestoredContinuesBitwise) {
  // What a step abandoned after some of its halves leaves (Integrator::KeepState): the run
  // goes on from the restored state as if those halves had never been taken.
  const Folder dir("ckpt_fem_kept");
  const SceneConfig scene = FemScene(dir);
  FemSimulation whole(PETSC_COMM_WORLD, scene);
  const State reference = RunToEnd(whole, scene);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  sim.AdvanceStep(nullptr);
  const State before = StateOf(sim);
  sim.integrator().KeepState();
  sim.integrator().TryStep(0.0125);
  sim.integrator().TryStep(0.0125);
  ASSERT_EQ(sim.steps(), 3);
  sim.integrator().RestoreKeptState();
  ExpectBitwiseEqual(StateOf(sim), before);
  ExpectBitwiseEqual(RunToEnd(sim, scene), reference);
}

// --- another rank count: solver tolerance ---------------------------------------------------

/// World run checkpointed after `after` steps and resumed by rank 0 alone, and a run of
/// rank 0 alone checkpointed and resumed by the world; both against the world's
/// uninterrupted run.
template <class Sim>
void ResumeOnAnotherRankCount(const SceneConfig& scene, long after, double tolerance_x,
                              double tolerance_v) {
  Sim whole(PETSC_COMM_WORLD, scene);
  const State reference = RunToEnd(whole, scene);
  const std::string file = CheckpointPath(CheckpointDirectory(scene.output.directory), after);

  {  // world -> rank 0
    Sim first(PETSC_COMM_WORLD, scene);
    while (first.steps() < after) first.AdvanceStep(nullptr);
    EXPECT_EQ(first.WriteCheckpoint(), file);
  }
  State alone;
  if (Rank() == 0) {
    Sim resumed(PETSC_COMM_SELF, scene);
    resumed.Restart(file, false);
    alone = RunToEnd(resumed, scene);
  }
  alone = Broadcast(alone);
  EXPECT_EQ(alone.frame, reference.frame);
  EXPECT_LT(MaxDifference(alone.x, reference.x), tolerance_x) << "world -> 1 rank, positions (m)";
  EXPECT_LT(MaxDifference(alone.v, reference.v), tolerance_v) << "world -> 1 rank, velocities";

  if (Rank() == 0) {  // rank 0 -> world
    Sim first(PETSC_COMM_SELF, scene);
    while (first.steps() < after) first.AdvanceStep(nullptr);
    first.WriteCheckpoint();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  Sim resumed(PETSC_COMM_WORLD, scene);
  resumed.Restart(file, false);
  const State world = RunToEnd(resumed, scene);
  EXPECT_LT(MaxDifference(world.x, reference.x), tolerance_x) << "1 rank -> world, positions (m)";
  EXPECT_LT(MaxDifference(world.v, reference.v), tolerance_v) << "1 rank -> world, velocities";
}

TEST(Checkpoint, FemResumesOnAnotherRankCountToSolverTolerance) {
  const Folder dir("ckpt_fem_ranks");
  // cn_epsilon 1e-9: the same bounds as the FEM rank-invariance suite.
  ResumeOnAnotherRankCount<FemSimulation>(FemScene(dir), 3, 1e-6, 1e-5);
}

TEST(Checkpoint, MpmResumesOnAnotherRankCountToSolverTolerance) {
  // cn_epsilon 1e-9 here too; the differences seen are round-off (about 1e-14).
  const Folder dir("ckpt_mpm_ranks");
  ResumeOnAnotherRankCount<MpmSimulation>(MpmScene(dir), 3, 1e-6, 1e-5);
}

// --- damage -----------------------------------------------------------------------------

TEST(Checkpoint, DamagedNewestIsReportedAndThePreviousOneLoaded) {
  const Folder dir("ckpt_damage");
  const SceneConfig scene = MpmScene(dir);
  State at_2;
  {
    MpmSimulation sim(PETSC_COMM_WORLD, scene);
    while (sim.steps() < 2) sim.AdvanceStep(nullptr);
    sim.WriteCheckpoint();
    at_2 = StateOf(sim);
    while (sim.steps() < 4) sim.AdvanceStep(nullptr);
    sim.WriteCheckpoint();
  }
  const std::string newest = CheckpointPath(dir.Checkpoints(), 4);
  const std::string intact = dir.path() + "/intact.h5";
  if (Rank() == 0) fs::copy_file(newest, intact);
  const std::vector<std::pair<std::string, std::function<void()>>> damages = {
      {"truncated to half", [&] { fs::resize_file(newest, fs::file_size(newest) / 2); }},
      {"a flipped byte in the particle positions",
       [&] { FlipByte(newest, OffsetOfRow(newest, "/mpm/particles/x", 200, 3) + 5); }},
      {"a flipped byte in the superblock", [&] { FlipByte(newest, 20); }},
  };
  for (const auto& [what, damage] : damages) {
    SCOPED_TRACE(what);
    if (Rank() == 0) {
      fs::copy_file(intact, newest, fs::copy_options::overwrite_existing);
      fs::remove(newest + ".damaged");
      damage();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MpmSimulation resumed(PETSC_COMM_WORLD, scene);
    const CheckpointHeader h = resumed.Restart("latest", false);
    EXPECT_EQ(h.step, 2);
    ExpectBitwiseEqual(StateOf(resumed), at_2);
    EXPECT_TRUE(fs::exists(newest + ".damaged")) << "the damaged file is kept aside";
    EXPECT_FALSE(fs::exists(newest));
    MPI_Barrier(MPI_COMM_WORLD);
  }
  // With the only other checkpoint damaged too, nothing loads: an error, not step 0.
  if (Rank() == 0) {
    fs::copy_file(intact, newest, fs::copy_options::overwrite_existing);
    fs::resize_file(newest, 1000);
    const std::string older = CheckpointPath(dir.Checkpoints(), 2);
    fs::resize_file(older, fs::file_size(older) - 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MpmSimulation resumed(PETSC_COMM_WORLD, scene);
  ExpectRestartRefused(resumed, "every checkpoint in");
}

TEST(Checkpoint, ADamagedRowThatOneRankReadsFailsEveryRank) {
  const Folder dir("ckpt_rows");
  // The byte flipped is in the last rows, which only the last rank reads.
  const int64_t n = 30000;
  const RowRange rows = EvenRows(MPI_COMM_WORLD, n);
  std::vector<double> values(rows.count);
  for (int64_t i = 0; i < rows.count; ++i) values[i] = 0.5 * static_cast<double>(rows.offset + i);
  CheckpointHeader header;
  header.step = 7;
  header.scene_hash = SceneHash("");
  std::string path;
  {
    CheckpointWriter out(MPI_COMM_WORLD, dir.Checkpoints(), header);
    out.Write("/values", DistributedArray<double>{n, rows.offset, rows.count, 1, values.data()});
    path = out.Commit(2);
  }
  {
    const CheckpointReader in(MPI_COMM_WORLD, path);
    EXPECT_EQ(in.Read<double>("/values", rows), values) << "an intact file reads back exactly";
  }
  if (Rank() == 0) FlipByte(path, OffsetOfRow(path, "/values", n - 10, 1) + 3);
  MPI_Barrier(MPI_COMM_WORLD);
  const CheckpointReader in(MPI_COMM_WORLD, path);
  int threw = 0;
  try {
    in.Read<double>("/values", rows);
  } catch (const CheckpointDamaged& e) {
    threw = 1;
    EXPECT_NE(std::string(e.what()).find("/values"), std::string::npos) << e.what();
  }
  int everywhere = 0;
  MPI_Allreduce(&threw, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  EXPECT_EQ(everywhere, 1) << "every rank reports the damage, not only the one reading it";
}

TEST(Checkpoint, AWriteKilledHalfWayLeavesThePreviousCheckpointInUse) {
  const Folder dir("ckpt_killed");
  const SceneConfig scene = FemScene(dir);
  State at_2;
  std::string killed;
  {
    FemSimulation sim(PETSC_COMM_WORLD, scene);
    while (sim.steps() < 2) sim.AdvanceStep(nullptr);
    sim.WriteCheckpoint();
    at_2 = StateOf(sim);
    while (sim.steps() < 4) sim.AdvanceStep(nullptr);
    killed = sim.WriteCheckpoint();
  }
  // What kill -9 during the write of step 4 leaves: a partial <name>.tmp, no <name>.
  if (Rank() == 0) {
    fs::rename(killed, killed + ".tmp");
    fs::resize_file(killed + ".tmp", fs::file_size(killed + ".tmp") / 3);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  FemSimulation resumed(PETSC_COMM_WORLD, scene);
  EXPECT_EQ(resumed.Restart("latest", false).step, 2);
  ExpectBitwiseEqual(StateOf(resumed), at_2);
  EXPECT_EQ(ListCheckpoints(dir.Checkpoints()).size(), 1u);
  // The next complete checkpoint clears the leftover.
  resumed.AdvanceStep(nullptr);
  resumed.WriteCheckpoint();
  EXPECT_FALSE(fs::exists(killed + ".tmp"));
  EXPECT_EQ(ListCheckpoints(dir.Checkpoints()).size(), 2u);
}

TEST(Checkpoint, ResumingFromAnOlderFileAbandonsTheNewerCheckpoints) {
  const Folder dir("ckpt_older");
  const SceneConfig scene = FemScene(dir, {"output.checkpoints_kept=3"});
  {
    FemSimulation sim(PETSC_COMM_WORLD, scene);
    for (int k = 0; k < 4; ++k) {
      sim.AdvanceStep(nullptr);
      sim.WriteCheckpoint();
    }
  }
  const auto path = [&](int step) { return CheckpointPath(dir.Checkpoints(), step); };
  EXPECT_EQ(ListCheckpoints(dir.Checkpoints()), (std::vector<std::string>{path(4), path(3), path(2)}));
  FemSimulation resumed(PETSC_COMM_WORLD, scene);
  resumed.Restart(path(2), false);
  resumed.AdvanceStep(nullptr);
  resumed.WriteCheckpoint();  // step 3 again; step 4 belonged to the run abandoned
  EXPECT_EQ(ListCheckpoints(dir.Checkpoints()), (std::vector<std::string>{path(3), path(2)}));
}

// --- Run: signals, triggers, output -----------------------------------------------------

TEST(Checkpoint, SigtermStopsRunAfterTheStepWithALoadableCheckpoint) {
  const Folder dir("ckpt_sigterm");
  const SceneConfig scene = MpmScene(dir, {"output.checkpoint_every_steps=2"});
  RunOptions quiet;
  quiet.print = false;
  quiet.write_output = false;
  MpmSimulation whole(PETSC_COMM_WORLD, scene);
  ASSERT_EQ(whole.Run(quiet), RunOutcome::kFinished);
  const State reference = StateOf(whole);

  RunOptions options;
  options.print = false;
  options.after_step = [](long steps) {
    if (steps == 3 && Rank() == 0) std::raise(SIGTERM);  // one rank only, as a stray signal
  };
  State stopped;
  {
    MpmSimulation sim(PETSC_COMM_WORLD, scene);
    EXPECT_EQ(sim.Run(options), RunOutcome::kStopped);
    EXPECT_EQ(sim.steps(), 3) << "the step under way is finished, no further one begun";
    stopped = StateOf(sim);
  }
  const std::vector<std::string> files = ListCheckpoints(dir.Checkpoints());
  ASSERT_EQ(files.size(), 2u) << "step 2 (every 2 steps) and step 3 (the signal)";
  EXPECT_EQ(files[0], CheckpointPath(dir.Checkpoints(), 3));
  {
    MpmSimulation loaded(PETSC_COMM_WORLD, scene);
    loaded.Restart("latest", false);
    ExpectBitwiseEqual(StateOf(loaded), stopped);
  }

  RunOptions resume;
  resume.print = false;
  resume.restart = "latest";
  MpmSimulation resumed(PETSC_COMM_WORLD, scene);
  ASSERT_EQ(resumed.Run(resume), RunOutcome::kFinished);
  ExpectBitwiseEqual(StateOf(resumed), reference);

  // stats.csv: a header, then steps 1..N once each, in order.
  std::istringstream csv(test::ReadFile(dir.path() + "/out/stats.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("step,", 0), 0u);
  long expected = 1;
  while (std::getline(csv, line)) EXPECT_EQ(std::stol(line), expected++) << line;
  EXPECT_EQ(expected - 1, reference.steps);
  // The .xdmf lists every frame once, with the frames of the first run kept.
  const std::string xdmf = test::ReadFile(dir.path() + "/out/" + scene.name + ".xdmf");
  const std::regex time("<Time Value=");
  EXPECT_EQ(std::distance(std::sregex_iterator(xdmf.begin(), xdmf.end(), time), std::sregex_iterator()),
            scene.time.frames + 1);
}

TEST(Checkpoint, RestartIsRefusedWithoutACheckpointOrForAnotherScene) {
  const Folder dir("ckpt_refuse");
  const SceneConfig scene = FemScene(dir);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  ExpectRestartRefused(sim, "no checkpoint in");
  sim.AdvanceStep(nullptr);
  sim.WriteCheckpoint();

  const SceneConfig changed = FemScene(dir, {"bodies.0.material.E=2.0e5"});
  FemSimulation other(PETSC_COMM_WORLD, changed);
  ExpectRestartRefused(other, "--allow-scene-change");
  EXPECT_EQ(other.Restart("latest", true).step, 1);
  EXPECT_EQ(other.steps(), 1);
}

}  // namespace
}  // namespace optistep
