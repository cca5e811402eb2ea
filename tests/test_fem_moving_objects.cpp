// Scripted (moving, rotating) collision objects in FEM scenes and the bowl and box-with-hole
// level sets (Gast et al. 2015 Sec. 5.2: penalty k m max(-phi, 0)^3 against the
// object posed at t_{n+1}, Coulomb friction after the solve relative to the object's
// material velocity), on 1, 2 and 4 ranks:
//  - the new level sets: closed-form distances at chosen points, the normal against central
//    differences of phi, a posed (moved, rotated) object against the moved shape;
//  - a block pushed by a moving half-space gains momentum along the push only and ends
//    moving with the pusher, and the same run on 1 rank and on all ranks agrees;
//  - a block on a sliding ground (a conveyor) is dragged by friction at mu (g t + v_y(t))
//    until it sticks (also with friction as a potential), a block on a turning ground (a
//    turntable) co-rotates, and an elevator lifts a block at its speed with the bottom at
//    the depth where the penalty carries its weight (3 k m_b delta^2 = M g);
//  - the same with method: constraint (Gast Sec. 3.2 projection against the object posed at
//    t_{n+1}, friction from the constraint force relative to the object, Sec. 5.1), no
//    node behind a moving constraint plane at any step, and the constraint conveyor with
//    friction as a potential resumed from a checkpoint bitwise.
#include <gtest/gtest.h>
#include <petscvec.h>

#include <cmath>
#include <random>
#include <sstream>

#include "FemRunChecks.hpp"
#include "FemSceneRun.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "model/CollisionObject.hpp"

namespace optistep {
namespace {

CollisionObjectConfig Bowl() {
  CollisionObjectConfig c;
  c.kind = CollisionObjectConfig::Kind::kBowl;
  c.center = Vec3(0.1, 0.2, -0.3);
  c.axis = Vec3::UnitY();
  c.inner_radius = 0.8;
  c.outer_radius = 1.0;
  return c;
}

CollisionObjectConfig BoxWithHole() {
  CollisionObjectConfig c;
  c.kind = CollisionObjectConfig::Kind::kBoxWithHole;
  c.box_min = Vec3(-1.0, 0.0, -1.0);
  c.box_max = Vec3(1.0, 0.2, 1.0);
  c.axis = Vec3::UnitY();
  c.center = Vec3(0.1, 0.0, 0.0);
  c.hole_radius = 0.3;
  return c;
}

TEST(CollisionShapes, ClosedFormDistances) {
  const CollisionObject bowl(Bowl());
  const Vec3 c = Bowl().center;
  Vec3 n;
  // In the wall below the center: 0.1 m from both spheres.
  EXPECT_NEAR(bowl.SignedDistance(c + Vec3(0, -0.9, 0), &n), -0.1, 1e-15);
  EXPECT_NEAR(bowl.SignedDistance(c + Vec3(0, -0.85, 0), &n), -0.05, 1e-15);
  EXPECT_NEAR(n.dot(Vec3::UnitY()), 1.0, 1e-15);  // toward the cavity
  EXPECT_NEAR(bowl.SignedDistance(c + Vec3(0, -1.2, 0), &n), 0.2, 1e-15);
  EXPECT_NEAR(n.dot(-Vec3::UnitY()), 1.0, 1e-15);
  EXPECT_NEAR(bowl.SignedDistance(c, &n), 0.8, 1e-15);  // the center: the inner sphere
  EXPECT_NEAR(bowl.SignedDistance(c + Vec3(0, 0.5, 0), &n), std::hypot(0.8, 0.5), 1e-15);  // the rim
  EXPECT_NEAR(bowl.SignedDistance(c + Vec3(0.9, 0.3, 0), &n), 0.3, 1e-15);  // over the rim
  EXPECT_NEAR(bowl.SignedDistance(c + Vec3(0.9, -0.05, 0), &n), -0.05, 1e-15);  // below the rim

  const CollisionObject slab(BoxWithHole());
  EXPECT_NEAR(slab.SignedDistance(Vec3(0.1, 0.1, 0.0), &n), 0.3, 1e-15);  // the hole's axis
  EXPECT_NEAR(slab.SignedDistance(Vec3(0.6, 0.1, 0.0), &n), -0.1, 1e-15);  // mid-slab
  EXPECT_NEAR(slab.SignedDistance(Vec3(0.45, 0.1, 0.0), &n), -0.05, 1e-15);  // near the hole
  EXPECT_NEAR(n.dot(-Vec3::UnitX()), 1.0, 1e-15);
  EXPECT_NEAR(slab.SignedDistance(Vec3(0.6, 0.5, 0.0), &n), 0.3, 1e-15);  // above
}

/// The normal is phi's gradient: central differences at random points, away from the
/// creases where phi is not differentiable (the FD gradient's length is then not 1).
void ExpectNormalIsGradient(const CollisionObject& object, const Vec3& lo, const Vec3& hi) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double h = 1e-7;
  int checked = 0, inside = 0, outside = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const Vec3 x = lo + Vec3(u(rng), u(rng), u(rng)).cwiseProduct(hi - lo);
    Vec3 n, unused;
    const double phi = object.SignedDistance(x, &n);
    Vec3 fd;
    for (int a = 0; a < 3; ++a)
      fd[a] = (object.SignedDistance(x + h * Vec3::Unit(a), &unused) -
               object.SignedDistance(x - h * Vec3::Unit(a), &unused)) / (2 * h);
    if (std::abs(fd.norm() - 1.0) > 1e-6) continue;  // a crease between two branches
    ++checked;
    (phi < 0 ? inside : outside)++;
    EXPECT_LT((n - fd).norm(), 1e-6) << "at " << x.transpose() << " phi " << phi;
    EXPECT_NEAR(n.norm(), 1.0, 1e-12);
  }
  // Creases are measure-zero: nearly every sample is checked, inside and outside.
  EXPECT_GT(checked, 3900);
  EXPECT_GT(inside, 100);
  EXPECT_GT(outside, 100);
}

TEST(CollisionShapes, NormalsAreTheGradientOfPhi) {
  ExpectNormalIsGradient(CollisionObject(Bowl()), Vec3(-1.2, -1.2, -1.5), Vec3(1.4, 1.0, 0.9));
  ExpectNormalIsGradient(CollisionObject(BoxWithHole()), Vec3(-1.2, -0.3, -1.2), Vec3(1.2, 0.5, 1.2));
}

/// A moving object posed at t is its shape moved rigidly: a box turned by 90 degrees about
/// z through its middle and translated, and the velocity of its material points.
TEST(CollisionShapes, PosedObjectIsTheMovedShape) {
  CollisionObjectConfig c;
  c.kind = CollisionObjectConfig::Kind::kBox;
  c.box_min = Vec3(-1.0, -0.1, -0.5);
  c.box_max = Vec3(1.0, 0.1, 0.5);
  MotionSegmentConfig turn, move;
  turn.kind = MotionSegmentConfig::Kind::kRotate;
  turn.axis = Vec3::UnitZ();
  turn.angular_velocity = M_PI / 2;  // 90 degrees in 1 s
  turn.end = 1.0;
  move.velocity = Vec3(0.0, 0.0, 2.0);
  move.start = 1.0;
  c.motion = {turn, move};
  CollisionObject box(c);
  box.SetTime(1.5);  // turned (long side along y), then moved by 1 m along z
  Vec3 n, m;
  EXPECT_NEAR(box.SignedDistance(Vec3(0.0, 0.9, 1.0), &n), -0.1, 1e-12);
  EXPECT_NEAR(box.SignedDistance(Vec3(0.3, 0.0, 1.0), &n), 0.2, 1e-12);
  EXPECT_LT((n - Vec3::UnitX()).norm(), 1e-12);
  EXPECT_NEAR(box.SignedDistance(Vec3(0.0, 0.0, 2.0), &n), 0.5, 1e-12);
  // Stateless and posed evaluations agree bitwise.
  const Vec3 x(0.05, 0.4, 1.3);
  EXPECT_EQ(box.SignedDistance(x, &n), box.SignedDistanceAt(x, 1.5, &m));
  EXPECT_EQ(n, m);
  EXPECT_LT((box.Velocity(x) - Vec3(0, 0, 2)).norm(), 1e-8);
  // While turning: v = omega z x (x - center).
  box.SetTime(0.5);
  EXPECT_LT((box.Velocity(x) - (M_PI / 2) * Vec3::UnitZ().cross(x)).norm(), 1e-8);
}

/// Collective: total momentum (kg m/s) and mass-weighted center (m) of the model's nodes.
void MomentumAndCenter(FemSimulation& sim, Vec3* p, Vec3* center, double* mass) {
  const PetscScalar *xa = nullptr, *va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.positions(), &xa));
  OPTISTEP_PETSC(VecGetArrayRead(sim.velocities(), &va));
  double sums[7] = {0, 0, 0, 0, 0, 0, 0};
  for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l) {
    const double m = sim.model().Mass(static_cast<int>(l));
    for (int d = 0; d < 3; ++d) {
      sums[d] += m * va[3 * l + d];
      sums[3 + d] += m * xa[3 * l + d];
    }
    sums[6] += m;
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.positions(), &xa));
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.velocities(), &va));
  MPI_Allreduce(MPI_IN_PLACE, sums, 7, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  *p = Vec3(sums[0], sums[1], sums[2]);
  *center = Vec3(sums[3], sums[4], sums[5]) / sums[6];
  *mass = sums[6];
}

constexpr double kPushSpeed = 0.5;  // m/s

/// A free 0.1 m block (1 kg, 3 x 3 x 3 hexes) 1 mm ahead of the plane x = 0 bounding the
/// half-space x < 0, which moves at kPushSpeed along +x; no gravity; 40 steps of 5 ms; the
/// plane's collision method (penalty or constraint).
SceneConfig PusherScene(const std::string& tag, const std::string& method = "penalty", const std::string& extra = "") {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/box", 3, 3, 3, Vec3(0.1, 0.1, 0.1));
  std::ostringstream yaml;
  yaml << "time: {dt: 0.005, frame_dt: 0.005, frames: 40}\n"
       << "gravity: [0, 0, 0]\n"
       << "bodies:\n"
       << "  - {name: block, mesh: box.node, material: {E: 1.0e6, nu: 0.3, density: 1000},\n"
       << "     transform: {translate: [0.001, 0, 0]}}\n"
       << "collision_objects:\n"
       << "  - type: half_space\n"
       << "    normal: [1, 0, 0]\n"
       << "    stiffness: 1.0e9\n"
       << "    method: " << method << "\n"
       << "    motion: [{translate: {velocity: [" << kPushSpeed << ", 0, 0]}}]\n"
       << extra;
  return test::MakeScene(dir + "/scene.yaml", yaml.str());
}

// Momentum bound: the pusher's penalty forces all point along its normal +x and nothing
// else acts, so P_x never decreases and P_y = P_z = 0 (to the solver's tolerance, 5e-4
// kg m/s here). It ends between V (slower, the plane would catch up and push again) and 2V
// (a perfectly elastic rebound off a wall moving at V); backward Euler damps the rebound
// (a small restitution e: v = (1 + e) V). Penetration bound: the plane
// is never more than 1 mm (1% of the block) inside it.
TEST(MovingObjects, PushedBlockEndsBetweenOnceAndTwiceThePushersSpeed) {
  const SceneConfig scene = PusherScene("moving_pusher");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  Vec3 p, center, center_half;
  double mass = 0.0, last_px = 0.0, max_lag = 0.0;
  for (int f = 0; f < scene.time.frames; ++f) {
    sim.AdvanceFrame(nullptr);
    MomentumAndCenter(sim, &p, &center, &mass);
    EXPECT_GE(p.x(), last_px - 5e-4) << "step " << f;
    EXPECT_LT(std::abs(p.y()) + std::abs(p.z()), 1e-3 * p.x()) << "step " << f;
    last_px = p.x();
    if (f == scene.time.frames / 2 - 1) center_half = center;
    // The plane is at V t; the block's back face at center - 0.05.
    const double t = (f + 1) * scene.time.dt;
    max_lag = std::max(max_lag, kPushSpeed * t - (center.x() - 0.05));
  }
  const double T = scene.time.frames * scene.time.dt;
  EXPECT_NEAR(mass, 1.0, 1e-12);
  EXPECT_GE(p.x() / mass, kPushSpeed * (1 - 1e-3)) << "the block's final velocity";
  EXPECT_LE(p.x() / mass, 2 * kPushSpeed) << "the block's final velocity";
  // Over the second half, apart from the plane, the center advances at that speed.
  EXPECT_NEAR(center.x() - center_half.x(), p.x() / mass * T / 2, 1e-4);
  EXPECT_LT(max_lag, 1e-3) << "the plane went deeper than 1 mm into the block";
  EXPECT_GT(max_lag, 0.0) << "the plane should touch the block";
}

// A constraint plane (Gast Sec. 3.2) holds phi >= 0 exactly: no node is behind the plane
// posed at the step's end in any step (to round-off, 1e-12 m). Its forces lambda_i n act
// along +x only, so P_y = P_z = 0 and P_x never decreases, to the solver's tolerance
// (cn_epsilon 1e-8 here), and the block ends between V and 2V as with the penalty (nearer
// V: the plane, projecting the back face onto itself, rebounds it less).
TEST(MovingObjects, ConstraintPlanePushesBlockAlongItsNormalOnly) {
  const SceneConfig scene = PusherScene("moving_pusher_constraint", "constraint", "solver: {cn_epsilon: 1.0e-8}\n");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const CollisionObject& plane = sim.model().collision_objects()[0];
  Vec3 p, center;
  double mass = 0.0, last_px = 0.0, deepest = 1.0, sideways = 0.0;
  for (int f = 0; f < scene.time.frames; ++f) {
    sim.AdvanceFrame(nullptr);
    MomentumAndCenter(sim, &p, &center, &mass);
    EXPECT_GE(p.x(), last_px - 5e-4) << "step " << f;
    sideways = std::max(sideways, std::abs(p.y()) + std::abs(p.z()));
    last_px = p.x();
    const double t = (f + 1) * scene.time.dt;
    const std::vector<double> x = sim.GatherPositions();
    for (std::size_t i = 0; i < x.size(); i += 3) {
      Vec3 n;
      deepest = std::min(deepest, plane.SignedDistanceAt(Vec3(x[i], x[i + 1], x[i + 2]), t, &n));
    }
  }
  PetscPrintf(PETSC_COMM_WORLD, "constraint pusher: final v_x %.6f m/s (V = %.2f), max |P_y| + |P_z| %.3e kg m/s, "
              "deepest phi %.3e m\n", p.x() / mass, kPushSpeed, sideways, deepest);
  EXPECT_GE(deepest, -1e-12) << "a node behind the moving plane";
  EXPECT_LT(sideways, 1e-5 * p.x());  // the solver's tolerance at cn_epsilon 1e-8
  EXPECT_GE(p.x() / mass, kPushSpeed * (1 - 1e-3)) << "the block's final velocity";
  EXPECT_LE(p.x() / mass, 2 * kPushSpeed) << "the block's final velocity";
}

void ExpectPushedBlockSameOnAllRanksAsOnOne(const std::string& method) {
  const SceneConfig scene = PusherScene("moving_pusher_ranks_" + method, method);
  const test::OneRankComparison c =
      test::CompareWithOneRank([&](MPI_Comm comm) { return test::RunFemScene(comm, scene); });
  EXPECT_LT(c.worst_x, 1e-6) << "positions differ from the 1-rank run (m)";
  EXPECT_LT(c.worst_v, 1e-5 * kPushSpeed) << "velocities differ from the 1-rank run (m/s)";
  EXPECT_EQ(test::DifferingValues(c.parallel, test::RunFemScene(PETSC_COMM_WORLD, scene)), 0u)
      << "the same ranks should give bitwise the same run";
}

TEST(MovingObjects, PushedBlockSameOnAllRanksAsOnOne) { ExpectPushedBlockSameOnAllRanksAsOnOne("penalty"); }

TEST(MovingObjects, ConstraintPushedBlockSameOnAllRanksAsOnOne) { ExpectPushedBlockSameOnAllRanksAsOnOne("constraint"); }

/// A 0.1 m block (1 kg) resting on the ground y < 0 (mu = 0.5) that moves as `motion`,
/// held by `method` (penalty or constraint).
SceneConfig GroundScene(const std::string& tag, const std::string& motion, const Vec3& at, int frames,
                        double dt = 0.01, const std::string& extra = "", const std::string& method = "penalty") {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/box", 2, 2, 2, Vec3(0.1, 0.1, 0.1));
  std::ostringstream yaml;
  yaml.precision(17);
  yaml << "time: {dt: " << dt << ", frame_dt: " << dt << ", frames: " << frames << "}\n"
       << "bodies:\n"
       << "  - {name: block, mesh: box.node, material: {E: 1.0e6, nu: 0.3, density: 1000},\n"
       << "     transform: {translate: [" << at.x() << ", 0, " << at.z() << "]}}\n"
       << "collision_objects:\n"
       << "  - {type: half_space, normal: [0, 1, 0], stiffness: 1.0e7, friction: 0.5,\n"
       << "     method: " << method << ", motion: [" << motion << "]}\n"
       << extra;
  return test::MakeScene(dir + "/scene.yaml", yaml.str());
}

// Friction after the solve (Gast Sec. 5.2) on a conveyor moving at V along x: while every
// contact node slides backward relative to the belt, each gains mu f_n dt / m along +x, so
// the block's P_x gains mu sum f_n dt; backward Euler's vertical balance gives
// sum f_n dt = M (g dt + dv_y). Hence v_x(t) = mu (g t + v_y(t)) until v_x reaches V
// (t ~ V / (mu g) = 0.20 s), after which the block rides the belt: v_x = V.
// With method: constraint the normal forces are the constraint's lambda_i (Gast Sec. 5.1),
// whose sum obeys the same balance. (FEM scenes default to friction as a potential: the
// scene asks for friction after the solve.)
void ExpectConveyorDragsBlockUntilItSticks(const std::string& method, const std::string& tight = "") {
  const double V = 1.0, mu = 0.5, g = 9.81;
  const SceneConfig scene = GroundScene("moving_conveyor_" + method, "{translate: {velocity: [1, 0, 0]}}",
                                        Vec3::Zero(), 40, 0.01, "friction: {model: after_solve}\n" + tight, method);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  Vec3 p, center;
  double mass = 0.0;
  for (int f = 0; f < scene.time.frames; ++f) {
    sim.AdvanceFrame(nullptr);
    MomentumAndCenter(sim, &p, &center, &mass);
    const double t = (f + 1) * scene.time.dt;
    // Every contact node slides until t ~ 0.2 s; the penalty's bound (2e-4 V) is checked
    // to 0.125 s, the constraint's with the solver's tolerance at 1e-8 to 0.2 s.
    if (t < (tight.empty() ? 0.125 : 0.2)) {
      EXPECT_NEAR(p.x() / mass, mu * (g * t + p.y() / mass), (tight.empty() ? 2e-4 : 2e-6) * V) << "t = " << t;
    }
  }
  EXPECT_NEAR(p.x() / mass, V, 1e-3 * V) << "the block should ride the belt";
}

TEST(MovingObjects, ConveyorDragsBlockByCoulombFrictionUntilItSticks) { ExpectConveyorDragsBlockUntilItSticks("penalty"); }

TEST(MovingObjects, ConstraintConveyorDragsBlockByCoulombFrictionUntilItSticks) {
  ExpectConveyorDragsBlockUntilItSticks("constraint", "solver: {cn_epsilon: 1.0e-8}\n");
}

// The same conveyor with friction as IPC's lagged potential (friction.model: potential):
// the sliding displacement is taken relative to the belt's, so the block, dragged at up to
// mu g, comes to ride the belt at V (to the static creep eps_v = 1e-3 m/s).
TEST(MovingObjects, ConveyorCarriesBlockWithFrictionPotential) {
  const SceneConfig scene = GroundScene("moving_conveyor_ipc", "{translate: {velocity: [1, 0, 0]}}",
                                        Vec3::Zero(), 40, 0.01, "friction: {model: potential}\n");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  Vec3 p, center;
  double mass = 0.0;
  MomentumAndCenter(sim, &p, &center, &mass);
  EXPECT_NEAR(p.x() / mass, 1.0, 2e-3) << "the block should ride the belt";
}

// A turntable: the ground turns about the vertical axis through the origin at omega; a
// block at r = 0.5 m is dragged to its material velocity omega y x r (1 m/s) and then
// co-rotates (the needed centripetal force M omega^2 r = 2 N is below mu M g = 4.9 N).
// Friction after the solve turns only the contact nodes' velocities each step, so the
// block slips outward at a speed of order (M / m_contact) |v| omega dt; at dt = 2.5 ms
// that is ~2% of |v|.
// With method: constraint, the same bounds.
void ExpectTurntableCarriesBlockAround(const std::string& method) {
  const double omega = 2.0;
  const SceneConfig scene = GroundScene(
      "moving_turntable_" + method, "{rotate: {axis: [0, 1, 0], angular_velocity: 2, center: [0, 0, 0]}}",
      Vec3(0.45, 0.0, -0.05), 240, 0.0025, "", method);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  Vec3 p, center;
  double mass = 0.0;
  MomentumAndCenter(sim, &p, &center, &mass);
  const Vec3 expected = omega * Vec3::UnitY().cross(Vec3(center.x(), 0.0, center.z()));
  const Vec3 radial = Vec3(center.x(), 0.0, center.z()).normalized();
  EXPECT_LT(std::abs((p / mass).dot(radial)), 0.03 * expected.norm()) << "radial slip (m/s)";
  EXPECT_LT((p / mass - expected).norm(), 0.04 * expected.norm())
      << "v = " << (p / mass).transpose() << ", omega y x r = " << expected.transpose();
  EXPECT_NEAR(std::hypot(center.x(), center.z()), 0.5, 0.02) << "it stays on its circle";
  PetscPrintf(PETSC_COMM_WORLD, "turntable (%s): v (%.4f, %.4f, %.4f) m/s, omega y x r (%.4f, %.4f, %.4f), r %.4f m\n",
              method.c_str(), p.x() / mass, p.y() / mass, p.z() / mass, expected.x(), expected.y(), expected.z(),
              std::hypot(center.x(), center.z()));
}

TEST(MovingObjects, TurntableCarriesBlockAround) { ExpectTurntableCarriesBlockAround("penalty"); }

TEST(MovingObjects, ConstraintTurntableCarriesBlockAround) { ExpectTurntableCarriesBlockAround("constraint"); }

// A run with a scripted constraint object (the conveyor, friction inside the minimization
// from the constraint force) checkpointed after 10 steps and resumed ends bitwise as the
// uninterrupted one: the pose is a function of t, the active set and the lagged lambda
// are rebuilt within each step, so nothing new crosses steps.
TEST(MovingObjects, ConstraintConveyorResumesBitwise) {
  const SceneConfig scene = GroundScene("moving_conveyor_restart", "{translate: {velocity: [1, 0, 0]}}",
                                        Vec3::Zero(), 20, 0.01, "friction: {model: potential}\n", "constraint");
  test::ExpectResumedBitwise(scene, 10, 10);
}

// An elevator: the ground rises at V = 0.2 m/s under a resting block. The block cannot be
// faster once apart (gravity slows it and the floor catches it) nor slower in contact
// (the floor pushes), and backward Euler damps the bounce, so it rides at v_y = V with the
// floor carrying its weight: P_y / M -> V.
TEST(MovingObjects, ElevatorLiftsBlockAtItsSpeed) {
  const double V = 0.2;
  const SceneConfig scene =
      GroundScene("moving_elevator", "{translate: {velocity: [0, 0.2, 0]}}", Vec3::Zero(), 50);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  Vec3 p, center;
  double mass = 0.0;
  MomentumAndCenter(sim, &p, &center, &mass);
  EXPECT_NEAR(p.y() / mass, V, 1e-3 * V);
  EXPECT_LT(std::abs(p.x()) + std::abs(p.z()), 1e-3 * V);
  // The floor carries the weight through the bottom nodes (mass m_b, in contact): with one
  // penetration delta for all, 3 k m_b delta^2 = M g, so the block's bottom (center - 0.05,
  // up to its elastic sag rho g L^2 / (4 E) = 2.5e-5 m) rides delta below the floor at V t.
  const double floor = V * scene.time.frames * scene.time.dt;
  const PetscScalar* xa = nullptr;
  double m_b = 0.0;
  OPTISTEP_PETSC(VecGetArrayRead(sim.positions(), &xa));
  for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l)
    if (xa[3 * l + 1] < floor) m_b += sim.model().Mass(static_cast<int>(l));
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.positions(), &xa));
  MPI_Allreduce(MPI_IN_PLACE, &m_b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double delta = std::sqrt(mass * 9.81 / (3 * 1.0e7 * m_b));
  EXPECT_NEAR(center.y() - 0.05, floor - delta, 1e-4) << "delta = " << delta;
}

}  // namespace
}  // namespace optistep
