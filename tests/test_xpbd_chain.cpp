// XPBD on particle chains and cloths (particles/XpbdParticles.hpp, ChainXpbd.hpp; Macklin et
// al. 2019). The kernel checks step a whole system on each rank (rank-local), so each rank
// checks it; the scene checks run split over these ranks (METIS, colored Gauss-Seidel).
// Against closed forms:
//  - a zero-compliance distance constraint holds its length to round-off after one substep;
//  - a mass m hanging from a constraint of compliance alpha settles at the stretch m g alpha
//    (Hooke's law, alpha = 1 / k);
//  - the hanging chain of the paper's Sec. 6.1 (20 particles of 1 kg, 0.01 m apart,
//    inextensible, the top one held), with and without a heavy bottom particle (1e5 kg): the
//    bottom particle's error is at least 10x smaller with 100 substeps x 1 iteration than
//    with 1 step x 100 iterations, and the top constraint's force estimate lambda / dt_s^2
//    is the weight it carries within 1%;
//  - configs/hanging_chain.yaml, run as a scene (discretization: particles) on these ranks,
//    is the kernel stepped by hand with its constraints in color order (to the round-off of
//    its rest lengths);
//  - configs/hanging_chain.yaml and configs/hanging_cloth.yaml split over these ranks: every
//    rank owns a strict subset of the particles (the owned sets tile the scene), and the
//    trajectory is bitwise the one-rank run's;
//  - configs/hanging_cloth.yaml, settled, hangs its weight on its two pinned corners;
//  - cloth frames: the .xdmf shows each frame's cloth as a Triangle surface whose triangles are
//    the .off file's faces, beside the constraints' polylines with per-segment force;
//  - cloth bending (bending_compliance): a hinge of two triangles, one pinned, the other's
//    free vertex under gravity settles at the angle where gravity's torque meets the bending
//    spring's (closed form; two compliances), and without bending it swings down;
//  - free fall is the closed form of symplectic Euler; internal constraints keep the linear
//    momentum to round-off;
//  - the total energy (stats.csv `total_energy`, XpbdParticles::Energy) of an undamped mass on a
//    spring: XPBD's fixed point on one linear constraint is implicit Euler, reached in one
//    pass, whose energy shrinks by exactly 1 / (1 + (omega h)^2) per step h: over 1 s of
//    1/60 s frames, 19% of E0 is left with 1 substep x 40 iterations and 96% with 40
//    substeps x 1 (Macklin et al. 2019, Fig. 6, on one spring);
//  - configs/hanging_cloth.yaml started horizontal (it swings down about its two pinned
//    corners), undamped: the total energy (elastic part alpha f^2 / 2 of the force estimates)
//    is never above its value at rest, E0 = sum m g y (the paper's Fig. 6: XPBD loses energy);
//  - a chain laid over a sphere with friction (collision_objects of a particle scene) comes to
//    rest on it: every particle on the sphere's surface, none inside it, the kinetic energy
//    gone, the middle particle on top to 1 mm (the symmetric chain is in equilibrium there).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/ParticleSimulation.hpp"
#include "io/Hdf5File.hpp"
#include "app/SceneConfig.hpp"
#include "io/SurfaceMesh.hpp"
#include "particles/XpbdParticles.hpp"
#include "partition/GreedyColoring.hpp"

namespace optistep {
namespace {

const Vec3 kGravity(0.0, -9.81, 0.0);

/// The paper's chain: particle 0 held at the origin, 19 more below it 0.01 m apart, 1 kg
/// each but the bottom one (bottom_mass), inextensible unless alpha > 0.
XpbdParticles HangingChain(double bottom_mass, double alpha = 0.0, double damping = 0.0) {
  std::vector<Vec3> x;
  std::vector<double> w;
  std::vector<XpbdParticles::Constraint> constraints;
  for (int k = 0; k < 20; ++k) {
    x.emplace_back(0.0, -0.01 * k, 0.0);
    w.push_back(k == 0 ? 0.0 : k == 19 ? 1.0 / bottom_mass : 1.0);
    if (k > 0) constraints.push_back({k - 1, k, 0.01, alpha});
  }
  return XpbdParticles(x, w, constraints, kGravity, damping);
}

/// The paper's chain with its links in the scenes' color order (ChainXpbd: greedy coloring in
/// link order, so the even links 0-1, 2-3, ... first, then the odd ones).
XpbdParticles ColorOrderedChain(double bottom_mass) {
  const XpbdParticles by_id = HangingChain(bottom_mass);
  std::vector<std::int64_t> pairs;
  for (const auto& c : by_id.constraints()) pairs.insert(pairs.end(), {c.i, c.j});
  int n_colors = 0;
  const std::vector<int> color = GreedyColors(pairs, 2, 20, &n_colors);
  EXPECT_EQ(n_colors, 2);
  std::vector<XpbdParticles::Constraint> colored;
  for (int c = 0; c < n_colors; ++c)
    for (size_t k = 0; k < color.size(); ++k)
      if (color[k] == c) colored.push_back(by_id.constraints()[k]);
  std::vector<double> w(20, 1.0);
  w[0] = 0.0;
  w[19] = 1.0 / bottom_mass;
  return XpbdParticles(by_id.x(), w, colored, kGravity, 0.0);
}

TEST(XpbdChain, ZeroComplianceHoldsItsLengthAfterOneSubstep) {
  // Two free particles flying apart and tumbling, under gravity, of unequal masses.
  XpbdParticles pair({Vec3(0.1, 0.2, 0.3), Vec3(0.6, -0.1, 0.2)}, {1.0 / 3.0, 1.0 / 0.7},
                     {{0, 1, 0.5, 0.0}}, kGravity, 0.0);
  pair.v()[0] = Vec3(-2.0, 1.0, 0.5);
  pair.v()[1] = Vec3(3.0, 0.5, -1.0);
  pair.Substep(1.0 / 60.0, 1);
  const double length = (pair.x()[0] - pair.x()[1]).norm();
  EXPECT_NEAR(length, 0.5, 4e-16);
}

TEST(XpbdChain, HangingMassStretchesByMgAlpha) {
  // 2 kg on a spring of k = 1e4 N/m (alpha = 1e-4 m/N) held at the top: m g alpha = 1.962 mm.
  const double m = 2.0, alpha = 1e-4;
  XpbdParticles spring({Vec3::Zero(), Vec3(0.0, -0.1, 0.0)}, {0.0, 1.0 / m}, {{0, 1, 0.1, alpha}},
                       kGravity, 0.01);
  for (int f = 0; f < 120; ++f) spring.Step(1.0 / 60.0, 20, 1);
  const double stretch = -spring.x()[1][1] - 0.1;
  EXPECT_NEAR(stretch, m * 9.81 * alpha, 1e-9 * m * 9.81 * alpha) << "m";
  EXPECT_NEAR(spring.Force(0), m * 9.81, 1e-9 * m * 9.81) << "N";
}

TEST(XpbdChain, EnergyOfASpringDecaysAsImplicitEulerAtTheSubstep) {
  // 1 kg on a spring of k = 100 N/m (omega = 10 rad/s), no gravity, started 0.01 m stretched
  // at rest: E0 = k s^2 / 2 = 0.005 J. One second of 1/60 s frames.
  const double k = 100.0, s0 = 0.01, omega = 10.0, dt = 1.0 / 60.0;
  const auto energy_after = [&](int substeps, int iterations) {
    XpbdParticles spring({Vec3::Zero(), Vec3(0.1 + s0, 0.0, 0.0)}, {0.0, 1.0},
                         {{0, 1, 0.1, 1.0 / k}}, Vec3::Zero(), 0.0);
    EXPECT_NEAR(spring.Energy(), 0.5 * k * s0 * s0, 1e-15) << "J at the start";
    for (int f = 0; f < 60; ++f) spring.Step(dt, substeps, iterations);
    return spring.Energy();
  };
  const double e0 = 0.5 * k * s0 * s0;
  // Implicit Euler at step h, n steps: E0 (1 + (omega h)^2)^-n.
  const auto implicit = [&](double h, int n) { return e0 * std::pow(1.0 + omega * omega * h * h, -n); };
  const double one_step = energy_after(1, 40), substepped = energy_after(40, 1);
  EXPECT_NEAR(one_step, implicit(dt, 60), 1e-9 * e0) << "J: 1 x 40";
  EXPECT_NEAR(substepped, implicit(dt / 40, 60 * 40), 1e-9 * e0) << "J: 40 x 1";
  if (test::Rank() == 0)
    std::printf("[ measured ] spring total_energy after 1 s: 1x40 %.6g J (implicit Euler %.6g J), "
                "40x1 %.6g J (%.6g J), E0 %.6g J\n", one_step, implicit(dt, 60), substepped,
                implicit(dt / 40, 2400), e0);
}

/// Kinetic damping (dynamic relaxation): `substeps` substeps of dt_s with `iterations` each, all velocities zeroed
/// whenever the kinetic energy sum_p m_p |v_p|^2 has just passed a peak. It finds the
/// scheme's own rest state, about which an undamped chain or cloth would swing for ever.
/// mass per particle in global order; with `scene` (collective) particles is its split share,
/// and the energy is summed over the gathered velocities in global order on every rank.
void SettleByKineticDamping(XpbdParticles& particles, const std::vector<double>& mass, double dt_s,
                            long substeps, int iterations, const ChainXpbd* scene = nullptr) {
  double last = 0.0;
  for (long s = 0; s < substeps; ++s) {
    particles.Substep(dt_s, iterations);
    const std::vector<Vec3> v = scene ? scene->Gather(particles.v()) : particles.v();
    double e = 0.0;
    for (size_t p = 0; p < mass.size(); ++p) e += mass[p] * v[p].squaredNorm();
    if (e < last) {
      for (Vec3& v : particles.v()) v.setZero();
      last = 0.0;
    } else {
      last = e;
    }
  }
}

/// The bottom particle's distance (m) from where an inextensible chain puts it (0.19 m
/// below the top), and the top constraint's force estimate (N), in `substeps` x `iterations`
/// per frame of 1/60 s, once the chain has settled: 10 s of kinetic damping, then 1 s as it
/// stands.
std::pair<double, double> SettledChain(double bottom_mass, int substeps, int iterations,
                                       bool color_order = false) {
  XpbdParticles chain = color_order ? ColorOrderedChain(bottom_mass) : HangingChain(bottom_mass);
  std::vector<double> mass(20, 1.0);
  mass[19] = bottom_mass;
  SettleByKineticDamping(chain, mass, 1.0 / 60.0 / substeps, 600L * substeps, iterations);
  for (int f = 0; f < 60; ++f) chain.Step(1.0 / 60.0, substeps, iterations);
  return {(chain.x()[19] - Vec3(0.0, -0.19, 0.0)).norm(), chain.Force(0)};
}

/// The hinge cloth: triangles (0, 1, 2) and (1, 0, 3) in the plane y = 0 about the edge 0-1
/// along x, vertices 0, 1, 2 pinned, vertex 3 (0.1 kg) free at (0.5, 0, 0.5); inextensible
/// edges; `bending` the cloth's bending entry ("" for none). Each rank runs it alone (its
/// 60000 substeps would be mostly halo exchanges; ScenesAreSplitOverTheRanks... covers the
/// split).
std::unique_ptr<ParticleSimulation> HingeCloth(const std::string& tag, const std::string& bending) {
  const std::string dir = test::SharedTempDir("xpbd_hinge_" + tag);
  if (test::Rank() == 0)
    std::ofstream(dir + "/hinge.off") << "OFF\n4 2 0\n0 0 0\n1 0 0\n0.5 0 -0.5\n0.5 0 0.5\n3 0 1 2\n3 1 0 3\n";
  MPI_Barrier(MPI_COMM_WORLD);
  const SceneConfig scene = test::MakeScene(dir + "/hinge.yaml", R"(
discretization: particles
integrator: xpbd
xpbd: {substeps: 100}
time: {frame_rate: 60, frames: 1}
cloths:
  - {mesh: hinge.off, mass: 0.1, pinned: [0, 1, 2])" + bending + R"(}
)");
  return std::make_unique<ParticleSimulation>(PETSC_COMM_SELF, scene);
}

/// The root theta in (0, 1.5) rad of m g cos(theta) = (1 - cos(theta/2)) sin(theta/2) / alpha.
double HingeAngle(double mg, double alpha) {
  double lo = 0.0, hi = 1.5;
  while (hi - lo > 1e-14) {
    const double theta = 0.5 * (lo + hi);
    const double residual = mg * std::cos(theta) - (1.0 - std::cos(theta / 2)) * std::sin(theta / 2) / alpha;
    (residual > 0.0 ? lo : hi) = theta;
  }
  return 0.5 * (lo + hi);
}

/// The hinge with bending compliance alpha (m/N), settled by kinetic damping: turned down by
/// theta about the hinge, the bending distance is cos(theta / 2) (rest 1 m), and dU/dtheta = 0
/// for U = -m g sin(theta) / 2 + (cos(theta / 2) - 1)^2 / (2 alpha) gives HingeAngle. About
/// the flat state the distance changes only to second order (theta^2 / 8).
void ExpectHingeSettles(double alpha, const std::string& text) {
  const double m = 0.1, g = 9.81, dt = 1.0 / 60.0;
  const double theta = HingeAngle(m * g, alpha);
  const auto soft = HingeCloth("soft" + text, ", bending_compliance: " + text);
  ASSERT_EQ(soft->chains().segments().size(), 6u);
  SettleByKineticDamping(soft->chains().particles(), {0.0, 0.0, 0.0, m}, dt / 100, 600L * 100, 1,
                         &soft->chains());
  const Vec3 free = soft->chains().Gather(soft->chains().particles().x())[3];
  const Vec3 expected(0.5, -0.5 * std::sin(theta), 0.5 * std::cos(theta));
  if (test::Rank() == 0)
    std::printf("[ measured ] hinge, alpha %s m/N: settled at (%.6g, %.6g, %.6g), closed form "
                "(%.6g, %.6g, %.6g): theta %.4f rad\n", text.c_str(), free[0], free[1],
                free[2], expected[0], expected[1], expected[2], theta);
  EXPECT_LT((free - expected).norm(), 1e-4) << "m, alpha " << text;
}

TEST(XpbdChain, ClothBendingBalancesAHinge) {
  {
    const auto free = HingeCloth("none", "");
    ASSERT_EQ(free->chains().segments().size(), 5u);
    for (int f = 0; f < 18; ++f) free->chains().particles().Step(1.0 / 60.0, 100, 1);
    // A pendulum of radius 0.5 m released level: after 0.3 s it is far below the plane.
    EXPECT_LT(free->chains().Gather(free->chains().particles().x())[3][1], -0.3)
        << "m: without bending it swings down";
  }
  ExpectHingeSettles(0.01, "0.01");
  ExpectHingeSettles(0.001, "0.001");
}

TEST(XpbdChain, SubstepsBeatIterationsOnThePapersHangingChain) {
  // In chain order (links top to bottom) and in the color order the scenes use.
  for (const auto& [bottom, color_order] : {std::pair<double, bool>{1.0, false}, {1e5, false}, {1.0, true}, {1e5, true}}) {
    const auto [substep_error, substep_force] = SettledChain(bottom, 100, 1, color_order);
    const auto [iteration_error, iteration_force] = SettledChain(bottom, 1, 100, color_order);
    const double weight = (18.0 + bottom) * 9.81;
    if (test::Rank() == 0)
      std::printf("[ measured ] %s order, bottom %g kg: error %.4g m (100 substeps x 1) vs %.4g m "
                  "(1 x 100 iterations), ratio %.3g; top force %.7g N (%.7g N) vs weight %.7g N\n",
                  color_order ? "color" : "chain", bottom, substep_error, iteration_error,
                  iteration_error / substep_error, substep_force, iteration_force, weight);
    EXPECT_GT(iteration_error, 10.0 * substep_error) << "bottom mass " << bottom << " kg";
    EXPECT_NEAR(substep_force, weight, 0.01 * weight) << "bottom mass " << bottom << " kg";
  }
}

TEST(XpbdChain, TheHangingChainSceneIsTheKernel) {
  const SceneConfig scene = ReadSceneConfig(test::SourcePath("configs/hanging_chain.yaml"),
                                            {"time.frames=30"});
  ParticleSimulation sim(PETSC_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  XpbdParticles chain = ColorOrderedChain(1e5);
  for (int f = 0; f < 30; ++f) chain.Step(1.0 / 60.0, 100, 1);
  const std::vector<Vec3> x = sim.chains().Gather(sim.chains().particles().x());
  const std::vector<Vec3> v = sim.chains().Gather(sim.chains().particles().v());
  ASSERT_EQ(x.size(), 20u);
  // The scene's rest lengths are distances of start + k step, within round-off of 0.01 m.
  double worst_x = 0.0, worst_v = 0.0;
  for (int p = 0; p < 20; ++p) {
    worst_x = std::max(worst_x, (x[p] - chain.x()[p]).norm());
    worst_v = std::max(worst_v, (v[p] - chain.v()[p]).norm());
  }
  EXPECT_LT(worst_x, 1e-9) << "m";
  EXPECT_LT(worst_v, 1e-6) << "m/s";
  EXPECT_NEAR(sim.time(), 0.5, 1e-15);
  EXPECT_GT(chain.MaxStrain(), 0.1) << "the heavy chain stretches";
}

/// The scene configs/<name>.yaml run for `frames` frames on comm; every position and
/// velocity in scene order (on every rank of comm), and the particles each rank owns.
std::vector<Vec3> RunParticleScene(MPI_Comm comm, const std::string& name, int frames,
                                   std::vector<std::int64_t>* owned = nullptr) {
  const SceneConfig scene = ReadSceneConfig(test::SourcePath("configs/" + name + ".yaml"),
                                            {"time.frames=" + std::to_string(frames)});
  ParticleSimulation sim(comm, scene);
  for (int f = 0; f < frames; ++f) sim.AdvanceFrame(nullptr);
  std::vector<Vec3> xv = sim.chains().Gather(sim.chains().particles().x());
  const std::vector<Vec3> v = sim.chains().Gather(sim.chains().particles().v());
  xv.insert(xv.end(), v.begin(), v.end());
  if (owned) *owned = sim.chains().owned_per_rank();
  return xv;
}

TEST(XpbdChain, ScenesAreSplitOverTheRanksAndBitwiseTheOneRankRun) {
  for (const auto& [name, frames] : {std::pair<std::string, int>{"hanging_chain", 20}, {"hanging_cloth", 10}}) {
    std::vector<std::int64_t> owned;
    std::vector<Vec3> parallel;
    const test::OneRankComparison c = test::CompareWithOneRank([&](MPI_Comm comm) {
      const std::vector<Vec3> state =
          RunParticleScene(comm, name, frames, comm == PETSC_COMM_WORLD ? &owned : nullptr);
      if (comm == PETSC_COMM_WORLD) parallel = state;
      std::vector<double> flat;
      for (const Vec3& a : state) flat.insert(flat.end(), {a[0], a[1], a[2]});
      return flat;
    });
    const std::int64_t total = static_cast<std::int64_t>(parallel.size() / 2);
    ASSERT_EQ(owned.size(), static_cast<size_t>(test::Size()));
    std::int64_t sum = 0;
    for (std::int64_t n : owned) {
      sum += n;
      EXPECT_GT(n, 0) << name << ": every rank owns particles";
      if (test::Size() > 1) EXPECT_LT(n, total) << name << ": a strict subset";
    }
    EXPECT_EQ(sum, total) << name << ": the owned sets tile the scene";
    EXPECT_EQ(test::DifferingValues(c.parallel, c.serial), 0u) << name << " against the 1-rank run";
    double speed = 0.0;
    for (size_t p = parallel.size() / 2; p < parallel.size(); ++p) speed = std::max(speed, parallel[p].norm());
    EXPECT_GT(speed, 0.01) << name << ": m/s, it moves";
  }
}

TEST(XpbdChain, ClothFramesAreTriangleSurfaces) {
  const std::string dir = test::SharedTempDir("xpbd_cloth_frames");
  const SceneConfig scene = ReadSceneConfig(test::SourcePath("configs/hanging_cloth.yaml"),
                                            {"time.frames=2", "output.directory=" + dir});
  ParticleSimulation sim(PETSC_COMM_WORLD, scene);
  RunOptions options;
  options.print = false;
  sim.Run(options);
  const TriangleSurface off = ReadSurfaceMesh(test::SourcePath("configs/meshes/cloth_21x21.off"));
  Hdf5File mesh = Hdf5File::Open(PETSC_COMM_WORLD, dir + "/hanging_cloth_mesh.h5");
  const int64_t n = static_cast<int64_t>(off.triangles.size());
  ASSERT_EQ(mesh.Shape("triangles"), (std::vector<int64_t>{n, 3}));
  const std::vector<int64_t> triangles = mesh.ReadArray<int64_t>("triangles", 0, n);
  size_t differing = 0;
  for (int64_t t = 0; t < n; ++t)
    for (int a = 0; a < 3; ++a) differing += triangles[3 * t + a] != off.triangles[t][a];
  EXPECT_EQ(differing, 0u) << "the .off faces";
  EXPECT_EQ(mesh.Shape("segments"), (std::vector<int64_t>{static_cast<int64_t>(sim.chains().segments().size()), 2}));
  mesh.Close();
  std::ifstream in(dir + "/hanging_cloth.xdmf");
  const std::string xdmf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto count = [&](const std::string& what) {
    size_t k = 0;
    for (size_t at = xdmf.find(what); at != std::string::npos; at = xdmf.find(what, at + 1)) ++k;
    return k;
  };
  // Frames 0, 1, 2: each a spatial collection of the surface and the segments.
  EXPECT_EQ(count("CollectionType=\"Spatial\""), 3u);
  EXPECT_EQ(count("<Topology TopologyType=\"Triangle\" NumberOfElements=\"" + std::to_string(n) + "\">"), 3u);
  EXPECT_EQ(count("<Topology TopologyType=\"Polyline\""), 3u);
  EXPECT_EQ(count("<Attribute Name=\"force\" AttributeType=\"Scalar\" Center=\"Cell\">"), 3u);
}

TEST(XpbdChain, TheHangingClothsCornersCarryItsWeight) {
  // configs/hanging_cloth.yaml (441 particles of 1 g, k = 1e7 N/m springs, pinned at two
  // corners): settled by kinetic damping (as the chain above), the force estimates of the
  // constraints at the two pins add up to the weight of the 439 free particles.
  const SceneConfig scene = ReadSceneConfig(test::SourcePath("configs/hanging_cloth.yaml"));
  ParticleSimulation sim(PETSC_COMM_WORLD, scene);
  XpbdParticles& cloth = sim.chains().particles();
  const double dt_s = 1.0 / 60.0 / 40.0;
  SettleByKineticDamping(cloth, std::vector<double>(441, 0.001), dt_s, 3 * 60 * 40, 1, &sim.chains());
  for (int s = 0; s < 40; ++s) cloth.Substep(dt_s, 1);
  const std::vector<Vec3> x = sim.chains().Gather(cloth.x());
  const std::vector<double> force = sim.chains().GatherForces();
  Vec3 on_pins = Vec3::Zero();
  double max_strain = 0.0;
  for (size_t k = 0; k < sim.chains().segments().size(); ++k) {
    const auto& c = sim.chains().segments()[k];
    max_strain = std::max(max_strain, std::abs((x[c.i] - x[c.j]).norm() / c.rest - 1.0));
    for (const auto& [pin, other] : {std::pair<int, int>{c.i, c.j}, {c.j, c.i}})
      if (pin == 0 || pin == 20) on_pins += force[k] * (x[other] - x[pin]).normalized();
  }
  const double weight = 439 * 0.001 * 9.81;
  if (test::Rank() == 0)
    std::printf("[ measured ] cloth: pins pulled by (%.6g, %.6g, %.6g) N, weight %.6g N, max strain %.3g\n",
                on_pins[0], on_pins[1], on_pins[2], weight, max_strain);
  EXPECT_NEAR(-on_pins[1], weight, 1e-3 * weight);
  EXPECT_NEAR(on_pins[0], 0.0, 0.01 * weight) << "symmetric";
}

TEST(XpbdChain, FreeFallIsTheClosedForm) {
  XpbdParticles chain({Vec3::Zero(), Vec3(0.3, 0.0, 0.0), Vec3(0.6, 0.1, 0.0)}, {1.0, 0.5, 2.0},
                      {{0, 1, 0.3, 0.0}, {1, 2, std::sqrt(0.1), 1e-3}}, kGravity, 0.0);
  const Vec3 v0(1.0, 4.0, -0.5);
  for (Vec3& v : chain.v()) v = v0;
  const std::vector<Vec3> x0 = chain.x();
  for (int f = 0; f < 30; ++f) chain.Step(1.0 / 60.0, 10, 1);
  const double t = 0.5, dt_s = 1.0 / 600.0;
  for (size_t p = 0; p < x0.size(); ++p) {
    const Vec3 closed = x0[p] + v0 * t + 0.5 * kGravity * t * (t + dt_s);
    EXPECT_LT((chain.x()[p] - closed).norm(), 1e-12) << "particle " << p;
    EXPECT_LT((chain.v()[p] - (v0 + kGravity * t)).norm(), 1e-11) << "particle " << p;
  }
}

TEST(XpbdChain, InternalConstraintsKeepTheLinearMomentum) {
  // The chain free (no particle held), no gravity, tumbling: velocities up to 2 m/s would
  // stretch it by 100% in 0.1 s without its constraints (alpha = 1e-5 m/N).
  const XpbdParticles held = HangingChain(3.0, 1e-5);
  std::vector<double> mass(20, 1.0), w(20, 1.0);
  mass[19] = 3.0;
  w[19] = 1.0 / 3.0;
  XpbdParticles chain(held.x(), w, held.constraints(), Vec3::Zero(), 0.0);
  for (int p = 0; p < 20; ++p) chain.v()[p] = Vec3(std::sin(p), std::cos(3.0 * p), 0.1 * p);
  const auto momentum = [&] {
    Vec3 P = Vec3::Zero();
    for (int p = 0; p < 20; ++p) P += mass[p] * chain.v()[p];
    return P;
  };
  const Vec3 before = momentum();
  for (int f = 0; f < 60; ++f) chain.Step(1.0 / 60.0, 10, 1);
  EXPECT_LT((momentum() - before).norm(), 1e-12) << "kg m/s";
  EXPECT_LT(chain.MaxStrain(), 0.1) << "the constraints held the chain together";
}

TEST(XpbdChain, TheSwingingClothsEnergyNeverRisesAboveItsStart) {
  const SceneConfig scene =
      ReadSceneConfig(test::SourcePath("configs/hanging_cloth.yaml"),
                      {"time.frames=45", "cloths.0.transform.rotate={axis: [1, 0, 0], angle_deg: 90}"});
  ParticleSimulation sim(PETSC_COMM_WORLD, scene);
  const std::vector<Vec3> x0 = sim.chains().Gather(sim.chains().particles().x());
  double e0 = 0.0;  // at rest, unstretched: the free particles' -m g.x
  for (size_t p = 0; p < x0.size(); ++p)
    if (p != 0 && p != 20) e0 -= 0.001 * kGravity.dot(x0[p]);
  const std::vector<std::string> columns = sim.chains().StatsColumns();
  const auto column = [&](const char* name) {
    return std::find(columns.begin(), columns.end(), name) - columns.begin();
  };
  double highest = -INFINITY, stretch = 0.0, lowest = INFINITY;
  for (int f = 0; f < scene.time.frames; ++f) {
    sim.AdvanceFrame(nullptr);
    const std::vector<double> values = sim.chains().StatsValues();
    highest = std::max(highest, values[column("total_energy")]);
    lowest = std::min(lowest, values[column("total_energy")]);
    stretch = std::max(stretch, values[column("stretch_energy")]);
  }
  if (test::Rank() == 0)
    std::printf("[ measured ] swinging cloth, 0.75 s: E0 %.6g J, total energy %.6g..%.6g J, residual "
                "stretch's C^2/(2 alpha) up to %.4g J\n", e0, lowest, highest, stretch);
  EXPECT_LE(highest, e0 * (1.0 + 1e-12)) << "J";
  EXPECT_GT(lowest, 0.5 * e0) << "J: the cloth keeps most of its energy (40 substeps)";
}

TEST(XpbdChain, AChainDrapedOverASphereRestsOnIt) {
  // 21 particles of 0.01 kg, 0.05 m apart, inextensible, laid level 0.02 m above a sphere of
  // radius 0.5 m (friction 0.5): 1 m of chain, 0.5 m on each side, an arc of 1 rad a side.
  const std::string dir = test::SharedTempDir("chain_sphere");
  const SceneConfig scene = test::MakeScene(dir + "/drape.yaml", R"(
discretization: particles
integrator: xpbd
xpbd: {substeps: 20, iterations: 1}
damping: {stiffness_beta: 0.001}
time: {frame_rate: 60, frames: 120}
chains:
  - {start: [-0.5, 0.52, 0], step: [0.05, 0, 0], count: 21, mass: 0.01, compliance: 0}
collision_objects:
  - {type: sphere, center: [0, 0, 0], radius: 0.5, friction: 0.5}
output: {directory: out}
)");
  ParticleSimulation sim(PETSC_COMM_WORLD, scene);
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  const std::vector<Vec3> x = sim.chains().Gather(sim.chains().particles().x());
  const std::vector<Vec3> v = sim.chains().Gather(sim.chains().particles().v());
  ASSERT_EQ(x.size(), 21u);
  double inside = 0.0, off = 0.0, kinetic = 0.0;
  for (size_t p = 0; p < x.size(); ++p) {
    inside = std::max(inside, 0.5 - x[p].norm());
    off = std::max(off, std::abs(x[p].norm() - 0.5));
    kinetic += 0.5 * 0.01 * v[p].squaredNorm();
  }
  const double m_g_R = 21 * 0.01 * 9.81 * 0.5;
  if (test::Rank() == 0)
    std::printf("[ measured ] chain on a sphere after 2 s: deepest %.3g m, farthest off the surface "
                "%.3g m, kinetic energy %.3g J (%.3g of M g R), middle particle at (%.4g, %.4g)\n",
                inside, off, kinetic, kinetic / m_g_R, x[10][0], x[10][1]);
  EXPECT_LT(inside, 1e-9) << "m inside the sphere";
  EXPECT_LT(off, 1e-3) << "m: every particle lies on the sphere";
  EXPECT_LT(kinetic, 1e-6 * m_g_R) << "J: at rest";
  // Gauss-Seidel's order is not symmetric, so the drop shifts the chain a little (0.17 mm).
  EXPECT_NEAR(x[10][0], 0.0, 1e-3) << "m: the middle stays on top";
}

}  // namespace
}  // namespace optistep
