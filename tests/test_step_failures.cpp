// What ends a time step as failed rather than the run as crashed or silently wrong: a
// PETSc error inside a step's solve (a failed try, retried with dt/2, StepFailure at
// worst), and a state with an inverted or flat tet or a non-finite derived field (a failed
// step: no frame holds one). On 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ScopedOptions.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "app/MpmSimulation.hpp"
#include "integrators/Integrator.hpp"

namespace optistep {
namespace {

/// A 0.2 m box of fixed corotated rubber (3 x 3 x 3 hexes) 1 cm above the ground plane,
/// thrown at it at 100 m/s, frames of 1/24 s in one step each; `method` is the ground's
/// collision method (constraint or penalty).
SceneConfig ImpactScene(const std::string& tag, const std::string& method) {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/box", 3, 3, 3, Vec3(0.2, 0.2, 0.2));
  return test::MakeScene(dir + "/impact.yaml", R"(time: {frame_rate: 24, frames: 3}
bodies:
  - mesh: box.node
    transform: {translate: [0, 0.01, 0]}
    material: {model: fixed_corotated, E: 1.0e5, nu: 0.3, density: 1000}
    initial_velocity: [1, -100, 0]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], friction: 0.3, method: )" + method + R"(}
output: {directory: out}
)");
}

bool AllFinite(const std::vector<double>& values) {
  for (double v : values)
    if (!std::isfinite(v)) return false;
  return true;
}

/// "what [remedy]" of the StepFailure that ends sim's next frame, or "" if the frame is
/// taken. The remedy is said once, apart from what failed: what() names no key to try.
template <class Simulation>
std::string FrameFailure(Simulation& sim) {
  try {
    sim.AdvanceFrame(nullptr);
  } catch (const StepFailure& e) {
    EXPECT_EQ(std::string(e.what()).find("try "), std::string::npos) << e.what();
    return std::string(e.what()) + " [" + e.remedy() + "]";
  }
  return "";
}

/// Runs the impact; after every frame, positions, velocities, det F and von Mises (the
/// frame's fields) are finite and no tet is inverted. Returns the StepFailure's message,
/// or "" if every frame was taken.
std::string RunImpact(const SceneConfig& scene) {
  FemSimulation sim(MPI_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) {
    const std::string failure = FrameFailure(sim);
    if (!failure.empty()) return failure;
    SCOPED_TRACE("frame " + std::to_string(f + 1));
    EXPECT_TRUE(AllFinite(sim.GatherPositions()));
    EXPECT_TRUE(AllFinite(sim.GatherVelocities()));
    EXPECT_EQ(sim.CheckState(), "");
  }
  return "";
}

// The constraint ground projects the nodes that pass it onto its plane: at 100 m/s the
// four nodes of a tet can land there together, a flat tet (det F = 0) whose Cauchy stress,
// P F^T / J, is 0/0 in the frame's von_mises. Such a state is a failed step: the run either
// gets through with smaller steps or ends with StepFailure naming the flat tets, never with
// a non-finite frame field.
TEST(FastImpact, ConstraintGroundLeavesNoNonFiniteFrameField) {
  const std::string failure = RunImpact(ImpactScene("impact_constraint", "constraint"));
  if (!failure.empty()) {
    EXPECT_NE(failure.find("integrator backward_euler left"), std::string::npos) << failure;
    EXPECT_NE(failure.find("det F <= 0"), std::string::npos) << failure;
  }
}

// The penalty ground pushes back smoothly: the impact is taken in full.
TEST(FastImpact, PenaltyGroundTakesTheImpactWithFiniteFields) {
  EXPECT_EQ(RunImpact(ImpactScene("impact_penalty", "penalty")), "");
}

// Integrators below their stability limit end in a failed step naming themselves, never
// with exit 0 and inverted tets: XPBD with one substep per 1/24 s frame, and the
// asynchronous integrator with one 1 s step, on the box thrown at the penalty ground.
TEST(NoSilentExplosion, XpbdWithOneSubstepFailsOrKeepsEveryTet) {
  SceneConfig scene = ImpactScene("impact_xpbd", "penalty");
  scene.integrator = IntegratorKind::kXpbd;
  scene.xpbd.substeps = 1;
  scene.friction.model = FrictionModel::kAfterSolve;  // what a parsed xpbd scene gets
  const std::string failure = RunImpact(scene);
  PetscPrintf(PETSC_COMM_WORLD, "xpbd, 1 substep: %s\n", failure.empty() ? "every frame taken" : failure.c_str());
  if (!failure.empty()) {
    EXPECT_NE(failure.find("integrator xpbd left"), std::string::npos) << failure;
    EXPECT_NE(failure.find("[try a smaller time.dt, more xpbd.substeps or more time.max_dt_halvings]"),
              std::string::npos) << failure;
  }
}

TEST(NoSilentExplosion, AsyncWithOneSecondStepFailsOrKeepsEveryTet) {
  SceneConfig scene = ImpactScene("impact_async", "penalty");
  scene.integrator = IntegratorKind::kAsync;
  scene.friction.model = FrictionModel::kAfterSolve;  // what a parsed async scene gets
  scene.collision_objects[0].friction = 0.0;  // async applies no Coulomb friction
  scene.time.frame_dt = scene.time.dt = 1.0;
  scene.time.frames = 1;
  const std::string failure = RunImpact(scene);
  PetscPrintf(PETSC_COMM_WORLD, "async, one 1 s step: %s\n", failure.empty() ? "every frame taken" : failure.c_str());
  if (!failure.empty()) EXPECT_NE(failure.find("integrator async left"), std::string::npos) << failure;
}

/// A box stretched by 10% along x, let go in free fall: 2 frames of one step, at most 2
/// halvings. Every step needs linear solves (free fall alone is its own first guess).
SceneConfig RestingScene(const std::string& tag) {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/box", 2, 2, 2, Vec3(0.2, 0.2, 0.2));
  return test::MakeScene(dir + "/rest.yaml", R"(time: {frame_rate: 24, frames: 2, max_dt_halvings: 2}
bodies:
  - mesh: box.node
    material: {model: fixed_corotated, E: 1.0e5, nu: 0.3, density: 1000}
    initial_conditions: {prestrain: {deformation_gradient: [[1.1, 0, 0], [0, 1, 0], [0, 0, 1]]}}
output: {directory: out}
)");
}

/// Takes the first frame of RestingScene(tag) with a Krylov solve under `prefix` that
/// raises a PETSc error at every solve: -<prefix>ksp_error_if_not_converged on a Richardson
/// iteration that does not move (scale 1e-30), one iteration allowed (DIVERGED_ITS). Each
/// try is a failed try, not an abort; after the last halving, StepFailure, with the state
/// of the step's start. The tries end on the solve, on the line search along the poor
/// direction it leaves (More-Thuente: "dx * (stp-stx) >= 0.0") or on the iteration cap; a
/// PETSc error that escaped would end the test with an exception instead.
void ExpectFailedStepFromSolveErrors(const std::string& tag, const std::string& prefix,
                                     std::vector<std::pair<std::string, std::string>> options,
                                     const std::function<void(SceneConfig&)>& edit = {}) {
  std::vector<std::pair<std::string, std::string>> all;
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"ksp_error_if_not_converged", "true"}, {"ksp_type", "richardson"},
           {"ksp_richardson_scale", "1e-30"}, {"ksp_max_it", "1"}})
    all.emplace_back("-" + prefix + name, value);
  all.insert(all.end(), options.begin(), options.end());  // the caller's come last and win
  const test::ScopedOptions scoped(all);
  SceneConfig scene = RestingScene(tag);
  if (edit) edit(scene);
  FemSimulation sim(MPI_COMM_WORLD, scene);
  const std::vector<double> start = sim.GatherPositions();
  const std::string failure = FrameFailure(sim);
  EXPECT_NE(failure.find("failed after 2 halvings"), std::string::npos) << failure;
  EXPECT_NE(failure.find("[try a smaller time.dt or more time.max_dt_halvings]"), std::string::npos) << failure;
  EXPECT_EQ(sim.GatherPositions(), start);
}

// Newton's direction: its Krylov solve.
TEST(SolveErrors, PetscErrorInTheLinearSolveIsAFailedStep) {
  ExpectFailedStepFromSolveErrors("ksp_error", "newton_", {});
}

// L-BFGS's initializer (LBFGS-H: a Krylov solve of the lagged Hessian).
TEST(SolveErrors, PetscErrorInTheInitializerSolveIsAFailedStep) {
  ExpectFailedStepFromSolveErrors("initializer_error", "lbfgsh_", {{"-solver_method", "lbfgs"}});
}

// DOT's subdomain back-solves (each rank's own, on PETSC_COMM_SELF).
TEST(SolveErrors, PetscErrorInADotSubdomainSolveIsAFailedStep) {
  ExpectFailedStepFromSolveErrors("dot_sub_error", "dot_sub_",
                                  {{"-solver_method", "dot"}, {"-dot_subdomains_per_rank", "2"}});
}

// DOT's Krylov variant: CG on the lagged Hessian around the subdomain solves.
TEST(SolveErrors, PetscErrorInTheDotKrylovSolveIsAFailedStep) {
  ExpectFailedStepFromSolveErrors("dot_krylov_error", "dot_krylov_",
                                  {{"-solver_method", "dot"}, {"-dot_krylov_its", "2"}});
}

// The semi-implicit integrator's implicit Rayleigh damping (CG under semi_implicit_): no
// minimizer around it, so the integrator itself makes the error a failed try. The trigger
// is a Richardson iteration that blows up (DIVERGED_DTOL): PETSc raises DIVERGED_ITS only
// at the outermost KSPSolve level, a count that a solve ended by an error leaves raised.
TEST(SolveErrors, PetscErrorInTheSemiImplicitDampingSolveIsAFailedStep) {
  ExpectFailedStepFromSolveErrors("semi_damping_error", "semi_implicit_",
                                  {{"-semi_implicit_ksp_richardson_scale", "1e30"},
                                   {"-semi_implicit_ksp_max_it", "5"}},
                                  [](SceneConfig& scene) {
    scene.integrator = IntegratorKind::kSemiImplicit;
    scene.damping.stiffness_beta = 0.01;
    scene.friction.model = FrictionModel::kAfterSolve;  // what a parsed semi_implicit scene gets
  });
}

// MPM particles are judged as tets are (det F_E Jp against the bounds, the state finite).
// A block prestrained by 1.1 per axis (det F = 1.331) over one short frame: accepted under
// -step_max_det_f 1.5; under 1.2 the first step is refused, and since MPM's CFL step
// limit leaves no earlier state to halve from, the run ends with StepFailure naming the
// particles and their det F.
TEST(StateCheck, MpmParticlesBeyondTheDetFBoundEndTheRunNamingThem) {
  const std::string dir = test::SharedTempDir("mpm_state_check");
  const SceneConfig scene = test::MakeScene(dir + "/block.yaml", R"(discretization: mpm
mpm: {dx: 0.05, ppc: 8}
gravity: [0, 0, 0]
time: {frame_dt: 0.001, frames: 1}
bodies:
  - shape: {type: box, min: [0, 0, 0], max: [0.2, 0.2, 0.2]}
    material: {E: 1.0e5, nu: 0.3, density: 1000}
    initial_conditions: {prestrain: {scale: 1.1}}
output: {directory: out}
)");
  {
    const test::ScopedOptions scoped(std::vector<std::pair<std::string, std::string>>{{"-step_max_det_f", "1.5"}});
    MpmSimulation sim(MPI_COMM_WORLD, scene);
    EXPECT_NO_THROW(sim.AdvanceFrame(nullptr));
  }
  const test::ScopedOptions scoped(std::vector<std::pair<std::string, std::string>>{{"-step_max_det_f", "1.2"}});
  MpmSimulation sim(MPI_COMM_WORLD, scene);
  const std::string failure = FrameFailure(sim);
  // 4 x 4 x 4 cells of 8 particles.
  EXPECT_NE(failure.find("left 512 particles stretched beyond -step_max_det_f"), std::string::npos) << failure;
  EXPECT_NE(failure.find("stretched beyond -step_max_det_f (particle "), std::string::npos) << failure;
  EXPECT_NE(failure.find("has det F = 1.33"), std::string::npos) << failure;
  // No earlier state to halve from: more halvings would not help.
  EXPECT_NE(failure.find("[try a smaller time.dt or a smaller mpm.cfl]"), std::string::npos) << failure;
}

}  // namespace
}  // namespace optistep
