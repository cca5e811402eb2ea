// integrator: async (Schroeder, Kwatra, Zheng, Fedkiw 2010, Secs. 4-5;
// integrators/FemAsync.hpp) on 1, 2 and 4 ranks:
//  - free fall is the exact parabola x0 + v0 t + g t^2 / 2 (gravity on every node in every
//    substep; the interior's forces vanish on a rigid motion);
//  - an elastic ball (tests/data/sphere_coarse: 73 nodes, 284 tets of which 204 fully implicit,
//    radius 0.5 m; made as scripts/make-sphere-mesh.py makes sphere20k but from a
//    once-subdivided icosphere and `tetgen -pq1.5a1e-3YQ`, -Y: no nodes added on the surface) dropped 0.1 m onto a penalty ground, to t = 0.4 s (through impact,
//    into the rebound), against newton (backward_euler) and semi_implicit: the ground exerts
//    no horizontal force, so all keep zero horizontal momentum (to the minimizer's net-force
//    termination, 1e-3 M a); the vertical momentum balance J = P(T) - P(0) - M g T is the
//    ground's impulse, above M v_i (v_i = sqrt(2 g 0.1), the fall stopped and pushed back),
//    and async's is newton's (backward Euler everywhere) to 3% of M v_i (frame; paper 8%),
//    below semi_implicit's (the least numerical dissipation); no node below the
//    ground by more than the depth at which the lightest node's penalty energy k m d^3 would
//    hold the whole ball's kinetic energy at impact (an energy bound);
//  - the same trajectory on any ranks (to round-off), bitwise on the same ranks; a run
//    resumed from a mid-frame checkpoint is bitwise the uninterrupted one;
//  - the frames hold the per-tet region (80 surface-layer tets of 284, counted apart);
//  - async.coupling: paper: free fall exact over 14 substeps (interior-only nodes
//    included), the ball's ground impulse within 8% of M v_i of newton's and below
//    semi_implicit's, on any ranks and resumed bitwise;
//  - a mesh without interior tets is an InputError naming async.surface_layers.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "FemRunChecks.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "integrators/FemAsync.hpp"

namespace optistep {
namespace {

using test::MakeScene;
using test::SharedTempDir;
using test::WriteBoxMesh;

TEST(Async, FreeFallIsExact) {
  const SceneConfig scene = test::FreeFallScene("async_fall", "async", 6, 4, 4);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const auto& async = dynamic_cast<const FemAsync&>(sim.integrator());
  EXPECT_GT(0.01 / async.SubstepLimit(), 2.0) << "the CFL limit should cut the 0.01 s steps";
  test::ExpectFreeFall(sim, scene, test::kFallVelocity, test::kFallGravity);
}

/// The coarse ball 0.1 m above a penalty ground (k = 1e6), frames of 1/100 s, to t = 0.4 s
/// (impact at 0.143 s).
SceneConfig BallScene(const std::string& tag, const std::string& integrator,
                      const std::vector<std::string>& overrides = {}) {
  const std::string dir = SharedTempDir(tag);
  for (const char* ext : {"node", "ele"})
    std::filesystem::copy_file(test::SourcePath(std::string("tests/data/sphere_coarse.") + ext),
                               dir + "/ball." + ext, std::filesystem::copy_options::overwrite_existing);
  return MakeScene(dir + "/ball.yaml", R"(
integrator: )" + integrator + R"(
gravity: [0, -9.81, 0]
time: {frame_dt: 0.01, frames: 40}
bodies:
  - mesh: ball.node
    transform: {translate: [0, 0.6, 0]}
    material: {model: fixed_corotated, E: 1.0e5, nu: 0.3, density: 1000}
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], stiffness: 1.0e6}
)", overrides);
}

/// Collective: total mass (kg) and momentum (kg m/s).
std::pair<double, Vec3> Momentum(FemSimulation& sim) {
  const FemModel& model = sim.model();
  const PetscScalar* v = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.velocities(), &v));
  double s[4] = {0, 0, 0, 0};
  for (PetscInt l = 0; l < model.mesh().n_owned; ++l) {
    const double m = model.Mass(static_cast<int>(l));
    s[0] += m;
    for (int d = 0; d < 3; ++d) s[1 + d] += m * v[3 * l + d];
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.velocities(), &v));
  MPI_Allreduce(MPI_IN_PLACE, s, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return {s[0], Vec3(s[1], s[2], s[3])};
}

struct Drop {
  Vec3 impulse;       ///< P(T) - P(0) - M g T, N s
  double lowest;      ///< lowest node height over all steps, m
  double mass;        ///< kg
  double lightest;    ///< the lightest node's mass, kg
  long steps;
};

Drop RunDrop(const SceneConfig& scene) {
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const auto [mass, p0] = Momentum(sim);
  Drop out{Vec3::Zero(), INFINITY, mass, INFINITY, 0};
  for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l)
    out.lightest = std::min(out.lightest, sim.model().Mass(static_cast<int>(l)));
  MPI_Allreduce(MPI_IN_PLACE, &out.lightest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  while (sim.frame() < scene.time.frames) {
    sim.AdvanceStep(nullptr);
    const std::vector<double> x = sim.GatherPositions();
    for (size_t i = 1; i < x.size(); i += 3) out.lowest = std::min(out.lowest, x[i]);
  }
  const Vec3 g(0, -9.81, 0);
  out.impulse = Momentum(sim).second - p0 - mass * g * sim.time();
  out.steps = sim.steps();
  return out;
}

TEST(Async, BallImpactMomentumBetweenNewtonAndSemiImplicitAboveTheGround) {
  const Drop async = RunDrop(BallScene("async_ball", "async"));
  const Drop paper = RunDrop(BallScene("async_ball_paper", "async", {"async.coupling=paper"}));
  const Drop newton = RunDrop(BallScene("async_ball_newton", "backward_euler"));
  const Drop semi = RunDrop(BallScene("async_ball_semi", "semi_implicit"));
  const double v_impact = std::sqrt(2.0 * 9.81 * 0.1), M = async.mass;
  const double depth = std::cbrt(M * v_impact * v_impact / (2.0 * 1.0e6 * async.lightest));
  if (test::Rank() == 0)
    std::printf("[ ball ] M %.4f kg, M v_i %.4f N s; ground impulse P(T) - P(0) - M g T (N s): "
                "async (%.3e, %.4f, %.3e), newton (%.3e, %.4f, %.3e), semi_implicit (%.3e, %.4f, "
                "%.3e); async - newton %.4f N s (%.2f%% of M v_i); lowest node: async %.4e m, "
                "newton %.4e m, semi_implicit %.4e m, energy bound %.4e m\n",
                M, M * v_impact, async.impulse[0], async.impulse[1], async.impulse[2],
                newton.impulse[0], newton.impulse[1], newton.impulse[2], semi.impulse[0],
                semi.impulse[1], semi.impulse[2], async.impulse[1] - newton.impulse[1],
                100.0 * (async.impulse[1] - newton.impulse[1]) / (M * v_impact), async.lowest,
                newton.lowest, semi.lowest, depth);
  if (test::Rank() == 0)
    std::printf("[ ball ] async.coupling paper: ground impulse (%.3e, %.4f, %.3e) N s, paper - "
                "newton %.4f N s (%.2f%% of M v_i), lowest node %.4e m\n",
                paper.impulse[0], paper.impulse[1], paper.impulse[2], paper.impulse[1] - newton.impulse[1],
                100.0 * (paper.impulse[1] - newton.impulse[1]) / (M * v_impact), paper.lowest);
  for (const Drop* d : {&async, &paper, &newton, &semi}) {
    // Newton stops when the net force of its residual is below 1e-3 M a (rigid epsilon).
    EXPECT_LT(std::abs(d->impulse[0]), 1e-3 * M * v_impact) << "no horizontal force on the ball";
    EXPECT_LT(std::abs(d->impulse[2]), 1e-3 * M * v_impact) << "no horizontal force on the ball";
    EXPECT_GT(d->impulse[1], M * v_impact) << "the ground stops the fall and pushes back";
    EXPECT_GT(d->lowest, -depth) << "m below the ground";
  }
  // The one-element surface layer (80 tets) semi-implicit, the rest backward Euler: the
  // rebound is newton's to 3% of M v_i (frame) and 8% (paper), below semi_implicit's.
  EXPECT_LT(std::abs(async.impulse[1] - newton.impulse[1]), 0.03 * M * v_impact);
  EXPECT_LT(std::abs(paper.impulse[1] - newton.impulse[1]), 0.08 * M * v_impact);
  EXPECT_LT(async.impulse[1], semi.impulse[1]);
  EXPECT_LT(paper.impulse[1], semi.impulse[1]);
}

// async.coupling: paper (FemAsync.hpp): one step of Dt = 0.01 s (n >= 3 substeps) from
// the rest shape thrown with v0. Derived in FemAsync.hpp: with the interior-only nodes
// placed at x^n + Dt (v^n + v_B) / 2 every node is on the parabola x0 + v0 Dt + g Dt^2 / 2
// and every velocity v0 + g Dt, to 1e-10; the paper's placement x^n + Dt v_H would put the
// interior-only nodes Dt (Dt - h) g / 2 beyond it (printed; it is no assertion).
TEST(Async, PaperCouplingFreeFallIsExact) {
  const SceneConfig scene = test::FreeFallScene(
      "async_paper_fall", "async", 6, 4, 4, {"async.coupling=paper", "time.frame_dt=0.01", "time.frames=1"});
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const auto& async = dynamic_cast<const FemAsync&>(sim.integrator());
  long interior_only = 0;
  for (char c : async.interior_only()) interior_only += c;
  MPI_Allreduce(MPI_IN_PLACE, &interior_only, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(interior_only, 0) << "the box should have nodes in no surface-layer tet";
  const double n = std::ceil(0.01 / async.SubstepLimit()), h = 0.01 / n;
  ASSERT_GE(n, 3.0) << "the CFL limit should cut the step";
  if (test::Rank() == 0)
    std::printf("[ paper fall ] %g substeps, %ld interior-only nodes; the paper's placement "
                "would put them Dt (Dt - h) g / 2 = %.4e m beyond the parabola\n",
                n, interior_only, 0.5 * 0.01 * (0.01 - h) * 9.81);
  test::ExpectFreeFall(sim, scene, test::kFallVelocity, test::kFallGravity);
  EXPECT_EQ(async.StatsValues().at(0), n);
}

/// Through impact: frames 14 to 17 of the drop (t 0.14 s to 0.18 s), 2 steps a frame.
SceneConfig ImpactScene(const std::string& tag, const std::string& coupling = "frame") {
  return BallScene(tag, "async", {"time.frames=4", "time.dt=0.005", "async.epsilon=0.25",
                                  "bodies.0.initial_velocity=[0, -1.4, 0]",
                                  "bodies.0.transform.translate=[0, 0.505, 0]",
                                  "async.coupling=" + coupling});
}

TEST(Async, SameTrajectoryOnAnyRanksBitwiseOnTheSame) {
  // The coupled step's Newton solve stops at its tolerance (characteristic norm 1e-5),
  // which a different rank count reaches by a different path.
  test::ExpectSameOnAnyRanks(ImpactScene("async_ranks"), 1e-6);
}

TEST(Async, ResumedMidFrameIsBitwiseTheUninterruptedRun) {
  test::ExpectResumedBitwise(ImpactScene("async_restart"), 3, 1);
}

TEST(Async, PaperCouplingSameOnAnyRanksAndResumedBitwise) {
  test::ExpectSameOnAnyRanks(ImpactScene("async_paper_ranks", "paper"), 1e-6);
  test::ExpectResumedBitwise(ImpactScene("async_paper_restart", "paper"), 3, 1);
}

TEST(Async, FramesHoldTheRegionPerTet) {
  // 80 of the ball's 284 tets have three nodes on its surface (faces of one tet), counted from
  // tests/data/sphere_coarse.ele by a separate script; 204 are fully implicit.
  const SceneConfig scene = BallScene("async_frames", "async", {"time.frames=1"});
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  RunOptions options;
  options.print = false;
  ASSERT_EQ(sim.Run(options), RunOutcome::kFinished);
  if (test::Rank() != 0) return;
  std::string frame;
  for (const auto& entry : std::filesystem::directory_iterator(scene.output.directory + "/frames"))
    if (entry.path().string().find("000001.h5") != std::string::npos) frame = entry.path().string();
  ASSERT_FALSE(frame.empty());
  const hid_t file = H5Fopen(frame.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0) << frame;
  const hid_t dataset = H5Dopen2(file, "/async_region", H5P_DEFAULT);
  ASSERT_GE(dataset, 0) << frame << " has no /async_region";
  std::vector<double> region(284, -1.0);
  const hid_t space = H5Dget_space(dataset);
  EXPECT_EQ(H5Sget_simple_extent_npoints(space), 284);
  H5Sclose(space);
  H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, region.data());
  H5Dclose(dataset);
  H5Fclose(file);
  long ones = 0, zeros = 0;
  for (double r : region) (r == 1.0 ? ones : zeros) += (r == 1.0 || r == 0.0);
  EXPECT_EQ(ones, 80);
  EXPECT_EQ(zeros, 204);
}

TEST(Async, NoInteriorTetsIsAnInputError) {
  const std::string dir = SharedTempDir("async_thin");
  WriteBoxMesh(dir + "/slab", 4, 1, 4, Vec3(1.0, 0.25, 1.0));
  const SceneConfig scene = MakeScene(dir + "/slab.yaml", R"(
integrator: async
time: {dt: 0.01, frame_dt: 0.01, frames: 1}
bodies:
  - mesh: slab.node
    material: {E: 1.0e5, nu: 0.3, density: 1000}
)");
  try {
    FemSimulation sim(PETSC_COMM_WORLD, scene);
    ADD_FAILURE() << "a slab one cell thick has no interior tet (every tet has a face on the surface)";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("async.surface_layers"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("semi_implicit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace optistep
