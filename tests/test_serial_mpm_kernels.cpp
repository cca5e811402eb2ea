// Serial tests of the rank-local MPM kernels (src/mpm/: BSpline, Particles, LocalGrid,
// Transfers, Plasticity). The reference numbers come from elsewhere: the exact
// reproducing properties of the quadratic B-spline, the conservation laws and the exact
// rigid-rotation reproduction of APIC (Jiang et al. 2015, Sec. 5), a uniform velocity
// gradient worked by hand, central finite differences of the weights,
// the stress of materials/FixedCorotated on the von Mises yield surface, and the snow
// model's volume bookkeeping J_P J_E = J (Stomakhin et al. 2013, Sec. 5).
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/Error.hpp"
#include "materials/Material.hpp"
#include "mpm/BSpline.hpp"
#include "mpm/LocalGrid.hpp"
#include "mpm/Particles.hpp"
#include "mpm/Plasticity.hpp"
#include "mpm/Transfers.hpp"

namespace optistep::mpm {
namespace {

constexpr double kDx = 0.1;  // grid spacing (m)

Vec3 RandomVec(std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  return Vec3(u(rng), u(rng), u(rng));
}

Mat3 RandomMat(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Mat3 A;
  for (int k = 0; k < 9; ++k) A(k) = u(rng);
  return A;
}

Mat3 RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  return Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng))
      .normalized()
      .toRotationMatrix();
}

Mat3 WithSingularValues(const Vec3& sigma, std::mt19937& rng) {
  return RandomRotation(rng) * sigma.asDiagonal() * RandomRotation(rng).transpose();
}

// [omega]_x, so that [omega]_x r = omega x r.
Mat3 Skew(const Vec3& omega) {
  Mat3 S;
  S << 0.0, -omega.z(), omega.y(), omega.z(), 0.0, -omega.x(), -omega.y(), omega.x(), 0.0;
  return S;
}

// Particles around the origin (negative node indices too), random v, C, mass, F near I.
Particles RandomParticles(std::mt19937& rng, int count) {
  std::uniform_real_distribution<double> unit(0.5, 1.5);
  Particles particles;
  for (int p = 0; p < count; ++p) {
    Particle q;
    q.id = 1000 + p;
    q.x = RandomVec(rng, -0.35, 0.45);
    q.v = RandomVec(rng, -1.0, 1.0);
    q.C = RandomMat(rng, 2.0);
    q.F = Mat3::Identity() + RandomMat(rng, 0.1);
    q.mass = 1e-3 * unit(rng);
    q.V0 = 1e-6 * unit(rng);
    particles.Append(q);
  }
  return particles;
}

void BuildGrid(const Particles& particles, LocalGrid* grid, StencilCache* cache) {
  grid->Clear();
  for (const Vec3& x_p : particles.x) grid->Touch(MakeStencil(x_p, grid->dx()));
  grid->Finalize();
  cache->Build(particles.x, *grid);
}

// Random particles on a grid built for them: the set-up of the grid tests.
struct GridScene {
  std::mt19937 rng;
  Particles particles;
  LocalGrid grid{kDx};
  StencilCache cache;

  GridScene(unsigned seed, int count) : rng(seed), particles(RandomParticles(rng, count)) {
    BuildGrid(particles, &grid, &cache);
  }
};

// w_ip of a fixed node as a function of x_p (0 outside the node's support).
double WeightOfNode(const Vec3& x_p, const Eigen::Vector3i& node) {
  const Stencil s = MakeStencil(x_p, kDx);
  const Eigen::Vector3i offset = node - s.base;
  if ((offset.array() < 0).any() || (offset.array() > 2).any()) return 0.0;
  return s.w_ip(offset.x(), offset.y(), offset.z());
}

// --- B-spline weights -------------------------------------------------------------------

std::vector<Vec3> SamplePositions() {
  std::mt19937 rng(101);
  std::vector<Vec3> xs;
  for (int k = 0; k < 200; ++k) xs.push_back(RandomVec(rng, -1.0, 1.0));
  xs.push_back(Vec3(0.05, 0.15, -0.05));  // on cell centers: f = 1/2 exactly
  xs.push_back(Vec3(0.0, 0.1, -0.2));     // on nodes: f = 1
  return xs;
}

TEST(MpmBSpline, WeightsPartitionUnityAndGradientsSumToZero) {
  for (const Vec3& x_p : SamplePositions()) {
    const Stencil s = MakeStencil(x_p, kDx);
    double sum_w = 0.0;
    Vec3 sum_grad = Vec3::Zero();
    ForEachStencilNode([&](int, int a, int b, int c) {
      EXPECT_GE(s.w_ip(a, b, c), 0.0);
      sum_w += s.w_ip(a, b, c);
      sum_grad += s.grad_w_ip(a, b, c);
    });
    EXPECT_NEAR(sum_w, 1.0, 1e-14) << "x_p = " << x_p.transpose();
    EXPECT_LE(sum_grad.norm(), 1e-12 / kDx) << "x_p = " << x_p.transpose();
  }
}

TEST(MpmBSpline, LinearPrecision) {
  // sum_i w_ip x_i = x_p and sum_i x_i grad_w_ip^T = I: the interpolation reproduces
  // linear fields and their gradients exactly.
  for (const Vec3& x_p : SamplePositions()) {
    const Stencil s = MakeStencil(x_p, kDx);
    Vec3 sum_wx = Vec3::Zero();
    Mat3 sum_x_grad = Mat3::Zero();
    ForEachStencilNode([&](int, int a, int b, int c) {
      const Vec3 x_i = NodePosition(s.Node(a, b, c), kDx);
      sum_wx += s.w_ip(a, b, c) * x_i;
      sum_x_grad += x_i * s.grad_w_ip(a, b, c).transpose();
    });
    EXPECT_LE((sum_wx - x_p).norm(), 1e-15) << "x_p = " << x_p.transpose();
    EXPECT_LE((sum_x_grad - Mat3::Identity()).norm(), 1e-13) << "x_p = " << x_p.transpose();
  }
}

TEST(MpmBSpline, InertiaIsQuarterCellSquared) {
  // D_p = sum_i w_ip (x_i - x_p)(x_i - x_p)^T = dx^2/4 I, whose inverse APIC uses.
  for (const Vec3& x_p : SamplePositions()) {
    const Stencil s = MakeStencil(x_p, kDx);
    Mat3 D = Mat3::Zero();
    ForEachStencilNode([&](int, int a, int b, int c) {
      const Vec3 r = NodePosition(s.Node(a, b, c), kDx) - x_p;
      D += s.w_ip(a, b, c) * r * r.transpose();
    });
    EXPECT_LE((ApicInverseInertia(kDx) * D - Mat3::Identity()).norm(), 1e-12);
  }
}

TEST(MpmBSpline, GradientMatchesFiniteDifferencesOfWeights) {
  const double h = 1e-6 * kDx;
  for (const Vec3& x_p : SamplePositions()) {
    const Stencil s = MakeStencil(x_p, kDx);
    ForEachStencilNode([&](int, int a, int b, int c) {
      const Eigen::Vector3i node = s.Node(a, b, c);
      Vec3 fd;
      for (int d = 0; d < 3; ++d) {
        const Vec3 step = h * Vec3::Unit(d);
        fd(d) = (WeightOfNode(x_p + step, node) - WeightOfNode(x_p - step, node)) / (2.0 * h);
      }
      // The kernel's second derivative jumps at the knots: O(h / dx^2) there.
      EXPECT_LE((fd - s.grad_w_ip(a, b, c)).norm(), 1e-5 / kDx)
          << "x_p = " << x_p.transpose() << ", node " << node.transpose();
    });
  }
}

// --- particles ----------------------------------------------------------------------------

void ExpectSameParticle(const Particle& a, const Particle& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.v, b.v);
  EXPECT_EQ(a.C, b.C);
  EXPECT_EQ(a.F, b.F);
  EXPECT_EQ(a.plastic.Jp, b.plastic.Jp);
  EXPECT_EQ(a.plastic.plastic_strain, b.plastic.plastic_strain);
  EXPECT_EQ(a.mass, b.mass);
  EXPECT_EQ(a.V0, b.V0);
  EXPECT_EQ(a.material, b.material);
}

TEST(MpmParticles, PackUnpackRoundTripIsBitwise) {
  std::mt19937 rng(3);
  Particles particles = RandomParticles(rng, 4);
  particles.id[1] = (std::int64_t{1} << 62) + 12345;  // beyond 2^53: must survive as bits
  particles.id[2] = -7;
  particles.plastic[3] = {0.87, 0.0123};
  particles.material[3] = 5;
  std::vector<double> buffer(Particles::kPackedDoubles * particles.size());
  for (std::size_t p = 0; p < particles.size(); ++p)
    particles.Pack(p, buffer.data() + Particles::kPackedDoubles * p);
  Particles received;
  for (std::size_t p = 0; p < particles.size(); ++p)
    received.AppendPacked(buffer.data() + Particles::kPackedDoubles * p);
  ASSERT_EQ(received.size(), particles.size());
  for (std::size_t p = 0; p < particles.size(); ++p)
    ExpectSameParticle(received.Get(p), particles.Get(p));
}

TEST(MpmParticles, EraseIfKeepsTheOrderOfTheRest) {
  std::mt19937 rng(4);
  Particles particles = RandomParticles(rng, 6);
  const Particles original = particles;
  particles.EraseIf({1, 0, 0, 1, 0, 1});
  ASSERT_EQ(particles.size(), 3u);
  ExpectSameParticle(particles.Get(0), original.Get(1));
  ExpectSameParticle(particles.Get(1), original.Get(2));
  ExpectSameParticle(particles.Get(2), original.Get(4));
  EXPECT_THROW(particles.EraseIf({1}), std::invalid_argument);
  particles.Resize(5);
  ExpectSameParticle(particles.Get(4), Particle{});
}

// --- local grid ---------------------------------------------------------------------------

TEST(MpmLocalGrid, NumberingIsIndependentOfParticleOrder) {
  GridScene scene(5, 300);
  auto& [rng, particles, grid, cache] = scene;
  LocalGrid shuffled_grid(kDx);
  StencilCache shuffled_cache;

  std::vector<int> order(particles.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  Particles shuffled;
  for (int p : order) shuffled.Append(particles.Get(p));
  BuildGrid(shuffled, &shuffled_grid, &shuffled_cache);

  ASSERT_EQ(grid.NodeCount(), shuffled_grid.NodeCount());
  ASSERT_EQ(grid.NodeCount(), LocalGrid::kNodesPerBlock * grid.BlockCount());
  for (int i = 0; i < grid.NodeCount(); ++i) {
    ASSERT_EQ(grid.Node(i), shuffled_grid.Node(i)) << "node " << i;
    ASSERT_EQ(grid.Index(grid.Node(i)), i);
  }
  // Same particle, same node indices, whatever its position in the list.
  for (std::size_t k = 0; k < order.size(); ++k)
    EXPECT_EQ(shuffled_cache.node[k], cache.node[order[k]]);
  // Blocks come in (bz, by, bx) order.
  for (int s = 1; s < grid.BlockCount(); ++s) {
    const Eigen::Vector3i a = grid.Node(LocalGrid::kNodesPerBlock * (s - 1));
    const Eigen::Vector3i b = grid.Node(LocalGrid::kNodesPerBlock * s);
    EXPECT_TRUE(std::make_tuple(a.z(), a.y(), a.x()) < std::make_tuple(b.z(), b.y(), b.x()));
  }
}

TEST(MpmLocalGrid, StencilNodesAreTheStencilsNodes) {
  GridScene scene(6, 50);
  auto& [rng, particles, grid, cache] = scene;
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const Stencil& s = cache.stencil[p];
    ForEachStencilNode([&](int n, int a, int b, int c) {
      EXPECT_EQ(grid.Node(cache.node[p][n]), s.Node(a, b, c));
    });
  }
  EXPECT_EQ(grid.Index(Eigen::Vector3i(1000, 0, 0)), -1);
  EXPECT_THROW(grid.Touch(cache.stencil[0]), std::logic_error);
  EXPECT_THROW(LocalGrid(0.0), InputError);
}

// --- transfers ----------------------------------------------------------------------------

// The angular momentum m_p (C_p D_p)^T : epsilon carried by the affine velocity of a
// particle (Jiang et al. 2015, Sec. 5.3), D_p = dx^2/4 I.
Vec3 AffineAngularMomentum(double m_p, const Mat3& C_p) {
  return m_p * 0.25 * kDx * kDx *
         Vec3(C_p(2, 1) - C_p(1, 2), C_p(0, 2) - C_p(2, 0), C_p(1, 0) - C_p(0, 1));
}

struct Momenta {
  Vec3 linear = Vec3::Zero();
  Vec3 angular = Vec3::Zero();
};

Momenta ParticleMomenta(const Particles& particles) {
  Momenta total;
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const double m_p = particles.mass[p];
    total.linear += m_p * particles.v[p];
    total.angular +=
        m_p * particles.x[p].cross(particles.v[p]) + AffineAngularMomentum(m_p, particles.C[p]);
  }
  return total;
}

Momenta GridMomenta(const LocalGrid& grid) {
  Momenta total;
  for (int i = 0; i < grid.NodeCount(); ++i) {
    const Vec3 mv_i = Eigen::Map<const Vec3>(&grid.mv[3 * i]);
    total.linear += mv_i;
    total.angular += NodePosition(grid.Node(i), kDx).cross(mv_i);
  }
  return total;
}

TEST(MpmTransfers, ApicConservesLinearAndAngularMomentum) {
  GridScene scene(7, 400);
  auto& [rng, particles, grid, cache] = scene;
  const Momenta before = ParticleMomenta(particles);
  P2G(particles, cache, &grid);
  const Momenta on_grid = GridMomenta(grid);
  GridVelocities(&grid);
  G2P(cache, grid, grid.v.data(), 0.0, &particles);
  const Momenta after = ParticleMomenta(particles);

  double mass = 0.0;
  for (double m_p : particles.mass) mass += m_p;
  const double p_scale = mass * 1.0, L_scale = mass * 1.0 * 0.5;  // |v| ~ 1, |x| ~ 0.5
  EXPECT_LE((on_grid.linear - before.linear).norm(), 1e-14 * p_scale);
  EXPECT_LE((after.linear - before.linear).norm(), 1e-14 * p_scale);
  EXPECT_LE((on_grid.angular - before.angular).norm(), 1e-14 * L_scale);
  EXPECT_LE((after.angular - before.angular).norm(), 1e-14 * L_scale);
  double m_grid = 0.0;
  for (double m_i : grid.m) m_grid += m_i;
  EXPECT_NEAR(m_grid, mass, 1e-14 * mass);
}

TEST(MpmTransfers, RigidRotationIsReproducedExactly) {
  GridScene scene(8, 200);
  auto& [rng, particles, grid, cache] = scene;
  const Vec3 omega(0.3, -1.2, 0.7), center(0.1, 0.2, -0.1);
  for (std::size_t p = 0; p < particles.size(); ++p) {
    particles.v[p] = omega.cross(particles.x[p] - center);
    particles.C[p] = Skew(omega);
  }
  const Particles before = particles;
  P2G(particles, cache, &grid);
  GridVelocities(&grid);
  for (int i = 0; i < grid.NodeCount(); ++i) {
    if (grid.m[i] == 0.0) continue;
    const Vec3 v_i = Eigen::Map<const Vec3>(&grid.v[3 * i]);
    ASSERT_LE((v_i - omega.cross(NodePosition(grid.Node(i), kDx) - center)).norm(), 1e-12);
  }
  G2P(cache, grid, grid.v.data(), 0.0, &particles);
  for (std::size_t p = 0; p < particles.size(); ++p) {
    EXPECT_LE((particles.v[p] - before.v[p]).norm(), 1e-12) << "particle " << p;
    EXPECT_LE((particles.C[p] - before.C[p]).norm(), 1e-12) << "particle " << p;
  }
}

TEST(MpmTransfers, FlipBlendAddsTheGridIncrement) {
  GridScene scene(9, 30);
  auto& [rng, particles, grid, cache] = scene;
  P2G(particles, cache, &grid);
  GridVelocities(&grid);
  // v_new = v + u on every node: pure FLIP gives v_p + u (partition of unity).
  const Vec3 u(0.5, -0.25, 2.0);
  std::vector<double> v_new = grid.v;
  for (int i = 0; i < grid.NodeCount(); ++i) Eigen::Map<Vec3>(&v_new[3 * i]) += u;
  const Particles before = particles;
  G2P(cache, grid, v_new.data(), 1.0, &particles);
  for (std::size_t p = 0; p < particles.size(); ++p)
    EXPECT_LE((particles.v[p] - (before.v[p] + u)).norm(), 1e-13) << "particle " << p;
  EXPECT_THROW(G2P(cache, grid, v_new.data(), 1.5, &particles), InputError);
}

TEST(MpmTransfers, DeformationGradientOfUniformVelocityGradient) {
  GridScene scene(10, 40);
  auto& [rng, particles, grid, cache] = scene;
  const Mat3 L = RandomMat(rng, 3.0);
  const Vec3 b = RandomVec(rng, -1.0, 1.0);
  std::vector<double> v(3 * grid.NodeCount());
  for (int i = 0; i < grid.NodeCount(); ++i) {
    Eigen::Map<Vec3> v_i(&v[3 * i]);
    v_i = L * NodePosition(grid.Node(i), kDx) + b;
  }
  const double dt = 0.01;
  const Particles before = particles;
  UpdateDeformationGradients(cache, dt, v.data(), &particles);
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const Mat3 expected = (Mat3::Identity() + dt * L) * before.F[p];
    EXPECT_LE((particles.F[p] - expected).norm(), 1e-13) << "particle " << p;
  }
}

// --- plasticity ---------------------------------------------------------------------------

Vec3 SingularValues(const Mat3& F) {
  return Eigen::JacobiSVD<Mat3>(F).singularValues();  // descending
}

TEST(MpmPlasticity, SnowClampsSingularValuesAndKeepsTotalVolume) {
  std::mt19937 rng(12);
  const PlasticityParameters snow{PlasticityModel::kSnow};
  const Mat3 Q1 = RandomRotation(rng), Q2 = RandomRotation(rng);
  const Mat3 F_trial = Q1 * Vec3(1.05, 1.001, 0.9).asDiagonal() * Q2.transpose();
  PlasticState state{0.95, 0.0};
  const Mat3 F_E = SnowReturnMapping(F_trial, snow.theta_c, snow.theta_s, &state);
  const Vec3 clamped(1.0 + 7.5e-3, 1.001, 1.0 - 2.5e-2);
  EXPECT_LE((SingularValues(F_E) - clamped).norm(), 1e-14);
  // Same singular vectors: only the singular values move.
  EXPECT_LE((F_E - Q1 * clamped.asDiagonal() * Q2.transpose()).norm(), 1e-14);
  // J_P J_E is the total J = J_P^n det(F_trial).
  EXPECT_NEAR(state.Jp * F_E.determinant(), 0.95 * F_trial.determinant(), 1e-14);
  EXPECT_NEAR(state.Jp, 0.95 * (1.05 * 1.001 * 0.9) / clamped.prod(), 1e-14);

  PlasticState inside{0.95, 0.0};
  const Mat3 F_inside = WithSingularValues(Vec3(1.005, 0.99, 0.98), rng);
  EXPECT_EQ(SnowReturnMapping(F_inside, snow.theta_c, snow.theta_s, &inside), F_inside);
  EXPECT_EQ(inside.Jp, 0.95);
}

TEST(MpmPlasticity, SnowHardeningScalesBothLameParameters) {
  const LameParameters lame0 = LameParameters::FromYoungPoisson(1.4e5, 0.2);
  const LameParameters hardened = HardenedLame(lame0, 0.9, 10.0);
  EXPECT_NEAR(hardened.mu, lame0.mu * std::exp(1.0), 1e-9 * lame0.mu);
  EXPECT_NEAR(hardened.lambda, lame0.lambda * std::exp(1.0), 1e-9 * lame0.lambda);
  EXPECT_EQ(SnowHardening(1.0, 10.0), 1.0);
}

// ||dev tau||, tau = P F^T, from the material itself (Pa).
double DeviatoricKirchhoffNorm(const ElasticMaterial& material, const Mat3& F) {
  Mat3 P;
  material.PsiAndP(F, &P);
  const Mat3 tau = P * F.transpose();
  return (tau - tau.trace() / 3.0 * Mat3::Identity()).norm();
}

Vec3 DeviatoricLogStrain(const Mat3& F) {
  const Vec3 eps = SingularValues(F).array().log();
  return eps.array() - eps.mean();
}

TEST(MpmPlasticity, VonMisesReturnsOntoTheYieldSurface) {
  std::mt19937 rng(13);
  const LameParameters lame = LameParameters::FromYoungPoisson(2e7, 0.3);
  const std::unique_ptr<ElasticMaterial> material = MakeMaterial("fixed_corotated", lame);
  for (const Vec3& sigma : {Vec3(1.3, 1.0, 0.8), Vec3(1.02, 0.99, 0.97), Vec3(1.1, 1.1, 0.7)}) {
    const Mat3 F_trial = WithSingularValues(sigma, rng);
    const double trial_norm = DeviatoricKirchhoffNorm(*material, F_trial);
    const double tau_Y = 0.4 * trial_norm / std::sqrt(2.0 / 3.0);  // trial beyond yield
    PlasticState state{1.0, 0.01};
    const Mat3 F_E = VonMisesReturnMapping(F_trial, lame.mu, tau_Y, &state);
    EXPECT_NEAR(DeviatoricKirchhoffNorm(*material, F_E), std::sqrt(2.0 / 3.0) * tau_Y,
                1e-10 * tau_Y)
        << "sigma = " << sigma.transpose();
    EXPECT_NEAR(F_E.determinant(), F_trial.determinant(), 1e-13);  // isochoric flow
    // Flow along the deviatoric log strain: same direction, smaller norm.
    const Vec3 e_trial = DeviatoricLogStrain(F_trial), e_new = DeviatoricLogStrain(F_E);
    EXPECT_NEAR(e_new.normalized().dot(e_trial.normalized()), 1.0, 1e-12);
    EXPECT_NEAR(state.plastic_strain, 0.01 + std::sqrt(2.0 / 3.0) * (e_trial - e_new).norm(),
                1e-12);
    EXPECT_EQ(state.Jp, 1.0);
  }
}

TEST(MpmPlasticity, VonMisesInsideTheYieldSurfaceIsUntouched) {
  std::mt19937 rng(14);
  const LameParameters lame = LameParameters::FromYoungPoisson(2e7, 0.3);
  const std::unique_ptr<ElasticMaterial> material = MakeMaterial("fixed_corotated", lame);
  const Mat3 F_trial = WithSingularValues(Vec3(1.01, 1.0, 0.995), rng);
  const double tau_Y = 1.01 * DeviatoricKirchhoffNorm(*material, F_trial) / std::sqrt(2.0 / 3.0);
  PlasticState state{1.0, 0.02};
  EXPECT_EQ(VonMisesReturnMapping(F_trial, lame.mu, tau_Y, &state), F_trial);
  EXPECT_EQ(state.plastic_strain, 0.02);
}

TEST(MpmPlasticity, ApplyReturnMappingUsesEachParticlesMaterial) {
  std::mt19937 rng(15);
  const std::unique_ptr<ElasticMaterial> material =
      MakeMaterial("fixed_corotated", LameParameters::FromYoungPoisson(1.4e5, 0.2));
  const MaterialTable materials = {material.get(), material.get()};
  std::vector<PlasticityParameters> plasticity(2);
  plasticity[1].model = PlasticityModel::kSnow;
  Particles particles = RandomParticles(rng, 2);
  particles.material = {0, 1};
  const Mat3 F_trial = WithSingularValues(Vec3(1.2, 1.0, 0.7), rng);
  particles.F = {F_trial, F_trial};
  ApplyReturnMapping(materials, plasticity, &particles);
  EXPECT_EQ(particles.F[0], F_trial);  // elastic
  EXPECT_LE((SingularValues(particles.F[1]) - Vec3(1.0075, 1.0, 0.975)).norm(), 1e-14);
  EXPECT_NEAR(particles.plastic[1].Jp * particles.F[1].determinant(), F_trial.determinant(), 1e-14);
}

TEST(MpmPlasticity, BadInputNamesTheKey) {
  EXPECT_EQ(PlasticityModelFromName("von_mises"), PlasticityModel::kVonMises);
  EXPECT_THROW(PlasticityModelFromName("drucker_prager"), InputError);
  PlasticityParameters von_mises{PlasticityModel::kVonMises};
  try {
    von_mises.Validate("scene.yaml: materials[2].plasticity");
    FAIL() << "tau_Y = 0 must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("materials[2].plasticity: tau_Y = 0"), std::string::npos)
        << e.what();
  }
  PlasticityParameters snow{PlasticityModel::kSnow};
  snow.Validate("snow");
  snow.theta_c = 1.0;
  EXPECT_THROW(snow.Validate("snow"), InputError);
}

}  // namespace
}  // namespace optistep::mpm
