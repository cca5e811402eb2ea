#include "mpm/MpmDomain.hpp"

#include <metis.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/Error.hpp"
#include "core/GhostedVector.hpp"
#include "partition/Exchange.hpp"

namespace optistep::mpm {
namespace {

constexpr int kBias = 1 << 20;
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
    : comm_(comm), dx_(dx), threshold_(repartition_threshold) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

std::uint64_t MpmDomain::Key(const Eigen::Vector3i& b) {
  return (static_cast<std::uint64_t>(b[2] + kBias) << 42) |
         (static_cast<std::uint64_t>(b[1] + kBias) << 21) | static_cast<std::uint64_t>(b[0] + kBias);
}

Eigen::Vector3i MpmDomain::Unkey(std::uint64_t key) {
  const std::uint64_t mask = (1u << 21) - 1;
  return Eigen::Vector3i(static_cast<int>(key & mask) - kBias,
                         static_cast<int>((key >> 21) & mask) - kBias,
                         static_cast<int>((key >> 42) & mask) - kBias);
}

Eigen::Vector3i MpmDomain::HomeBlock(const Vec3& x) const {
  Eigen::Vector3i b;
  for (int d = 0; d < 3; ++d) b[d] = FloorDiv(static_cast<int>(std::floor(x[d] / dx_)), kWidth);
  return b;
}

int MpmDomain::OwnerOfBlock(const Eigen::Vector3i& block) const {
  const auto it = owner_.find(Key(block));
  if (it == owner_.end())
    throw std::logic_error("MPM block (" + std::to_string(block[0]) + ", " +
                           std::to_string(block[1]) + ", " + std::to_string(block[2]) +
                           ") has no owner");
  return it->second;
}

long long MpmDomain::GlobalParticleCount() const {
  long long n = static_cast<long long>(n_owned_), total = 0;
  MPI_Allreduce(&n, &total, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  return total;
}

std::vector<std::uint64_t> MpmDomain::TouchedBlocks() const {
  std::vector<std::uint64_t> keys;
  keys.reserve(2 * n_owned_);
  Eigen::Vector3i blocks[8];
  for (std::size_t p = 0; p < n_owned_; ++p) {
    const int n = StencilBlocks(MakeStencil(particles_.x[p], dx_), blocks);
    for (int b = 0; b < n; ++b) keys.push_back(Key(blocks[b]));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

void MpmDomain::UpdateBlockMap(const std::vector<std::uint64_t>& blocks,
                               const std::vector<int>& claimant) {
  std::unordered_map<std::uint64_t, int> updated;
  updated.reserve(blocks.size());
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto it = owner_.find(blocks[b]);
    updated[blocks[b]] = (it != owner_.end()) ? it->second : claimant[b];
  }
  owner_.swap(updated);
}

void MpmDomain::Distribute(Particles all) {
  particles_ = std::move(all);
  n_owned_ = particles_.size();
  owner_.clear();
  Rebalance(true);
}

void MpmDomain::ExportBlockOwners(std::vector<Eigen::Vector3i>* blocks,
                                  std::vector<int>* owners) const {
  std::vector<std::pair<std::uint64_t, int>> map(owner_.begin(), owner_.end());
  std::sort(map.begin(), map.end());
  blocks->clear();
  owners->clear();
  for (const auto& [key, r] : map) {
    blocks->push_back(Unkey(key));
    owners->push_back(r);
  }
}

void MpmDomain::Restore(Particles owned, const std::vector<Eigen::Vector3i>& blocks,
                        const std::vector<int>& owners) {
  owner_.clear();
  for (std::size_t b = 0; b < blocks.size(); ++b) owner_[Key(blocks[b])] = owners[b];
  particles_ = std::move(owned);
  n_owned_ = particles_.size();
  for (std::size_t p = 0; p < n_owned_; ++p)
    if (OwnerOfBlock(HomeBlock(particles_.x[p])) != rank_)
      throw std::logic_error("MpmDomain::Restore: particle " + std::to_string(particles_.id[p]) +
                             " lives in a block of another rank");
}

BalanceReport MpmDomain::Rebalance(bool force) {
  DropHalo();
  // The global set of touched blocks; a new block goes to the lowest rank touching it.
  std::vector<int> counts;
  const std::vector<std::uint64_t> all = AllGatherLists(comm_, TouchedBlocks(), &counts);
  std::vector<std::pair<std::uint64_t, int>> claims;
  claims.reserve(all.size());
  for (int r = 0, k = 0; r < size_; ++r)
    for (int i = 0; i < counts[r]; ++i, ++k) claims.emplace_back(all[k], r);
  std::sort(claims.begin(), claims.end());
  std::vector<std::uint64_t> blocks;
  std::vector<int> claimant;
  for (const auto& [key, r] : claims)
    if (blocks.empty() || blocks.back() != key) {
      blocks.push_back(key);
      claimant.push_back(r);
    }
  UpdateBlockMap(blocks, claimant);

  BalanceReport report;
  auto imbalance = [&] {
    long long mine = static_cast<long long>(n_owned_);
    report.particles_per_rank.assign(size_, 0);
    MPI_Allgather(&mine, 1, MPI_LONG_LONG, report.particles_per_rank.data(), 1, MPI_LONG_LONG,
                  comm_);
    const long long total = std::accumulate(report.particles_per_rank.begin(),
                                            report.particles_per_rank.end(), 0LL);
    const long long most =
        *std::max_element(report.particles_per_rank.begin(), report.particles_per_rank.end());
    return total > 0 ? most * static_cast<double>(size_) / total : 1.0;
  };
  // The imbalance the particles would have after migrating to the current block owners.
  {
    std::vector<long long> per_rank(size_, 0), total(size_, 0);
    for (std::size_t p = 0; p < n_owned_; ++p) ++per_rank[OwnerOfBlock(HomeBlock(particles_.x[p]))];
    MPI_Allreduce(per_rank.data(), total.data(), size_, MPI_LONG_LONG, MPI_SUM, comm_);
    const long long sum = std::accumulate(total.begin(), total.end(), 0LL);
    const long long most = *std::max_element(total.begin(), total.end());
    const double projected = sum > 0 ? most * static_cast<double>(size_) / sum : 1.0;
    if (size_ > 1 && (force || projected > threshold_)) {
      Repartition();
      report.repartitioned = true;
    }
  }
  report.migrated = Migrate();
  report.imbalance = imbalance();
  return report;
}

void MpmDomain::Repartition() {
  std::vector<std::uint64_t> keys;
  keys.reserve(owner_.size());
  for (const auto& [key, r] : owner_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  const int n = static_cast<int>(keys.size());
  std::unordered_map<std::uint64_t, int> index;
  index.reserve(n);
  for (int b = 0; b < n; ++b) index[keys[b]] = b;
  std::vector<long long> local(n, 0), weight(n, 0);
  for (std::size_t p = 0; p < n_owned_; ++p) ++local[index.at(Key(HomeBlock(particles_.x[p])))];
  MPI_Allreduce(local.data(), weight.data(), n, MPI_LONG_LONG, MPI_SUM, comm_);

  std::vector<int> part(n, 0);
  if (rank_ == 0 && n > 0) {
    std::vector<idx_t> xadj(n + 1, 0), adjncy, vwgt(n);
    for (int b = 0; b < n; ++b) {
      const Eigen::Vector3i c = Unkey(keys[b]);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            if (dx == 0 && dy == 0 && dz == 0) continue;
            const auto it = index.find(Key(c + Eigen::Vector3i(dx, dy, dz)));
            if (it != index.end()) adjncy.push_back(it->second);
          }
      xadj[b + 1] = static_cast<idx_t>(adjncy.size());
      // Every block carries its nodes' work even without particles of its own.
      vwgt[b] = static_cast<idx_t>(weight[b] + 1);
    }
    idx_t nvtxs = n, ncon = 1, nparts = size_, objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;
    options[METIS_OPTION_NUMBERING] = 0;
    std::vector<idx_t> result(n, 0);
    const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), vwgt.data(),
                                           nullptr, nullptr, &nparts, nullptr, nullptr, options,
                                           &objval, result.data());
    if (status != METIS_OK)
      throw std::runtime_error("METIS_PartGraphKway failed with status " + std::to_string(status));
    for (int b = 0; b < n; ++b) part[b] = static_cast<int>(result[b]);
  }
  MPI_Bcast(part.data(), n, MPI_INT, 0, comm_);
  for (int b = 0; b < n; ++b) owner_[keys[b]] = part[b];
}

long long MpmDomain::Migrate() {
  std::vector<std::vector<double>> send(size_);
  std::vector<char> leaving(n_owned_, 0);
  for (std::size_t p = 0; p < n_owned_; ++p) {
    const int dest = OwnerOfBlock(HomeBlock(particles_.x[p]));
    if (dest == rank_) continue;
    leaving[p] = 1;
    auto& buffer = send[dest];
    buffer.resize(buffer.size() + Particles::kPackedDoubles);
    particles_.Pack(p, buffer.data() + buffer.size() - Particles::kPackedDoubles);
  }
  particles_.EraseIf(leaving);
  long long moved = std::count(leaving.begin(), leaving.end(), 1), total = 0;
  const std::vector<std::vector<double>> recv = AllToAll(comm_, send);
  for (const auto& buffer : recv)
    for (std::size_t k = 0; k < buffer.size(); k += Particles::kPackedDoubles)
      particles_.AppendPacked(buffer.data() + k);
  n_owned_ = particles_.size();
  MPI_Allreduce(&moved, &total, 1, MPI_LONG_LONG, MPI_SUM, comm_);
  return total;
}

void MpmDomain::ExchangeHalo() {
  DropHalo();
  std::vector<std::vector<double>> send(size_);
  Eigen::Vector3i blocks[8];
  int ranks[8];
  for (std::size_t p = 0; p < n_owned_; ++p) {
    const int nb = StencilBlocks(MakeStencil(particles_.x[p], dx_), blocks);
    int n_ranks = 0;
    for (int b = 0; b < nb; ++b) {
      const int r = OwnerOfBlock(blocks[b]);
      if (r != rank_ && std::find(ranks, ranks + n_ranks, r) == ranks + n_ranks) ranks[n_ranks++] = r;
    }
    for (int k = 0; k < n_ranks; ++k) {
      auto& buffer = send[ranks[k]];
      buffer.resize(buffer.size() + Particles::kPackedDoubles);
      particles_.Pack(p, buffer.data() + buffer.size() - Particles::kPackedDoubles);
    }
  }
  const std::vector<std::vector<double>> recv = AllToAll(comm_, send);
  for (const auto& buffer : recv)
    for (std::size_t k = 0; k < buffer.size(); k += Particles::kPackedDoubles)
      particles_.AppendPacked(buffer.data() + k);
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
  Vec v = CreateNodeVector(*step);
  PetscScalar* va = nullptr;
  OPTISTEP_PETSC(VecGetArray(v, &va));
  for (PetscInt k = 0; k < n_owned; ++k)
    for (int d = 0; d < 3; ++d) va[3 * k + d] = grid.v[3 * step->owned_nodes[k] + d];
  OPTISTEP_PETSC(VecRestoreArray(v, &va));
  {
    const GhostedLocalView local(v);
    for (int i = 0; i < n_nodes; ++i) {
      const int lf = step->local_form[i];
      // Nodes that are not unknowns keep their own P2G velocity (mv / m, 0 without mass).
      if (lf < 0) continue;
      for (int d = 0; d < 3; ++d) grid.v[3 * i + d] = local.data()[3 * lf + d];
    }
  }
  VecDestroy(&v);
}

Vec MpmDomain::CreateNodeVector(const StepGrid& step) const {
  Vec v = nullptr;
  OPTISTEP_PETSC(VecCreateGhostBlock(comm_, 3, 3 * static_cast<PetscInt>(step.owned_nodes.size()),
                                     3 * step.n_global, static_cast<PetscInt>(step.ghost_ids.size()),
                                     step.ghost_ids.data(), &v));
  return v;
}

}  // namespace optistep::mpm
