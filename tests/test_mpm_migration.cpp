// Particle migration and repartitioning of MpmDomain during a run (MpmSimulation), on 1,
// 2 and 4 ranks. A box translating at a uniform velocity, without gravity or obstacles,
// crosses several grid blocks (and so ranks): no internal force acts (F_p stays I), so
// every particle must follow x_p(t) = x_p(0) + v_0 t with its own id, each id 0..N-1 must
// live on exactly one rank, and mass and momentum must stay what they were at the start.
// A low repartition threshold makes METIS repartition during the run; the stats rows
// (MpmBackwardEuler::BalanceColumns) and the owners of the ids show that migrations and
// repartitions really happened.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "MpmTestUtil.hpp"
#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/MpmSimulation.hpp"
#include "core/Exchange.hpp"
#include "integrators/MpmBackwardEuler.hpp"
#include "io/StepStats.hpp"

namespace optistep {
namespace {

/// Collective: the rank owning each particle id, indexed by id (-1: no rank; -2: more
/// than one), from an allgather of every rank's (id, rank) pairs; *count gets the number
/// of owned particles over all ranks.
std::vector<int> OwnerOfId(const mpm::MpmDomain& domain, long long n, long long* count) {
  std::vector<std::int64_t> mine;
  for (std::size_t p = 0; p < domain.n_owned(); ++p) {
    mine.push_back(domain.particles().id[p]);
    mine.push_back(test::Rank());
  }
  const std::vector<std::int64_t> all = AllGatherLists(domain.comm(), mine);
  *count = static_cast<long long>(all.size() / 2);
  std::vector<int> owner(n, -1);
  for (std::size_t k = 0; k < all.size(); k += 2) {
    const std::int64_t id = all[k];
    if (id < 0 || id >= n) continue;  // counted as missing below: ids are 0..N-1
    owner[id] = owner[id] == -1 ? static_cast<int>(all[k + 1]) : -2;
  }
  return owner;
}

/// Rank 0 reads the sum of a column of a stats.csv; every rank gets it.
double ColumnSum(const std::string& csv, const std::string& column) {
  double sum = 0.0;
  if (test::Rank() == 0) {
    std::ifstream in(csv);
    std::string line, cell;
    std::getline(in, line);
    std::istringstream header(line);
    int index = -1;
    for (int c = 0; std::getline(header, cell, ','); ++c)
      if (cell == column) index = c;
    sum = index < 0 ? NAN : 0.0;
    while (index >= 0 && std::getline(in, line)) {
      std::istringstream row(line);
      for (int c = 0; std::getline(row, cell, ','); ++c)
        if (c == index) sum += std::stod(cell);
    }
  }
  MPI_Bcast(&sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return sum;
}

TEST(MpmMigration, TranslatingBoxKeepsEveryParticleMassAndMomentum) {
  const std::string dir = test::SharedTempDir("mpm_migration");
  const SceneConfig scene = test::MakeScene(dir + "/slide.yaml", R"(
discretization: mpm
mpm: {dx: 0.1, ppc: 4, repartition_threshold: 1.05}
gravity: [0, 0, 0]
time: {dt: 0.05, frame_dt: 0.05, frames: 10}
bodies:
  - shape: {type: box, min: [0, 0, 0], max: [0.4, 0.4, 0.4]}
    material: {E: 1.0e5, nu: 0.3, density: 1000}
    initial_velocity: [2.0, 0.5, 0.0]
solver: {cn_epsilon: 1.0e-10}
)");
  const Vec3 v0(2.0, 0.5, 0.0);  // m/s; CFL cuts each frame into two steps
  MpmSimulation sim(PETSC_COMM_WORLD, scene);
  const long long n = sim.particle_count();
  std::vector<double> x0, v, unused;
  sim.GatherParticles(&x0, &v);
  const double mass0 = test::ParticleMass(sim.domain());
  const test::Momenta momentum0 = test::ParticleMomenta(sim.domain());
  ASSERT_NEAR((momentum0.linear - mass0 * v0).norm(), 0.0, 1e-12 * mass0);

  const std::string csv = dir + "/stats.csv";
  long long owner_changes = 0, count = 0, lost_or_doubled = 0;
  {
    StepStats stats(PETSC_COMM_WORLD, csv, false, MpmBackwardEuler::BalanceColumns());
    std::vector<int> before = OwnerOfId(sim.domain(), n, &count);
    for (int f = 0; f < scene.time.frames; ++f) {
      sim.AdvanceFrame(&stats);
      const std::vector<int> after = OwnerOfId(sim.domain(), n, &count);
      lost_or_doubled += std::count_if(after.begin(), after.end(), [](int r) { return r < 0; });
      lost_or_doubled += std::abs(count - n);
      for (long long id = 0; id < n; ++id) owner_changes += after[id] != before[id];
      before = after;
    }
  }
  EXPECT_EQ(lost_or_doubled, 0) << "particle ids missing or on two ranks, summed over frames";

  const double t = scene.time.frames * scene.time.frame_dt;
  std::vector<double> x;
  sim.GatherParticles(&x, &v);
  double worst_x = 0.0, worst_v = 0.0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    worst_x = std::max(worst_x, std::abs(x[k] - (x0[k] + v0[k % 3] * t)));
    worst_v = std::max(worst_v, std::abs(v[k] - v0[k % 3]));
  }
  const double mass = test::ParticleMass(sim.domain());
  const test::Momenta momentum = test::ParticleMomenta(sim.domain());
  const double migrated = ColumnSum(csv, "migrated"), repartitions = ColumnSum(csv, "repartitioned");
  PetscPrintf(PETSC_COMM_WORLD,
              "migration: %lld particles, %g migrated, %g repartitions, %lld owner changes seen, "
              "worst |x - x0 - v0 t| %.2e m, |v - v0| %.2e m/s, |dp| %.2e kg m/s\n",
              n, migrated, repartitions, owner_changes, worst_x, worst_v,
              (momentum.linear - momentum0.linear).norm());
  EXPECT_LT(worst_x, 1e-9) << "a particle left x0 + v0 t (m): its state did not travel with its id";
  EXPECT_LT(worst_v, 1e-9) << "a particle's velocity changed (m/s)";
  EXPECT_NEAR(mass, mass0, 1e-13 * mass0);
  EXPECT_LE((momentum.linear - momentum0.linear).norm(), 1e-12 * mass0 * v0.norm());
  EXPECT_GT(std::abs(x[0] - x0[0]), 2.0 * 4 * 0.1) << "the box should cross at least two blocks";
  if (test::Size() == 1) {
    EXPECT_EQ(migrated, 0.0);
    EXPECT_EQ(repartitions, 0.0);
  } else {
    EXPECT_GT(migrated, 0.0) << "no particle migrated";
    EXPECT_GE(repartitions, 1.0) << "no repartition during the run";
    EXPECT_GT(owner_changes, 0) << "no particle changed rank between frames";
    EXPECT_LE(owner_changes, migrated) << "owner changes the stats did not count";
  }
}

}  // namespace
}  // namespace optistep
