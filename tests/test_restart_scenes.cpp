// Restart of every scene in configs/, on 1, 2 and 4 ranks. Each scene is shrunk by --set
// overrides (kSmall below: 2 frames of 2 or more steps, coarser MPM grids) and run twice:
//  - uninterrupted;
//  - in three slices, as a walltime-limited job that was first asked for one frame and
//    then extended: (1) the scene with time.frames = 1, checkpointing every step, run to
//    its end; (2) the whole scene resumed from that checkpoint (--restart latest
//    --allow-scene-change: the frame count changed) and stopped by SIGTERM at a step
//    inside frame 1; (3) the whole scene resumed again, to its end.
// The sliced run must end bitwise equal to the uninterrupted one: every dataset of a
// checkpoint written at the end (the whole state: positions, velocities; MPM's C, F,
// plastic state, particle layout and block map; t, step, frame) and of every frame file,
// and every stats.csv value but the timings (wall_s, t_*). HOT's coarse twisting bar is
// run so once more with solver.method: hot.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "ScopedOptions.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "app/MpmSimulation.hpp"
#include "app/ParticleSimulation.hpp"
#include "io/Checkpoint.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;
using test::Rank;

/// Overrides that make each scene of configs/ a few steps long: 2 frames of at least 2
/// steps (time.dt below the frame dt, or, for the twisting bars, a CFL limit below it, so
/// the controller's re-split of the frame after every step is exercised too).
const std::map<std::string, std::vector<std::string>> kSmall = {
    {"armadillo_drop", {"time.frames=2", "time.frame_rate=480", "time.dt=0.0010416666666666667"}},
    // Lowered to land on the slip ground within the run.
    {"armadillo_drop_mpm",
     {"time.frames=2", "time.dt=0.020833333333333332", "mpm.dx=0.08",
      "bodies.0.transform.translate=[0, 0.205, 0]"}},
    // DOT's reference scene, run by DOT (2 subdomains per rank): its restart is covered on a
    // real mesh too.
    {"dot_bar17k_twist",
     {"time.frames=2", "time.frame_rate=160", "time.dt=0.003125", "solver.method=dot",
      "dot.subdomains_per_rank=2"}},
    // Frames of 1/480 s: CG takes 40 iterations per step instead of 670 at 1/48 s.
    {"elephant_drop", {"time.frames=2", "time.frame_rate=480", "time.dt=0.0010416666666666667"}},
    // XPBD: only x and v cross steps, so the checkpoint needs nothing new.
    {"elephant_drop_xpbd",
     {"time.frames=2", "time.frame_rate=480", "time.dt=0.0010416666666666667", "xpbd.substeps=20"}},
    // CFL: 0.1 * 0.06 m / 0.53 m/s (the turning clamp's rim) = 0.011 s, 2 steps per frame.
    // XPBD chains: 2 steps of 100 substeps per frame.
    {"hanging_chain", {"time.frames=2", "time.dt=0.008333333333333333"}},
    {"hanging_cloth", {"time.frames=2", "time.dt=0.008333333333333333"}},
    {"hot_twisting_bar", {"time.frames=2", "mpm.dx=0.06", "mpm.cfl=0.1"}},
    {"hot_twisting_bar_coarse", {"time.frames=2", "mpm.dx=0.04", "mpm.cfl=0.15"}},
    // Loads and initial conditions: the ramps and the table are functions of t alone.
    {"loaded_bar", {"time.frames=2", "time.dt=0.020833333333333332"}},
    // Friction as a potential; quasi-static load steps with the ramp's
    // length given, so the shortened first slice follows the same load path.
    {"block_on_slope", {"time.frames=2", "time.dt=0.020833333333333332"}},
    {"cantilever_quasi_static", {"time.frames=2", "time.dt=0.5"}},
    // Constraint collisions: 5 mm above the ground, it lands in the first frame;
    // the active set is registered afresh in every Newton iteration, nothing to save.
    {"constraint_ball_drop",
     {"time.frames=2", "time.dt=0.020833333333333332", "bodies.0.transform.translate=[0, 0.105, 0]"}},
    // Frames of 1/120 s, CFL 0.6 * 0.04 m / 4 m/s: 2 steps each; placed 2 cm from the wall.
    {"snowball",
     {"time.frames=2", "time.frame_rate=120", "mpm.dx=0.04", "bodies.0.shape.center=[0.38, 0.8, 0]"}},
    {"stretched_cube", {"time.frames=2", "time.dt=0.020833333333333332"}},
    // Run by semi_implicit: frames of 1/2000 s, 2 CFL steps of 2.5e-4 s each (the limit 2.7e-4 s).
    {"sphere_drop", {"time.frames=2", "time.frame_rate=2000", "integrator=semi_implicit"}},
    // Run by async: steps of 1/960 s, 4 surface-layer substeps and a coupled Newton step each.
    {"sphere_drop_sliver",
     {"time.frames=2", "time.frame_rate=480", "time.dt=0.0010416666666666667", "integrator=async"}},
    {"twisted_bar", {"time.frames=2", "time.dt=0.0125"}},
    // Scripted FEM collision objects: the object's pose is a function of t, so
    // nothing new is saved. Striker and tori placed to touch within the first frame.
    {"box_stack_strike",
     {"time.frames=2", "collision_objects.1.min=[-0.12, 0.12, 0]", "collision_objects.1.max=[-0.02, 0.22, 0.1]"}},
    // Scaled by 0.0071 instead of 0.0066: the hands reach 0.7 mm into both walls of
    // cubes from the first step; self-contact is on and crosses the restart.
    {"armadillo_squeeze",
     {"time.frames=2", "time.frame_rate=480", "time.dt=0.0010416666666666667",
      "bodies.0.transform.scale=0.0071"}},
    {"tori_in_bowl", {"time.frames=2", "bodies.0.transform.translate=[0, 0.19, 0]"}},
    {"torus_through_hole", {"time.frames=2"}},
    // Lowered to land on its rim within the first frame.
    {"torus_self_fold", {"time.frames=2", "bodies.0.transform.translate=[0, 0.145, 0]"}},
    // Placed 2 cm apart: they touch in the first step, self-contact crosses the restart.
    {"two_spheres",
     {"time.frames=2", "time.dt=0.020833333333333332", "bodies.0.transform.translate=[-0.11, 0, 0]",
      "bodies.1.transform.translate=[0.11, 0.02, 0]"}},
};

/// The scene configs/<name>.yaml, shrunk, writing to <dir>/out.
SceneConfig SmallScene(const std::string& name, const std::string& dir,
                       const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = kSmall.at(name);
  overrides.push_back("output.directory=" + dir + "/out");
  overrides.insert(overrides.end(), more.begin(), more.end());
  return ReadSceneConfig(test::SourcePath("configs/" + name + ".yaml"), overrides);
}

std::unique_ptr<Simulation> MakeSimulation(const SceneConfig& scene) {
  if (scene.discretization == Discretization::kMpm) return std::make_unique<MpmSimulation>(PETSC_COMM_WORLD, scene);
  if (scene.discretization == Discretization::kParticles)
    return std::make_unique<ParticleSimulation>(PETSC_COMM_WORLD, scene);
  return std::make_unique<FemSimulation>(PETSC_COMM_WORLD, scene);
}

/// Runs scene with options; stops it by SIGTERM after step stop_after (0: never); returns
/// the outcome and, per whole step taken (its halved pieces count as steps too), the step
/// count and the frame count after it.
RunOutcome RunScene(const SceneConfig& scene, RunOptions options, long stop_after,
                    std::vector<std::pair<long, int>>* frame_after_step = nullptr,
                    bool final_checkpoint = false) {
  std::unique_ptr<Simulation> sim = MakeSimulation(scene);
  options.print = false;
  options.after_step = [&](long steps) {
    if (frame_after_step) frame_after_step->emplace_back(steps, sim->frame());
    // One rank only, as a stray signal would be; the schedule agrees on it.
    if (steps == stop_after && Rank() == 0) std::raise(SIGTERM);
  };
  const RunOutcome outcome = sim->Run(options);
  if (final_checkpoint) sim->WriteCheckpoint();
  return outcome;
}

// --- comparing files bitwise (rank 0, serial HDF5) ------------------------------------------

/// The raw bytes of every dataset in an HDF5 file, by path.
std::map<std::string, std::vector<char>> Datasets(const std::string& path) {
  std::map<std::string, std::vector<char>> out;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return out;
  auto visit = [](hid_t object, const char* name, const H5O_info_t* info, void* data) -> herr_t {
    if (info->type != H5O_TYPE_DATASET) return 0;
    const hid_t dataset = H5Dopen2(object, name, H5P_DEFAULT);
    const hid_t type = H5Dget_type(dataset);
    const hid_t space = H5Dget_space(dataset);
    std::vector<char> bytes(H5Tget_size(type) * static_cast<size_t>(H5Sget_simple_extent_npoints(space)));
    H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data());
    (*static_cast<std::map<std::string, std::vector<char>>*>(data))[name] = std::move(bytes);
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(dataset);
    return 0;
  };
  H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, visit, &out, H5O_INFO_BASIC);
  H5Fclose(file);
  return out;
}

/// Rank 0: every dataset of the two files is present in both and equal byte for byte.
void ExpectSameDatasets(const std::string& a, const std::string& b) {
  if (Rank() != 0) return;
  const auto left = Datasets(a), right = Datasets(b);
  ASSERT_FALSE(left.empty()) << a;
  std::ostringstream differing;
  for (const auto& [name, bytes] : left) {
    const auto it = right.find(name);
    if (it == right.end() || it->second != bytes) differing << " " << name;
  }
  EXPECT_EQ(left.size(), right.size()) << a << " vs " << b;
  EXPECT_EQ(differing.str(), "") << "differ between " << a << " and " << b;
}

/// Rank 0: the checkpoints' root attributes that are state (not the scene text, which
/// names the output folder) are equal.
void ExpectSameClock(const std::string& a, const std::string& b) {
  if (Rank() != 0) return;
  const CheckpointReader left(PETSC_COMM_SELF, a), right(PETSC_COMM_SELF, b);
  const double t_left = left.header().time, t_right = right.header().time;
  EXPECT_EQ(std::memcmp(&t_left, &t_right, sizeof(double)), 0) << t_left << " s vs " << t_right << " s";
  EXPECT_EQ(left.header().step, right.header().step);
  EXPECT_EQ(left.header().frame, right.header().frame);
}

/// stats.csv without the timing columns (wall_s, t_*), one string per row.
std::vector<std::string> StatsValues(const std::string& path) {
  std::istringstream csv(test::ReadFile(path));
  std::string line;
  std::vector<bool> keep;
  std::vector<std::string> rows;
  while (std::getline(csv, line)) {
    std::istringstream cells(line);
    std::string cell, row;
    for (size_t c = 0; std::getline(cells, cell, ','); ++c) {
      if (rows.empty()) keep.push_back(cell != "wall_s" && cell.rfind("t_", 0) != 0);
      if (c < keep.size() && keep[c]) row += cell + ",";
    }
    rows.push_back(row);
  }
  return rows;
}

/// The scene configs/<name>.yaml, shrunk and changed by `more`, run whole and in three
/// slices in a temporary folder named after `tag`: the slices end bitwise as the whole run.
void ExpectSlicedRunBitwiseTheUninterruptedOne(const std::string& name, const std::string& tag,
                                               const std::vector<std::string>& more = {}) {
  const std::string dir = test::SharedTempDir("restart_" + tag);
  const std::string whole_dir = dir + "/whole", sliced_dir = dir + "/sliced";
  const auto with = [&](std::vector<std::string> overrides) {
    overrides.insert(overrides.begin(), more.begin(), more.end());
    return overrides;
  };

  const SceneConfig whole = SmallScene(name, whole_dir, more);
  RunOptions options;
  std::vector<std::pair<long, int>> frame_after_step;
  ASSERT_EQ(RunScene(whole, options, 0, &frame_after_step, true), RunOutcome::kFinished);
  // Slice 2 stops at the first step of frame 1 that does not end it.
  long stop = 0;
  for (size_t k = 1; k + 1 < frame_after_step.size() && stop == 0; ++k)
    if (frame_after_step[k - 1].second == 1 && frame_after_step[k].second == 1)
      stop = frame_after_step[k].first;
  ASSERT_GT(stop, 0) << name << ": frame 1 has a single step; shrink time.dt in kSmall";

  const SceneConfig first = SmallScene(name, sliced_dir, with({"time.frames=1", "output.checkpoint_every_steps=1"}));
  EXPECT_EQ(RunScene(first, options, 0), RunOutcome::kFinished);
  const SceneConfig sliced = SmallScene(name, sliced_dir, more);
  options.restart = "latest";
  options.allow_scene_change = true;
  EXPECT_EQ(RunScene(sliced, options, stop), RunOutcome::kStopped);
  options.allow_scene_change = false;
  EXPECT_EQ(RunScene(sliced, options, 0, nullptr, true), RunOutcome::kFinished);

  const auto last_checkpoint = [](const SceneConfig& s) {
    return ListCheckpoints(CheckpointDirectory(s.output.directory)).at(0);
  };
  ExpectSameClock(last_checkpoint(whole), last_checkpoint(sliced));
  ExpectSameDatasets(last_checkpoint(whole), last_checkpoint(sliced));
  for (int f = 0; f <= whole.time.frames; ++f) {
    char frame[256];
    std::snprintf(frame, sizeof frame, "/out/frames/%s_%06d.h5", whole.name.c_str(), f);
    ExpectSameDatasets(whole_dir + frame, sliced_dir + frame);
  }
  EXPECT_EQ(StatsValues(sliced_dir + "/out/stats.csv"), StatsValues(whole_dir + "/out/stats.csv"));
  EXPECT_EQ(StatsValues(whole_dir + "/out/stats.csv").size(),
            static_cast<size_t>(frame_after_step.back().first) + 1);
}

class RestartScene : public ::testing::TestWithParam<std::string> {};

TEST_P(RestartScene, SlicedRunIsBitwiseTheUninterruptedOne) {
  ExpectSlicedRunBitwiseTheUninterruptedOne(GetParam(), GetParam());
}

// HOT: the L-BFGS history and the V-cycle's hierarchy start afresh every step,
// so a checkpoint needs nothing new to resume a HOT run bitwise.
TEST(RestartScenes, HotTwistingBarSlicedRunIsBitwiseTheUninterruptedOne) {
  ExpectSlicedRunBitwiseTheUninterruptedOne("hot_twisting_bar_coarse", "hot_twisting_bar_coarse_hot",
                                            {"solver.method=hot"});
}

// DOT with factors lagged over 3 steps (-dot_refactor_every 3): the checkpoint of step 2
// holds the factors' Hessian, point and counters (SubdomainInitializer::SaveState), from
// which the resumed step 3 factors the same matrices; step 4 refactors. Defaults otherwise
// (sized subdomains, coarse space, refresh).
TEST(RestartScenes, DotWithLaggedFactorsSlicedRunIsBitwiseTheUninterruptedOne) {
  const test::ScopedOptions lag({{std::string("-dot_refactor_every"), std::string("3")}});
  ExpectSlicedRunBitwiseTheUninterruptedOne("twisted_bar", "twisted_bar_dot_lagged",
                                            {"solver.method=dot"});
}

// Newton preconditioned by GAMG, whose aggregates and interpolation are kept from a
// step's first Newton iteration for its later ones (NewtonMinimizer): built afresh in
// every step, so the resumed step takes the same preconditioners. Two steps of two or
// more Newton iterations each, the second slice resumed inside frame 1. On 3 or more
// ranks PETSc's GAMG is not bitwise repeatable from run to run (docs/methods/newton.md).
TEST(RestartScenes, TwistedBarWithGamgSlicedRunIsBitwiseTheUninterruptedOne) {
  if (test::Size() > 2) GTEST_SKIP() << "GAMG repeats bitwise on 1 and 2 ranks only";
  const test::ScopedOptions gamg({{std::string("-newton_pc_type"), std::string("gamg")}});
  ExpectSlicedRunBitwiseTheUninterruptedOne("twisted_bar", "twisted_bar_gamg", {});
}

// XPBD's Jacobi order and depenetration speed limit: lambda and the Jacobi sums
// start afresh every substep, the limit reads x_prev of the substep: nothing new to save.
TEST(RestartScenes, ElephantXpbdJacobiSlicedRunIsBitwiseTheUninterruptedOne) {
  ExpectSlicedRunBitwiseTheUninterruptedOne("elephant_drop_xpbd", "elephant_drop_xpbd_jacobi",
                                            {"xpbd.order=jacobi", "xpbd.max_depenetration_speed=1"});
}

std::vector<std::string> SceneNames() {
  std::vector<std::string> names;
  for (const auto& [name, overrides] : kSmall) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Configs, RestartScene, ::testing::ValuesIn(SceneNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

TEST(RestartScenes, EveryConfigIsCovered) {
  for (const auto& entry : fs::directory_iterator(test::SourcePath("configs")))
    if (entry.path().extension() == ".yaml")
      EXPECT_EQ(kSmall.count(entry.path().stem().string()), 1u)
          << entry.path() << " has no entry in kSmall of " << __FILE__;
}

}  // namespace
}  // namespace optistep
