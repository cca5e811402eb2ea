// Penalty self- and body-body collisions (Gast et al. 2015, Sec. 5.3; fem/SelfContact.hpp),
// on 1, 2 and 4 ranks: the squared distance to a triangle's closest feature and the
// penalty's gradient and Hessian against central finite differences, also with pairs
// spanning ranks; one body of two components has the pairs and energy of the same boxes as
// two bodies; Phi is continuous (Lipschitz) along a path that folds a node into its own
// body, and ends at k depth^3; two boxes pressed into each other separate, and two thrown
// at each other stop, with the total momentum kept to the solver's tolerance, the same on
// any rank count to round-off and bitwise on the same; configs/two_spheres.yaml collides
// and separates below 1% penetration; the line search's guard (Sec. 3.3) changes no bit,
// also under DOT; detection with reused trees and Verlet lists finds the pairs of a fresh
// detection, bit for bit; the pairs are the same bits on 2 and 4 ranks as on 1, also when
// the halo must grow; friction after the solve (Sec. 5.3) conserves momentum and
// decelerates a sliding box at mu g.
#include <gtest/gtest.h>
#include <petscvec.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>

#include "FiniteDifferences.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "fem/ContactDistance.hpp"
#include "fem/FemIncrementalPotential.hpp"
#include "fem/SelfContact.hpp"

namespace optistep {
namespace {

TEST(ContactDistance, SquaredDistanceDerivativesMatchFiniteDifferences) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  int seen[4] = {0, 0, 0, 0};  // by feature node count
  for (int trial = 0; trial < 300; ++trial) {
    Vec12 q;
    for (int i = 0; i < 12; ++i) q[i] = u(rng);
    q.segment<3>(0) *= 1.5;  // points beyond the triangle's edges and corners too
    auto point = [&](const Vec12& y, int n) { return Vec3(y.segment<3>(3 * n)); };
    double d_closest = 0.0;
    const ClosestFeature f =
        ClosestTriangleFeature(point(q, 0), point(q, 1), point(q, 2), point(q, 3), &d_closest);
    ++seen[f.count];
    Vec12 g;
    Mat12 H;
    const double d = FeatureSquaredDistance(f, point(q, 0), point(q, 1), point(q, 2), point(q, 3), &g, &H);
    // The feature's distance is the triangle's distance (Ericson's closest point).
    EXPECT_NEAR(d, d_closest, 1e-12 * (1.0 + d_closest));
    const double h = 1e-6;
    for (int i = 0; i < 12; ++i) {
      Vec12 qp = q, qm = q;
      qp[i] += h;
      qm[i] -= h;
      Vec12 gp, gm;
      const double ep = FeatureSquaredDistance(f, point(qp, 0), point(qp, 1), point(qp, 2), point(qp, 3), &gp, nullptr);
      const double em = FeatureSquaredDistance(f, point(qm, 0), point(qm, 1), point(qm, 2), point(qm, 3), &gm, nullptr);
      EXPECT_NEAR(g[i], (ep - em) / (2 * h), 1e-7 * (1.0 + std::abs(g[i])));
      const Vec12 column = (gp - gm) / (2 * h);
      EXPECT_LT((H.col(i) - column).norm(), 1e-6 * (1.0 + H.col(i).norm())) << "column " << i;
    }
  }
  EXPECT_GT(seen[1], 0) << "no vertex case";
  EXPECT_GT(seen[2], 0) << "no edge case";
  EXPECT_GT(seen[3], 0) << "no face case";
}

TEST(ContactDistance, PenaltyDerivativesMatchFiniteDifferences) {
  const double k = 3e6;
  for (double d : {1e-8, 1e-5, 2.5e-3}) {
    double first = 0.0, second = 0.0;
    SelfContactPenalty(k, d, &first, &second);
    const double h = 1e-4 * d;
    const double ep = SelfContactPenalty(k, d + h, nullptr, nullptr);
    const double em = SelfContactPenalty(k, d - h, nullptr, nullptr);
    double fp = 0.0, fm = 0.0;
    SelfContactPenalty(k, d + h, &fp, nullptr);
    SelfContactPenalty(k, d - h, &fm, nullptr);
    EXPECT_NEAR(first, (ep - em) / (2 * h), 1e-7 * first);
    EXPECT_NEAR(second, (fp - fm) / (2 * h), 1e-7 * second);
    // Phi = k |x|^3 up to epsilon: the paper's cubic penalty in the distance.
    EXPECT_NEAR(SelfContactPenalty(k, d, nullptr, nullptr), k * std::pow(d, 1.5), 1e-6 * k * std::pow(d, 1.5));
  }
}

/// Two 0.1 m boxes (2 x 2 x 2 hexes of 6 tets each, 1 kg) overlapping by `overlap` m
/// along x (a negative overlap: a gap), without gravity, each moving toward the other at
/// `speed` (m/s), with self-contact on.
SceneConfig PressedBoxes(const std::string& tag, double overlap, double dt, double speed = 0.0,
                         int cells = 2) {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/box", cells, cells, cells, Vec3(0.1, 0.1, 0.1));
  std::ostringstream yaml;
  yaml.precision(17);
  yaml << "time: {dt: " << dt << ", frame_dt: " << dt << ", frames: 1}\n"
       << "gravity: [0, 0, 0]\n"
       << "bodies:\n"
       << "  - {name: left, mesh: box.node, material: {E: 1.0e5, nu: 0.3, density: 1000},\n"
       << "     initial_velocity: [" << speed << ", 0, 0]}\n"
       << "  - name: right\n"
       << "    mesh: box.node\n"
       << "    material: {E: 1.0e5, nu: 0.3, density: 1000}\n"
       << "    transform: {translate: [" << 0.1 - overlap << ", 0.013, 0.017]}\n"
       << "    initial_velocity: [" << -speed << ", 0, 0]\n"
       << "self_contact: {enabled: true, stiffness: 1.0e8}\n";
  return test::MakeScene(dir + "/scene.yaml", yaml.str());
}

/// Fills v (owned entries) with a pseudo-random field in [-amplitude, amplitude] seeded by
/// the node's original id, so that it is rank-count independent.
void RandomField(const FemModel& model, Vec v, double amplitude, unsigned seed) {
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(v, &a));
  for (PetscInt l = 0; l < model.mesh().n_owned; ++l)
    for (int c = 0; c < 3; ++c) {
      std::mt19937 rng(seed * 7919u + static_cast<unsigned>(3 * model.mesh().node_original_id[l] + c));
      a[3 * l + c] = amplitude * std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
    }
  OPTISTEP_PETSC(VecRestoreArray(v, &a));
}

/// The pairs, over all ranks, whose triangle has a node that p's rank does not own: the
/// pairs whose terms span two ranks (halo geometry, rows added on another rank).
std::size_t CrossRankPairs(const FemModel& model, const SelfContact& contact) {
  const auto& ids = model.mesh().node_original_id;
  const std::set<PetscInt> owned(ids.begin(), ids.begin() + model.mesh().n_owned);
  unsigned long long n = 0;
  for (const SelfContact::Pair& q : contact.pairs())
    n += !owned.count(q.triangle[0]) || !owned.count(q.triangle[1]) || !owned.count(q.triangle[2]);
  MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, model.comm());
  return n;
}

/// The boxes pressed 1 cm into each other and the incremental potential of a 0.02 s step
/// from their rest state.
struct PressedBoxesStep {
  explicit PressedBoxesStep(const std::string& tag)
      : scene(PressedBoxes(tag, 0.01, 0.02)), sim(PETSC_COMM_WORLD, scene), potential(sim.model(), 0.0) {
    potential.BeginStep(sim.positions(), sim.velocities(), 0.02, 0.02);
  }
  SceneConfig scene;
  FemSimulation sim;
  FemIncrementalPotential potential;
};

TEST(SelfContact, PotentialDerivativesMatchFiniteDifferences) {
  PressedBoxesStep boxes("contact_fd");
  auto& [scene, sim, potential] = boxes;
  Vec x = sim.positions();
  Vec y, d, Hd;
  for (Vec* w : {&y, &d, &Hd}) OPTISTEP_PETSC(VecDuplicate(x, w));
  RandomField(sim.model(), y, 0.002, 1);
  OPTISTEP_PETSC(VecAXPY(y, 1.0, x));
  RandomField(sim.model(), d, 1.0, 2);
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  contact.Update(y);
  ASSERT_GT(contact.PairCount(), 0u) << "the boxes should overlap";
  if (test::Size() > 1) EXPECT_GT(CrossRankPairs(sim.model(), contact), 0u) << "no pair spans two ranks";

  Mat H = potential.CreateHessian();
  potential.SetProjectHessian(false);
  potential.Hessian(y, H);
  const test::DirectionalCheck c = test::CheckAlong(potential, H, y, d, 1e-7, Hd);
  EXPECT_NEAR(c.energy_fd, c.gradient_dot, 1e-6 * std::abs(c.gradient_dot));
  EXPECT_LT(c.hessian_error, 1e-5 * c.hessian_norm)
      << "|H d - (g(y + h d) - g(y - h d)) / 2h| vs |H d| = " << c.hessian_norm;

  for (Vec* w : {&y, &d, &Hd}) VecDestroy(w);
  MatDestroy(&H);
}

/// Self-contact (one body) and body-body contact see the same penetrations: one body
/// whose mesh has two box components 1 m apart in the rest shape, its second component
/// moved back by 1 m into the first, gives the pairs and energy of the same two boxes as
/// two bodies.
TEST(SelfContact, OneBodyOfTwoComponentsMatchesTwoBodies) {
  const SceneConfig two = PressedBoxes("contact_self", 0.01, 0.02);
  const std::string dir = std::filesystem::path(two.path).parent_path().string();
  const Vec3 shift = two.bodies[1].transform.translate;
  if (test::Rank() == 0) {  // box.node/.ele twice, the second copy moved, as one mesh
    std::ifstream node(dir + "/box.node"), ele(dir + "/box.ele");
    int n = 0, e = 0, skip = 0;
    node >> n >> skip >> skip >> skip;
    std::vector<Vec3> X(n);
    for (int i = 0; i < n; ++i) node >> skip >> X[i][0] >> X[i][1] >> X[i][2];
    ele >> e >> skip >> skip;
    std::vector<std::array<int, 4>> T(e);
    for (int i = 0; i < e; ++i) ele >> skip >> T[i][0] >> T[i][1] >> T[i][2] >> T[i][3];
    std::ofstream out_node(dir + "/pair.node"), out_ele(dir + "/pair.ele");
    out_node.precision(17);
    out_node << 2 * n << " 3 0 0\n";
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < n; ++i) {
        const Vec3 x = X[i] + (c ? Vec3(shift + Vec3::UnitX()) : Vec3::Zero());
        out_node << c * n + i << " " << x[0] << " " << x[1] << " " << x[2] << "\n";
      }
    out_ele << 2 * e << " 4 0\n";
    for (int c = 0; c < 2; ++c)
      for (int i = 0; i < e; ++i)
        out_ele << c * e + i << " " << c * n + T[i][0] << " " << c * n + T[i][1] << " "
                << c * n + T[i][2] << " " << c * n + T[i][3] << "\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const SceneConfig one = test::MakeScene(dir + "/one.yaml", R"(time: {dt: 0.02, frame_dt: 0.02, frames: 1}
gravity: [0, 0, 0]
bodies:
  - {mesh: pair.node, material: {E: 1.0e5, nu: 0.3, density: 1000}}
self_contact: {enabled: true, stiffness: 1.0e8}
)");
  double energy[2] = {0.0, 0.0};
  std::size_t pairs[2] = {0, 0};
  int k = 0;
  for (const SceneConfig* scene : {&one, &two}) {
    FemSimulation sim(PETSC_COMM_WORLD, *scene);
    SelfContact contact(sim.model(), scene->self_contact.stiffness);
    if (scene == &one) {  // the second component (original ids from 27 on) moved back
      PetscScalar* x = nullptr;
      OPTISTEP_PETSC(VecGetArray(sim.positions(), &x));
      for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l)
        if (sim.model().mesh().node_original_id[l] >= 27) x[3 * l] -= 1.0;
      OPTISTEP_PETSC(VecRestoreArray(sim.positions(), &x));
    }
    contact.Update(sim.positions());
    MPI_Allreduce(MPI_IN_PLACE, &(energy[k] = contact.Energy()), 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    pairs[k++] = contact.PairCount();
  }
  EXPECT_GT(pairs[1], 0u);
  EXPECT_EQ(pairs[0], pairs[1]);
  EXPECT_NEAR(energy[0], energy[1], 1e-12 * energy[1]);
  EXPECT_GT(energy[1], 0.0);
}

/// A surface node p of a 0.8 x 0.1 x 0.1 m bar (8 x 1 x 1 hexes) is carried alone along a
/// path that folds it into its own body: up and over the bar, down through the top face
/// 0.35 m from where it belongs, to the bar's axis, and along the axis to x = 0.55 m. The
/// penalty of Gast et al. 2015 Sec. 5.3 must be continuous in x for the line search: p
/// enters through the surface, where the distance is 0, and no step along the path may
/// change Phi by more than its Lipschitz bound 3 k depth^2 |step| (depth <= 0.05 m, the
/// half-width). At the end p lies 0.05 m from the four long faces: Phi = k 0.05^3.
/// (Excluding the tets whose nodes were within twice p's longest edge at rest, as before,
/// missed the contact over the first 5 cm of the axis and jumped by k 0.05^3 = 12.5 kJ
/// where p crossed into the first tet beyond that radius.)
TEST(SelfContact, EnergyIsContinuousAlongAPathFoldingANodeIntoItsOwnBody) {
  const std::string dir = test::SharedTempDir("contact_fold");
  test::WriteBoxMesh(dir + "/bar", 8, 1, 1, Vec3(0.8, 0.1, 0.1));
  const SceneConfig scene = test::MakeScene(dir + "/scene.yaml", R"(time: {dt: 0.02, frame_dt: 0.02, frames: 1}
gravity: [0, 0, 0]
bodies:
  - {mesh: bar.node, material: {E: 1.0e5, nu: 0.3, density: 1000}}
self_contact: {enabled: true, stiffness: 1.0e8}
)");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  const double k = scene.self_contact.stiffness;
  SelfContact contact(sim.model(), k);
  const int p = 0 + 9 * (1 + 2 * 1);  // node (i, j, k) = (0, 1, 1): (0, 0.1, 0.1)
  // Off the hexes' diagonal planes, so that p is strictly inside one tet at the end.
  const Vec3 corners[] = {Vec3(0, 0.1, 0.1), Vec3(0, 0.15, 0.04), Vec3(0.25, 0.15, 0.04),
                          Vec3(0.25, 0.06, 0.04), Vec3(0.57, 0.06, 0.04)};
  const double step = 5e-4, depth = 0.04;
  auto energy_at = [&](const Vec3& xp) {
    PetscScalar* x = nullptr;
    OPTISTEP_PETSC(VecGetArray(sim.positions(), &x));
    for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l)
      if (sim.model().mesh().node_original_id[l] == p)
        for (int c = 0; c < 3; ++c) x[3 * l + c] = xp[c];
    OPTISTEP_PETSC(VecRestoreArray(sim.positions(), &x));
    contact.Update(sim.positions());
    double e = contact.Energy();
    MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    return e;
  };
  double previous = energy_at(corners[0]), worst_jump = 0.0;
  EXPECT_EQ(previous, 0.0);
  for (int leg = 0; leg + 1 < 5; ++leg) {
    const int n = static_cast<int>(std::ceil((corners[leg + 1] - corners[leg]).norm() / step));
    for (int i = 1; i <= n; ++i) {
      const double e = energy_at(corners[leg] + (corners[leg + 1] - corners[leg]) * (double(i) / n));
      worst_jump = std::max(worst_jump, std::abs(e - previous));
      previous = e;
    }
  }
  EXPECT_LT(worst_jump, 3.0 * k * depth * depth * step);
  EXPECT_NEAR(previous, k * depth * depth * depth, 1e-9 * k * depth * depth * depth);
}

/// Total momentum sum_i m_i v_i (kg m/s) and sum_i m_i |v_i| (its scale), over all ranks.
std::pair<Vec3, double> Momentum(FemSimulation& sim) {
  const FemModel& model = sim.model();
  const PetscScalar* va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.velocities(), &va));
  double sums[4] = {0.0, 0.0, 0.0, 0.0};
  for (PetscInt l = 0; l < model.mesh().n_owned; ++l) {
    const double m = model.Mass(static_cast<int>(l));
    const Vec3 vi(va[3 * l], va[3 * l + 1], va[3 * l + 2]);
    for (int c = 0; c < 3; ++c) sums[c] += m * vi[c];
    sums[3] += m * vi.norm();
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.velocities(), &va));
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return {Vec3(sums[0], sums[1], sums[2]), sums[3]};
}

TEST(SelfContact, PressedBoxesSeparateConservingMomentum) {
  const SceneConfig scene = PressedBoxes("contact_press", 0.01, 1.0 / 24.0);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  contact.Update(sim.positions());
  const std::size_t initial_pairs = contact.PairCount();
  ASSERT_GT(initial_pairs, 0u);
  double worst_ratio = 0.0;
  for (int frame = 0; frame < 6; ++frame) {
    sim.AdvanceFrame(nullptr);
    const auto [P, scale] = Momentum(sim);
    worst_ratio = std::max(worst_ratio, P.norm() / scale);
  }
  contact.Update(sim.positions());
  EXPECT_EQ(contact.PairCount(), 0u) << "still " << contact.PairCount() << " of "
                                        << initial_pairs << " nodes inside the other box";
  // The bodies move apart along x: the right box's mean x velocity is positive.
  const std::vector<double> v = sim.GatherVelocities();
  const int per_body = 27;
  double left = 0.0, right = 0.0;
  for (int n = 0; n < per_body; ++n) {
    left += v[3 * n] / per_body;
    right += v[3 * (per_body + n)] / per_body;
  }
  EXPECT_GT(right - left, 0.0);
  // Internal contact forces cancel (d is translation invariant): the momentum stays 0 to
  // the Newton tolerance.
  EXPECT_LT(worst_ratio, 1e-6) << "|sum m v| / sum m |v|";
  ::testing::Test::RecordProperty("momentum_ratio", std::to_string(worst_ratio));
  if (test::Rank() == 0) std::printf("separation speed %.4g m/s, worst |P|/sum m|v| = %.3g\n", right - left, worst_ratio);
}

/// Positions and velocities (original-id order) after `frames` frames of the boxes
/// thrown at each other (1 cm apart, 0.6 m/s each: they meet in the first frame), and in
/// *depth the deepest penetration (m) at the end of any frame.
std::vector<double> ThrownBoxes(MPI_Comm comm, const SceneConfig& scene, int frames, double* depth) {
  FemSimulation sim(comm, scene);
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  *depth = 0.0;
  for (int f = 0; f < frames; ++f) {
    sim.AdvanceFrame(nullptr);
    contact.Update(sim.positions());
    for (const SelfContact::Pair& pair : contact.GatherPairs()) *depth = std::max(*depth, std::sqrt(pair.d));
  }
  std::vector<double> state = sim.GatherPositions();
  const std::vector<double> v = sim.GatherVelocities();
  state.insert(state.end(), v.begin(), v.end());
  return state;
}

TEST(SelfContact, ThrownBoxesSameOnAnyRanksToRoundOffAndBitwiseOnTheSame) {
  const SceneConfig scene = PressedBoxes("contact_thrown", -0.01, 1.0 / 24.0, 0.6);
  double depth = 0.0, depth_again = 0.0;
  const test::OneRankComparison c = test::CompareWithOneRank([&](MPI_Comm comm) {
    double deepest = 0.0;
    std::vector<double> state = ThrownBoxes(comm, scene, 4, &deepest);
    if (comm == PETSC_COMM_WORLD) depth = deepest;
    return state;
  });
  const std::vector<double>& first = c.parallel;
  const std::vector<double> second = ThrownBoxes(PETSC_COMM_WORLD, scene, 4, &depth_again);
  EXPECT_EQ(test::DifferingValues(first, second), 0u);
  const std::size_t half = first.size() / 2;
  const double worst_x = c.worst_x, worst_v = c.worst_v;
  // The contact terms are the same bits on any rank count; the rest differs by the solver
  // tolerance (the linear solves and elastic sums run in another order).
  EXPECT_LT(worst_x, 1e-6) << "positions differ from the 1-rank run (m)";
  EXPECT_LT(worst_v, 1e-5) << "velocities differ from the 1-rank run (m/s)";
  // They met: each box's x momentum (1 kg, 0.6 m/s) is nearly all taken by the contact
  // (backward Euler at the frame step dissipates the rebound), and no node is deeper
  // than 10% of the box's size in the other at any frame's end.
  double right_v = 0.0;
  for (std::size_t n = 0; n < 27; ++n) right_v += first[half + 3 * (27 + n)] / 27;
  EXPECT_GT(right_v, -0.1 * 0.6) << "the right box should have been stopped";
  EXPECT_LT(depth, 0.01) << "deepest penetration (m)";
  if (test::Rank() == 0)
    std::printf("thrown boxes: right box vx %.4g m/s (from -0.6), deepest %.3g m, |dx| %.3g m, "
                "|dv| %.3g m/s vs 1 rank\n", right_v, depth, worst_x, worst_v);
}

/// DOT (L-BFGS with subdomain back-solves, Armijo backtracking) with contact: its
/// subdomain matrices follow the Hessian's pattern as contact blocks come and go (they
/// were reused across patterns: PETSc error 60), and the line search's guard, which
/// backtracking takes, leaves the result bitwise the same.
TEST(SelfContact, DotWithContactRunsAndTheGuardKeepsItsBits) {
  SceneConfig scene = PressedBoxes("contact_dot", -0.01, 1.0 / 24.0, 0.6);
  scene.solver.method = MinimizerMethod::kDot;
  double depth = 0.0, depth_unguarded = 0.0;
  const std::vector<double> guarded = ThrownBoxes(PETSC_COMM_WORLD, scene, 3, &depth);
  scene.self_contact.line_search_guard = false;
  const std::vector<double> unguarded = ThrownBoxes(PETSC_COMM_WORLD, scene, 3, &depth_unguarded);
  EXPECT_EQ(test::DifferingValues(guarded, unguarded), 0u);
  EXPECT_GT(depth, 0.0) << "the boxes should have met";
  EXPECT_LT(depth, 0.01) << "deepest penetration (m)";
}

/// configs/two_spheres.yaml: two spheres (178 nodes each) meet head on at 2 m/s.
TEST(SelfContact, TwoSpheresCollideAndSeparateConservingMomentum) {
  const SceneConfig scene = ReadSceneConfig(OPTISTEP_SOURCE_DIR "/configs/two_spheres.yaml");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  const int per_body = static_cast<int>(sim.model().mesh().n_global_nodes / 2);
  double worst_ratio = 0.0, depth = 0.0;
  int frames_in_contact = 0;
  double left_v = 0.0, right_v = 0.0, gap = 0.0;
  for (int frame = 0; frame < 12; ++frame) {
    sim.AdvanceFrame(nullptr);
    const auto [P, scale] = Momentum(sim);
    worst_ratio = std::max(worst_ratio, P.norm() / scale);
    contact.Update(sim.positions());
    frames_in_contact += contact.PairCount() > 0;
    for (const SelfContact::Pair& pair : contact.GatherPairs()) depth = std::max(depth, std::sqrt(pair.d));
    const std::vector<double> x = sim.GatherPositions(), v = sim.GatherVelocities();
    double left_x = 0.0, right_x = 0.0;
    left_v = right_v = 0.0;
    for (int n = 0; n < per_body; ++n) {
      left_x += x[3 * n] / per_body;
      right_x += x[3 * (per_body + n)] / per_body;
      left_v += v[3 * n] / per_body;
      right_v += v[3 * (per_body + n)] / per_body;
    }
    gap = right_x - left_x;  // center distance, 0.3 m at the start
    if (test::Rank() == 0)
      std::printf("two spheres: frame %2d pairs %2zu centers %.4f m apart, vx %+.4f %+.4f m/s\n",
                  frame + 1, contact.PairCount(), gap, left_v, right_v);
  }
  EXPECT_GT(frames_in_contact, 0) << "the spheres should have met";
  // The solve ends when each body's net residual force is below eps_r = 1e-3 of M times
  // its speed over dt (docs/methods/newton.md, "Termination"): per step the momentum may drift by that.
  EXPECT_LT(worst_ratio, 1e-3) << "|sum m v| / sum m |v|";
  // Separated: moving apart, every node outside the other sphere, centers farther than
  // they were at the deepest squash, and nothing passed through (the right one stays right).
  EXPECT_GT(right_v - left_v, 0.0) << "the spheres should move apart";
  EXPECT_EQ(contact.PairCount(), 0u);
  EXPECT_GT(gap, 0.0);
  EXPECT_LT(depth, 0.002) << "deepest penetration at a frame's end (m), 1% of the radius";
  if (test::Rank() == 0)
    std::printf("two spheres: deepest %.3g m, |P| / sum m|v| %.3g, rebound %.4f m/s of 2\n",
                depth, worst_ratio, right_v - left_v);
}

/// configs/torus_self_fold.yaml (Gast et al. 2015, Fig. 7; E = 1e4 Pa, 267 nodes) through
/// its fold: the ring lands on its rim at t = 0.11 s, sags, and its upper part folds onto
/// the lower part (pairs from t = 0.19 s). Seven frames (to t = 0.29 s) take the steps from
/// t = 0.25 s, where under friction by the potential a tet on the inner side of the bend
/// went flat. Every frame ends with no tet inverted or flat (a failed step would throw
/// StepFailure) and the deepest surface node inside the body is within 1% of the torus's
/// largest extent (0.28 m).
TEST(SelfContact, TorusFoldsOntoItselfWithoutPenetrationOrInvertedTets) {
  const SceneConfig scene = ReadSceneConfig(OPTISTEP_SOURCE_DIR "/configs/torus_self_fold.yaml", {"time.frames=7"});
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  double depth = 0.0;
  std::size_t most_pairs = 0;
  for (int frame = 0; frame < scene.time.frames; ++frame) {
    sim.AdvanceFrame(nullptr);
    EXPECT_EQ(sim.CheckState(), "") << "frame " << frame + 1;
    contact.Update(sim.positions());
    most_pairs = std::max(most_pairs, contact.PairCount());
    for (const SelfContact::Pair& pair : contact.GatherPairs()) depth = std::max(depth, std::sqrt(pair.d));
  }
  EXPECT_GT(most_pairs, 0u) << "the torus should have folded onto itself";
  EXPECT_LT(depth, 0.01 * 0.28) << "deepest self-penetration at a frame's end (m)";
  if (test::Rank() == 0) std::printf("torus fold: at most %zu pairs, deepest %.3g m\n", most_pairs, depth);
}

/// The mass-weighted mean velocity (m/s) of body b, over all ranks.
Vec3 BodyVelocity(FemSimulation& sim, int b) {
  const FemModel& model = sim.model();
  const PetscScalar* va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(sim.velocities(), &va));
  double sums[4] = {0.0, 0.0, 0.0, 0.0};
  for (PetscInt l = 0; l < model.mesh().n_owned; ++l) {
    if (model.mesh().node_body[l] != b) continue;
    const double m = model.Mass(static_cast<int>(l));
    for (int c = 0; c < 3; ++c) sums[c] += m * va[3 * l + c];
    sums[3] += m;
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(sim.velocities(), &va));
  MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  return Vec3(sums[0], sums[1], sums[2]) / sums[3];
}

/// Gast et al. 2015 Sec. 3.3: with the guard above the energy without contact, the
/// evaluation skips detection and returns that energy; with it at or above the full
/// energy, the evaluation is complete and the same bits as without a guard.
TEST(SelfContact, LineSearchGuardSkipsDetectionOnlyAboveTheBound) {
  PressedBoxesStep boxes("contact_guard");
  auto& [scene, sim, potential] = boxes;
  Vec x = sim.positions();
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  contact.Update(x);
  double contact_energy = contact.Energy();
  MPI_Allreduce(MPI_IN_PLACE, &contact_energy, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  ASSERT_GT(contact_energy, 0.0);
  const double full = potential.Energy(x);
  ASSERT_NE(potential.self_contact(), nullptr);
  const std::size_t detections = potential.self_contact()->detections();
  EXPECT_EQ(potential.StepContactCounts().evaluations, 1u);
  const double rest = full - contact_energy;
  // At or above the full energy: complete, bitwise.
  potential.SetEnergyGuard(full);
  Vec y;
  OPTISTEP_PETSC(VecDuplicate(x, &y));
  OPTISTEP_PETSC(VecCopy(x, y));
  OPTISTEP_PETSC(VecShift(y, 0.0));  // same values: the detection cache holds
  EXPECT_EQ(potential.Energy(y), full);
  EXPECT_EQ(potential.StepContactCounts().skipped, 0u);
  // Below the energy without contact: skipped, the rest of E returned.
  potential.SetEnergyGuard(rest - 1e-6 * std::abs(rest) - 1e-9);
  RandomField(sim.model(), y, 1e-9, 3);  // new positions, so a detection would show
  OPTISTEP_PETSC(VecAXPY(y, 1.0, x));
  const double guarded = potential.Energy(y);
  EXPECT_EQ(potential.StepContactCounts().skipped, 1u);
  EXPECT_EQ(potential.self_contact()->detections(), detections) << "no detection when skipped";
  EXPECT_EQ(potential.StepContactCounts().evaluations, 2u);
  potential.SetEnergyGuard(std::numeric_limits<double>::infinity());
  const double complete = potential.Energy(y);
  contact.Update(y);
  double contact_y = contact.Energy();
  MPI_Allreduce(MPI_IN_PLACE, &contact_y, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
  EXPECT_NEAR(guarded, complete - contact_y, 1e-12 * std::abs(complete));
  EXPECT_GT(complete, guarded);
  VecDestroy(&y);
}

/// The detection's trees and Verlet lists are a cache: along a path of positions (the
/// pressed boxes squeezed in 5 mm steps, each node also jittered), a SelfContact that
/// reuses them until a node has moved half the skin finds the same pairs, bit for bit,
/// as a fresh one at every position, and rebuilds less often than it detects.
TEST(SelfContact, ReusedTreesFindTheSamePairsAsFreshOnes) {
  const SceneConfig scene = PressedBoxes("contact_reuse", 0.002, 0.02);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  SelfContact reused(sim.model(), scene.self_contact.stiffness);
  Vec x0 = sim.positions(), y, jitter;
  OPTISTEP_PETSC(VecDuplicate(x0, &y));
  OPTISTEP_PETSC(VecDuplicate(x0, &jitter));
  std::size_t pairs_seen = 0;
  for (int k = 0; k < 12; ++k) {
    // The right box (original ids from 27 on) moved 5 mm further into the left each time.
    OPTISTEP_PETSC(VecCopy(x0, y));
    RandomField(sim.model(), jitter, 2e-4, 10 + k);
    OPTISTEP_PETSC(VecAXPY(y, 1.0, jitter));
    PetscScalar* ya = nullptr;
    OPTISTEP_PETSC(VecGetArray(y, &ya));
    for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l)
      if (sim.model().mesh().node_original_id[l] >= 27) ya[3 * l] -= 5e-3 * k;
    OPTISTEP_PETSC(VecRestoreArray(y, &ya));
    reused.Update(y);
    SelfContact fresh(sim.model(), scene.self_contact.stiffness);
    fresh.Update(y);
    ASSERT_EQ(reused.pairs().size(), fresh.pairs().size()) << "position " << k;
    for (std::size_t i = 0; i < fresh.pairs().size(); ++i) {
      const SelfContact::Pair &a = reused.pairs()[i], &b = fresh.pairs()[i];
      EXPECT_EQ(a.p, b.p);
      EXPECT_EQ(a.triangle, b.triangle);
      EXPECT_EQ(a.feature.count, b.feature.count);
      EXPECT_EQ(a.feature.nodes, b.feature.nodes);
      EXPECT_EQ(a.d, b.d);
    }
    pairs_seen += fresh.pairs().size();
  }
  EXPECT_GT(pairs_seen, 0u);
  EXPECT_EQ(reused.detections(), 12u);
  EXPECT_LT(reused.rebuilds(), reused.detections());
  EXPECT_GT(reused.rebuilds(), 1u) << "the path moves the right box beyond half the skin";
  if (test::Rank() == 0)
    std::printf("reused trees: %zu rebuilds for %zu detections (skin %.3g m), %zu pairs\n",
                reused.rebuilds(), reused.detections(), reused.skin(), pairs_seen);
  VecDestroy(&y);
  VecDestroy(&jitter);
}

/// Each rank tests the surface nodes it owns against its local tets and its halo: the
/// same pairs (node, triangle, feature, d bit for bit), in the same order, on any rank
/// count as on one rank, where one rank holds the whole mesh. Some pairs must span two
/// ranks (else the halo is not exercised). Returns the halo growths (see SelfContact).
std::size_t ExpectSamePairsAsOneRank(const SceneConfig& scene, double jitter) {
  struct Found {
    std::vector<double> flat;  // p, triangle, feature, d per pair
    std::size_t cross = 0, growths = 0;
  };
  auto find = [&](MPI_Comm comm) {
    FemSimulation sim(comm, scene);
    SelfContact contact(sim.model(), scene.self_contact.stiffness);
    Vec y;
    OPTISTEP_PETSC(VecDuplicate(sim.positions(), &y));
    RandomField(sim.model(), y, jitter, 21);
    OPTISTEP_PETSC(VecAXPY(y, 1.0, sim.positions()));
    contact.Update(y);
    VecDestroy(&y);
    Found found;
    for (const SelfContact::Pair& q : contact.GatherPairs())
      found.flat.insert(found.flat.end(), {double(q.p), double(q.triangle[0]), double(q.triangle[1]),
                                           double(q.triangle[2]), double(q.feature.count),
                                           double(q.feature.nodes[0]), double(q.feature.nodes[1]), q.d});
    found.cross = CrossRankPairs(sim.model(), contact);
    found.growths = contact.halo_growths();
    const SelfContact::Holdings held = contact.held();
    if (test::Rank() == 0)
      std::printf("rank %d of %d: %zu of %lld tets held (%zu halo), %zu triangles (%zu halo), %zu pairs\n",
                test::Rank(), sim.model().mesh().comm == PETSC_COMM_SELF ? 1 : test::Size(), held.tets,
                static_cast<long long>(sim.model().mesh().n_global_tets), held.halo_tets, held.triangles,
                held.halo_triangles, contact.pairs().size());
    return found;
  };
  Found all;
  const test::OneRankComparison c = test::CompareWithOneRank([&](MPI_Comm comm) {
    Found found = find(comm);
    if (comm == PETSC_COMM_WORLD) all = found;
    return found.flat;
  });
  EXPECT_FALSE(all.flat.empty());
  if (test::Size() > 1) EXPECT_GT(all.cross, 0u) << "no pair spans two ranks";
  if (c.serial.size() != all.flat.size()) return all.growths;
  EXPECT_EQ(test::DifferingValues(all.flat, c.serial), 0u);
  if (test::Rank() == 0)
    std::printf("%zu pairs, %zu spanning two ranks, %zu halo growths\n", all.flat.size() / 8, all.cross, all.growths);
  return all.growths;
}

TEST(SelfContact, PairsAreTheSameOnAnyRankCount) {
  ExpectSamePairsAsOneRank(PressedBoxes("contact_ranks", 0.01, 0.02), 1e-3);
}

/// Two 0.1 m boxes of 6 x 6 x 6 hexes, the right one's face 5 cm inside the left: its
/// nodes are up to 5 cm from the left's surface, farther than the first contact distance
/// h = 2 skin (about 3.8 cm), so ranks whose queries end beyond their halo grow it.
TEST(SelfContact, DeepPairsGrowTheHaloAndAreTheSameOnAnyRankCount) {
  const std::size_t growths = ExpectSamePairsAsOneRank(PressedBoxes("contact_deep", 0.05, 0.02, 0.0, 6), 1e-4);
  if (test::Size() > 1) EXPECT_GT(growths, 0u) << "the halo should have grown";
}

/// Friction after the solve (Sec. 5.3) between the pressed boxes moving at random
/// velocities: the impulses change the total momentum by round-off only, never raise
/// the kinetic energy, and mu = 0 changes nothing.
TEST(SelfContact, FrictionImpulsesConserveMomentum) {
  const SceneConfig scene = PressedBoxes("contact_friction_momentum", 0.01, 0.02);
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  Vec v = sim.velocities();
  RandomField(sim.model(), v, 0.5, 4);
  auto kinetic = [&] {
    const PetscScalar* va = nullptr;
    OPTISTEP_PETSC(VecGetArrayRead(v, &va));
    double e = 0.0;
    for (PetscInt l = 0; l < sim.model().mesh().n_owned; ++l)
      for (int c = 0; c < 3; ++c) e += 0.5 * sim.model().Mass(static_cast<int>(l)) * va[3 * l + c] * va[3 * l + c];
    OPTISTEP_PETSC(VecRestoreArrayRead(v, &va));
    MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD);
    return e;
  };
  const std::vector<double> before = sim.GatherVelocities();
  contact.ApplyFriction(sim.positions(), v, 0.0, 0.02);
  EXPECT_EQ(test::DifferingValues(before, sim.GatherVelocities()), 0u) << "mu = 0 changed v";
  ASSERT_GT(contact.PairCount(), 0u);
  const auto [P0, scale] = Momentum(sim);
  const double K0 = kinetic();
  for (double mu : {0.2, 1e6}) {
    contact.ApplyFriction(sim.positions(), v, mu, 0.02);
    const auto [P, unused] = Momentum(sim);
    (void)unused;
    EXPECT_LT((P - P0).norm(), 1e-14 * scale) << "mu " << mu;
    if (test::Rank() == 0) std::printf("friction mu %g: |dP| %.3g of sum m|v| %.3g\n", mu, (P - P0).norm(), scale);
  }
  EXPECT_LT(kinetic(), K0);
  // Bitwise the same on any rank count: every rank applies every pair in the same order.
  const std::vector<double> after = sim.GatherVelocities();
  std::vector<double> serial(after.size());
  if (test::Rank() == 0) {
    FemSimulation one(PETSC_COMM_SELF, scene);
    SelfContact contact1(one.model(), scene.self_contact.stiffness);
    RandomField(one.model(), one.velocities(), 0.5, 4);
    for (double mu : {0.0, 0.2, 1e6}) contact1.ApplyFriction(one.positions(), one.velocities(), mu, 0.02);
    serial = one.GatherVelocities();
  }
  MPI_Bcast(serial.data(), static_cast<int>(serial.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  EXPECT_EQ(test::DifferingValues(after, serial), 0u);
}

/// A 0.1 m box (1 kg) sliding at v0 = 1 m/s on a slab held by a Dirichlet condition,
/// gravity 9.81 m/s^2, dt = 5 ms, self-contact friction mu = 0.3: Coulomb friction decelerates it at
/// mu g = 2.943 m/s^2 until it stops at t = v0 / (mu g) = 0.34 s (closed form), then it
/// stays at rest.
TEST(SelfContact, BoxSlidingOnAHeldSlabDeceleratesAtMuG) {
  const std::string dir = test::SharedTempDir("contact_slide");
  test::WriteBoxMesh(dir + "/box", 2, 2, 2, Vec3(0.1, 0.1, 0.1));
  test::WriteBoxMesh(dir + "/slab", 6, 1, 3, Vec3(0.6, 0.05, 0.3));
  const double mu = 0.3, g = 9.81, v0 = 1.0, dt = 0.005;
  std::ostringstream yaml;
  yaml << "time: {dt: " << dt << ", frame_dt: " << dt << ", frames: " << static_cast<int>(0.5 / dt + 0.5) << "}\n"
       << "gravity: [0, " << -g << ", 0]\n"
       << "bodies:\n"
       << "  - {name: box, mesh: box.node, material: {E: 1.0e5, nu: 0.3, density: 1000},\n"
       << "     transform: {translate: [0.013, 0, 0.017]}, initial_velocity: [" << v0 << ", 0, 0]}\n"
       << "  - {name: slab, mesh: slab.node, material: {E: 1.0e5, nu: 0.3, density: 1000},\n"
       << "     transform: {translate: [-0.2, -0.05, -0.1]}}\n"
       << "boundary_conditions:\n"
       << "  - {select: {box: {min: [-1, -1, -1], max: [1, 1, 1]}, body: slab}}\n"
       << "self_contact: {enabled: true, stiffness: 1.0e8, friction: " << mu << "}\n";
  const SceneConfig scene = test::MakeScene(dir + "/scene.yaml", yaml.str());
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  // Least-squares slope of vx(t) over 0.1 s <= t <= 0.3 s (sliding, after the first
  // bounce of the penalty contact has died out), and vy's mean magnitude there.
  double st = 0.0, sv = 0.0, stt = 0.0, stv = 0.0, vy = 0.0, normal = 0.0;
  int n = 0;
  Vec3 vel = Vec3::Zero();
  SelfContact contact(sim.model(), scene.self_contact.stiffness);
  for (int step = 1; step <= static_cast<int>(0.5 / dt + 0.5); ++step) {
    sim.AdvanceFrame(nullptr);
    vel = BodyVelocity(sim, 0);
    const double t = step * dt;
    if (t > 0.1 - 1e-9 && t < 0.3 + 1e-9) {
      st += t, sv += vel[0], stt += t * t, stv += t * vel[0], vy += std::abs(vel[1]);
      contact.Update(sim.positions());
      for (const SelfContact::Pair& pair : contact.GatherPairs()) {  // |dPhi/dx_p| = 2 Phi' sqrt(d)
        double first = 0.0;
        SelfContactPenalty(scene.self_contact.stiffness, pair.d, &first, nullptr);
        normal += 2.0 * first * std::sqrt(pair.d);
      }
      ++n;
    }
  }
  normal /= n;
  const double slope = (n * stv - st * sv) / (n * stt - st * st);
  vy /= n;
  if (test::Rank() == 0)
    std::printf("sliding box: deceleration %.4f m/s^2 (mu g = %.4f), mean normal force %.4f N "
                "(weight %.4f N), mean |vy| %.2g m/s, v(0.5 s) = (%.2g, %.2g, %.2g) m/s\n",
                -slope, mu * g, normal, g, vy, vel[0], vel[1], vel[2]);
  // The normal forces carry the weight (the box's vertical motion, |vy| below 1 mm/s, has
  // died out), so every sliding contact's impulse is capped at mu times its share of
  // M g dt. The rest is time discretization: the deceleration is 1.4% below mu g at
  // dt = 0.01 s and 0.1% above at 0.005 s, so 1% at dt = 0.005 s.
  EXPECT_LT(vy, 1e-3);
  EXPECT_NEAR(normal, g, 0.01 * g) << "mean sum of normal forces (N) vs the weight";
  EXPECT_NEAR(-slope, mu * g, 0.01 * mu * g);
  // Stopped by 0.5 s (> 0.34 s) and held by static friction.
  EXPECT_LT(std::abs(vel[0]), 1e-3);
}

}  // namespace
}  // namespace optistep
