#include "mpm/MpmDomain.hpp"

#include <algorithm>
#include <cmath>

#include "core/Error.hpp"
#include "core/Exchange.hpp"
#include "core/GhostedVector.hpp"
#include "core/PetscHandles.hpp"
#include "partition/Migration.hpp"

namespace optistep::mpm {
namespace {

constexpr int kWidth = LocalGrid::kBlockWidth;

int FloorDiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// The distinct blocks (at most 8) holding the 27 nodes of a stencil.
int StencilBlocks(const Stencil& s, Eigen::Vector3i* blocks) {
  int lo[3], hi[3];
  for (int d = 0; d < 3; ++d) {
    lo[d] = FloorDiv(s.base[d], kWidth);
    hi[d] = FloorDiv(s.base[d] + 2, kWidth);
  }
  int n = 0;
  for (int k = lo[2]; k <= hi[2]; ++k)
    for (int j = lo[1]; j <= hi[1]; ++j)
      for (int i = lo[0]; i <= hi[0]; ++i) blocks[n++] = Eigen::Vector3i(i, j, k);
  return n;
}

}  // namespace

MpmDomain::MpmDomain(MPI_Comm comm, double dx, double repartition_threshold)
    : comm_(comm), dx_(dx), threshold_(repartition_threshold), blocks_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

Eigen::Vector3i MpmDomain::HomeBlock(const Vec3& x) const {
  Eigen::Vector3i b;
  for (int d = 0; d < 3; ++d) b[d] = FloorDiv(static_cast<int>(std::floor(x[d] / dx_)), kWidth);
  return b;
}

long long MpmDomain::GlobalParticleCount() const {
  long long n = static_cast<long long>(n_owned_), total = 0;
  MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  return total;
}

std::vector<Eigen::Vector3i> MpmDomain::TouchedBlocks() const {
  std::vector<Eigen::Vector3i> touched;
  touched.reserve(2 * n_owned_);
  Eigen::Vector3i blocks[8];
  for (std::size_t p = 0; p < n_owned_; ++p) {
    const int n = StencilBlocks(MakeStencil(particles_.x[p], dx_), blocks);
    touched.insert(touched.end(), blocks, blocks + n);
  }
  return touched;
}

std::vector<Eigen::Vector3i> MpmDomain::HomeBlocks() const {
  std::vector<Eigen::Vector3i> home(n_owned_);
  for (std::size_t p = 0; p < n_owned_; ++p) home[p] = HomeBlock(particles_.x[p]);
  return home;
}

void MpmDomain::Distribute(Particles all) {
  particles_ = std::move(all);
  n_owned_ = particles_.size();
  blocks_.Clear();
  Rebalance(true);
}

void MpmDomain::ExportBlockOwners(std::vector<Eigen::Vector3i>* blocks,
                                  std::vector<int>* owners) const {
  blocks_.Export(blocks, owners);
}

bool MpmDomain::Restore(Particles owned, const std::vector<Eigen::Vector3i>& blocks,
                        const std::vector<int>& owners) {
  particles_ = std::move(owned);
  n_owned_ = particles_.size();
  blocks_.Assign(blocks, owners);
  if (blocks_.Fits(TouchedBlocks(), HomeBlocks())) return true;
  blocks_.Clear();
  Rebalance(true);
  return false;
}

BalanceReport MpmDomain::Rebalance(bool force) {
  DropHalo();
  blocks_.Update(TouchedBlocks());
  BalanceReport report;
  const std::vector<Eigen::Vector3i> home = HomeBlocks();
  // The imbalance the particles would have after migrating to the current block owners.
  const double projected = blocks_.ProjectedImbalance(home);
  if (size_ > 1 && (force || projected > threshold_)) {
    blocks_.Repartition(home);
    report.repartitioned = true;
  }
  std::vector<int> destination(n_owned_);
  for (std::size_t p = 0; p < n_owned_; ++p) destination[p] = OwnerOfBlock(home[p]);
  report.migrated = MigrateRecords(comm_, destination, &particles_);
  n_owned_ = particles_.size();
  long long mine = static_cast<long long>(n_owned_);
  report.particles_per_rank.assign(size_, 0);
  MPI_Allgather(&mine, 1, MPI_LONG_LONG, report.particles_per_rank.data(), 1, MPI_LONG_LONG, comm_);
  report.imbalance = LoadImbalance(report.particles_per_rank);
  return report;
}

void MpmDomain::ExchangeHalo() {
  DropHalo();
  RecordExchange<Particles> halo(comm_);
  Eigen::Vector3i blocks[8];
  int ranks[8];
  for (std::size_t p = 0; p < n_owned_; ++p) {
    const int nb = StencilBlocks(MakeStencil(particles_.x[p], dx_), blocks);
    int n_ranks = 0;
    for (int b = 0; b < nb; ++b) {
      const int r = OwnerOfBlock(blocks[b]);
      if (r != rank_ && std::find(ranks, ranks + n_ranks, r) == ranks + n_ranks) ranks[n_ranks++] = r;
    }
    for (int k = 0; k < n_ranks; ++k) halo.Send(particles_, p, ranks[k]);
  }
  halo.Deliver(&particles_);
}

void MpmDomain::BuildStepGrid(StepGrid* step) const {
  LocalGrid& grid = step->grid;
  grid.Clear();
  for (const Vec3& x : particles_.x) grid.Touch(MakeStencil(x, dx_));
  grid.Finalize();
  step->cache.Build(particles_.x, grid);
  P2G(particles_, step->cache, &grid);
  GridVelocities(&grid);

  const int n_nodes = grid.NodeCount();
  step->owned.assign(n_nodes, 0);
  step->petsc_id.assign(n_nodes, -1);
  step->owned_nodes.clear();
  // Nodes reached only by the far tail of a stencil (w_ip ~ 1e-12) would be unknowns of
  // almost no mass: their Newton directions are huge and wreck the downhill check. They
  // are no unknowns; the potential moves them in free flight (v_i + dt g), which keeps
  // the transfers' partition of unity (their weights are below 1e-9 of a particle's).
  double heaviest = 0.0;
  for (double m : particles_.mass) heaviest = std::max(heaviest, m);
  MPI_Allreduce(MPI_IN_PLACE, &heaviest, 1, MPI_DOUBLE, MPI_MAX, comm_);
  const double mass_floor = 1e-9 * heaviest;
  for (int slot = 0; slot < grid.BlockCount(); ++slot) {
    const Eigen::Vector3i first = grid.Node(LocalGrid::kNodesPerBlock * slot);
    Eigen::Vector3i block;
    for (int d = 0; d < 3; ++d) block[d] = FloorDiv(first[d], kWidth);
    const bool mine = OwnerOfBlock(block) == rank_;
    for (int k = 0; k < LocalGrid::kNodesPerBlock; ++k) step->owned[LocalGrid::kNodesPerBlock * slot + k] = mine;
  }
  for (int i = 0; i < n_nodes; ++i)
    if (step->owned[i] && grid.m[i] > mass_floor) step->owned_nodes.push_back(i);
  PetscInt n_owned = static_cast<PetscInt>(step->owned_nodes.size()), begin = 0;
  MPI_Exscan(&n_owned, &begin, 1, MPIU_INT, MPI_SUM, comm_);
  if (rank_ == 0) begin = 0;
  MPI_Allreduce(&n_owned, &step->n_global, 1, MPIU_INT, MPI_SUM, comm_);
  step->begin = begin;
  for (PetscInt k = 0; k < n_owned; ++k) step->petsc_id[step->owned_nodes[k]] = begin + k;

  // Ghosts: non-owned nodes that local particles reach with positive weight; their
  // owners answer with the global id.
  std::vector<std::vector<int>> asked(size_);
  std::vector<std::vector<std::int64_t>> requests(size_);
  for (int i = 0; i < n_nodes; ++i) {
    if (step->owned[i] || grid.m[i] <= 0.0) continue;
    const Eigen::Vector3i node = grid.Node(i);
    Eigen::Vector3i block;
    for (int d = 0; d < 3; ++d) block[d] = FloorDiv(node[d], kWidth);
    const int r = OwnerOfBlock(block);
    asked[r].push_back(i);
    for (int d = 0; d < 3; ++d) requests[r].push_back(node[d]);
  }
  const auto incoming = AllToAll(comm_, requests);
  std::vector<std::vector<std::int64_t>> answers(size_);
  for (int r = 0; r < size_; ++r)
    for (std::size_t k = 0; k < incoming[r].size(); k += 3) {
      const int i = grid.Index(Eigen::Vector3i(static_cast<int>(incoming[r][k]),
                                               static_cast<int>(incoming[r][k + 1]),
                                               static_cast<int>(incoming[r][k + 2])));
      answers[r].push_back(i >= 0 ? step->petsc_id[i] : -1);
    }
  const auto replies = AllToAll(comm_, answers);
  std::vector<std::pair<PetscInt, int>> ghosts;
  for (int r = 0; r < size_; ++r)
    for (std::size_t k = 0; k < replies[r].size(); ++k) {
      if (replies[r][k] < 0) continue;  // below the owner's mass floor: not an unknown
      step->petsc_id[asked[r][k]] = static_cast<PetscInt>(replies[r][k]);
      ghosts.emplace_back(static_cast<PetscInt>(replies[r][k]), asked[r][k]);
    }
  std::sort(ghosts.begin(), ghosts.end());
  step->ghost_nodes.clear();
  step->ghost_ids.clear();
  for (const auto& [id, i] : ghosts) {
    step->ghost_ids.push_back(id);
    step->ghost_nodes.push_back(i);
  }
  step->local_form.assign(n_nodes, -1);
  for (PetscInt k = 0; k < n_owned; ++k) step->local_form[step->owned_nodes[k]] = static_cast<int>(k);
  for (std::size_t k = 0; k < step->ghost_nodes.size(); ++k)
    step->local_form[step->ghost_nodes[k]] = static_cast<int>(n_owned + k);

  // Ghost nodes hold partial sums of P2G; their owners' velocities replace them.
  const OwnedVec v(CreateNodeVector(*step));
  {
    VecArray va(v);
    for (PetscInt k = 0; k < n_owned; ++k)
      for (int d = 0; d < 3; ++d) va[3 * k + d] = grid.v[3 * step->owned_nodes[k] + d];
  }
  {
    const GhostedLocalView local(v);
    for (int i = 0; i < n_nodes; ++i) {
      const int lf = step->local_form[i];
      // Nodes that are not unknowns keep their own P2G velocity (mv / m, 0 without mass).
      if (lf < 0) continue;
      for (int d = 0; d < 3; ++d) grid.v[3 * i + d] = local.data()[3 * lf + d];
    }
  }
}

Vec MpmDomain::CreateNodeVector(const StepGrid& step) const {
  Vec v = nullptr;
  OPTISTEP_PETSC(VecCreateGhostBlock(comm_, 3, 3 * static_cast<PetscInt>(step.owned_nodes.size()),
                                     3 * step.n_global, static_cast<PetscInt>(step.ghost_ids.size()),
                                     step.ghost_ids.data(), &v));
  return v;
}

}  // namespace optistep::mpm
