// APIC transfers through the distributed path of MpmDomain (Distribute, ExchangeHalo,
// BuildStepGrid: P2G, PETSc numbering and ghost sync; then G2P and DropHalo), on 1, 2
// and 4 ranks. Without forces APIC conserves linear and angular momentum to round-off
// and carries a rigid rotation exactly (Jiang, Schroeder, Selle, Teran, Stomakhin 2015,
// "The affine particle-in-cell method", Sec. 5): what the serial kernel tests show for
// one rank must survive the halo and the ghost nodes.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "MpmTestUtil.hpp"
#include "TestUtil.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/Transfers.hpp"

namespace optistep {
namespace {

using mpm::MpmDomain;
using mpm::Particles;
using mpm::StepGrid;

constexpr double kDx = 0.1;      // m
constexpr int kParticles = 600;  // over a cube of 16 cells (4 blocks) a side

/// Rank 0: kParticles random particles with ids 0..N-1, random v, C and mass; the others
/// none (what MpmDomain::Distribute expects).
Particles RandomParticles(unsigned seed) {
  Particles all;
  if (test::Rank() != 0) return all;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> position(-0.35, 1.25), unit(-1.0, 1.0), mass(0.5, 1.5);
  for (int p = 0; p < kParticles; ++p) {
    mpm::Particle q;
    q.id = p;
    q.x = Vec3(position(rng), position(rng), position(rng));
    q.v = Vec3(unit(rng), unit(rng), unit(rng));
    for (int k = 0; k < 9; ++k) q.C(k) = 2.0 * unit(rng);
    q.mass = 1e-3 * mass(rng);
    q.V0 = 1e-6;
    all.Append(q);
  }
  return all;
}

/// The counts that show the distributed path was taken: halo copies and ghost nodes
/// summed over ranks, and the fewest particles any rank owns.
struct Spread {
  double halo = 0.0, ghosts = 0.0, fewest_owned = 0.0;
};

/// One P2G -> G2P round trip with the grid velocities unchanged (no forces), as a step
/// does it. Returns the spread; fills *grid_momenta with the owned grid nodes' totals.
Spread RoundTrip(MpmDomain* domain, test::Momenta* grid_momenta,
                 const std::function<void(const StepGrid&)>& inspect_grid = nullptr) {
  domain->ExchangeHalo();
  Spread spread;
  spread.halo = static_cast<double>(domain->particles().size() - domain->n_owned());
  StepGrid step(kDx);
  domain->BuildStepGrid(&step);
  spread.ghosts = static_cast<double>(step.ghost_nodes.size());
  std::vector<double> sums(6, 0.0);
  for (int i : step.owned_nodes) {
    const Vec3 p_i = step.grid.m[i] * Eigen::Map<const Vec3>(&step.grid.v[3 * i]);
    const Vec3 L_i = mpm::NodePosition(step.grid.Node(i), kDx).cross(p_i);
    for (int d = 0; d < 3; ++d) {
      sums[d] += p_i[d];
      sums[3 + d] += L_i[d];
    }
  }
  sums = test::SumOverRanks(domain->comm(), sums);
  *grid_momenta = {Vec3(sums[0], sums[1], sums[2]), Vec3(sums[3], sums[4], sums[5])};
  if (inspect_grid) inspect_grid(step);
  mpm::G2P(step.cache, step.grid, step.grid.v.data(), 0.0, &domain->particles());
  domain->DropHalo();
  spread.halo = test::SumOverRanks(domain->comm(), {spread.halo})[0];
  spread.ghosts = test::SumOverRanks(domain->comm(), {spread.ghosts})[0];
  double owned = static_cast<double>(domain->n_owned());
  MPI_Allreduce(&owned, &spread.fewest_owned, 1, MPI_DOUBLE, MPI_MIN, domain->comm());
  return spread;
}

void ExpectDistributed(const Spread& spread) {
  if (test::Size() == 1) return;
  EXPECT_GT(spread.halo, 0.0) << "no halo particle: the distributed path was not exercised";
  EXPECT_GT(spread.ghosts, 0.0) << "no ghost node: the distributed path was not exercised";
  EXPECT_GT(spread.fewest_owned, 0.0) << "a rank owns no particle";
}

TEST(MpmDistributedTransfers, ApicConservesLinearAndAngularMomentum) {
  MpmDomain domain(PETSC_COMM_WORLD, kDx, 1.2);
  domain.Distribute(RandomParticles(7));
  ASSERT_EQ(domain.GlobalParticleCount(), kParticles);
  const double mass = test::ParticleMass(domain);
  const test::Momenta before = test::ParticleMomenta(domain);
  test::Momenta on_grid;
  const Spread spread = RoundTrip(&domain, &on_grid);
  const test::Momenta after = test::ParticleMomenta(domain);
  ExpectDistributed(spread);

  // |v| ~ 1 m/s, |x| ~ 1 m: momentum ~ mass, angular momentum ~ mass (about the origin).
  const double scale = mass * 1.0;
  EXPECT_GT(before.linear.norm(), 1e-3 * scale) << "random velocities should not cancel";
  EXPECT_LE((on_grid.linear - before.linear).norm(), 1e-13 * scale) << "P2G, linear";
  EXPECT_LE((on_grid.angular - before.angular).norm(), 1e-13 * scale) << "P2G, angular";
  EXPECT_LE((after.linear - before.linear).norm(), 1e-13 * scale) << "P2G + G2P, linear";
  EXPECT_LE((after.angular - before.angular).norm(), 1e-13 * scale) << "P2G + G2P, angular";
  EXPECT_NEAR(test::ParticleMass(domain), mass, 1e-14 * mass);
  EXPECT_EQ(domain.GlobalParticleCount(), kParticles);
}

TEST(MpmDistributedTransfers, RigidRotationIsReproducedExactly) {
  const Vec3 omega(0.3, -1.2, 0.7), center(0.4, 0.5, 0.3);  // rad/s, m
  Particles all = RandomParticles(8);
  for (std::size_t p = 0; p < all.size(); ++p) {
    all.v[p] = omega.cross(all.x[p] - center);
    all.C[p] = test::Skew(omega);
  }
  MpmDomain domain(PETSC_COMM_WORLD, kDx, 1.2);
  domain.Distribute(std::move(all));
  // Every active node, owned and ghost, carries the rigid field after the ghost sync.
  double worst_node = 0.0;
  test::Momenta unused;
  const Spread spread = RoundTrip(&domain, &unused, [&](const StepGrid& step) {
    for (int i = 0; i < step.grid.NodeCount(); ++i) {
      if (step.local_form[i] < 0) continue;
      const Vec3 v_i = Eigen::Map<const Vec3>(&step.grid.v[3 * i]);
      const Vec3 rigid = omega.cross(mpm::NodePosition(step.grid.Node(i), kDx) - center);
      worst_node = std::max(worst_node, (v_i - rigid).norm());
    }
  });
  ExpectDistributed(spread);
  double worst_v = 0.0, worst_C = 0.0;
  const Particles& p = domain.particles();
  for (std::size_t k = 0; k < domain.n_owned(); ++k) {
    worst_v = std::max(worst_v, (p.v[k] - omega.cross(p.x[k] - center)).norm());
    worst_C = std::max(worst_C, (p.C[k] - test::Skew(omega)).norm());
  }
  std::vector<double> worst = {worst_node, worst_v, worst_C};
  MPI_Allreduce(MPI_IN_PLACE, worst.data(), 3, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  EXPECT_LE(worst[0], 1e-12) << "grid velocity vs omega x (x_i - c) (m/s)";
  EXPECT_LE(worst[1], 1e-12) << "v_p vs omega x (x_p - c) (m/s)";
  EXPECT_LE(worst[2], 1e-12) << "C_p vs [omega]_x (1/s)";
  EXPECT_EQ(domain.GlobalParticleCount(), kParticles);
}

}  // namespace
}  // namespace optistep
