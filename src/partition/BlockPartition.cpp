#include "partition/BlockPartition.hpp"

#include <metis.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/Exchange.hpp"

namespace optistep {
namespace {

constexpr int kBias = 1 << 20;

}  // namespace

double LoadImbalance(const std::vector<long long>& per_rank) {
  const long long total = std::accumulate(per_rank.begin(), per_rank.end(), 0LL);
  const long long most = *std::max_element(per_rank.begin(), per_rank.end());
  return total > 0 ? most * static_cast<double>(per_rank.size()) / total : 1.0;
}

BlockPartition::BlockPartition(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

std::uint64_t BlockPartition::Key(const Eigen::Vector3i& b) {
  return (static_cast<std::uint64_t>(b[2] + kBias) << 42) |
         (static_cast<std::uint64_t>(b[1] + kBias) << 21) | static_cast<std::uint64_t>(b[0] + kBias);
}

Eigen::Vector3i BlockPartition::Unkey(std::uint64_t key) {
  const std::uint64_t mask = (1u << 21) - 1;
  return Eigen::Vector3i(static_cast<int>(key & mask) - kBias,
                         static_cast<int>((key >> 21) & mask) - kBias,
                         static_cast<int>((key >> 42) & mask) - kBias);
}

int BlockPartition::Owner(const Eigen::Vector3i& block) const {
  const auto it = owner_.find(Key(block));
  if (it == owner_.end())
    throw std::logic_error("MPM block (" + std::to_string(block[0]) + ", " +
                           std::to_string(block[1]) + ", " + std::to_string(block[2]) +
                           ") has no owner");
  return it->second;
}

void BlockPartition::Update(const std::vector<Eigen::Vector3i>& touched) {
  std::vector<std::uint64_t> mine;
  mine.reserve(touched.size());
  for (const Eigen::Vector3i& block : touched) mine.push_back(Key(block));
  std::sort(mine.begin(), mine.end());
  mine.erase(std::unique(mine.begin(), mine.end()), mine.end());
  // The global set of touched blocks; a new block goes to the lowest rank touching it.
  std::vector<int> counts;
  const std::vector<std::uint64_t> all = AllGatherLists(comm_, mine, &counts);
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
  std::unordered_map<std::uint64_t, int> updated;
  updated.reserve(blocks.size());
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto it = owner_.find(blocks[b]);
    updated[blocks[b]] = (it != owner_.end()) ? it->second : claimant[b];
  }
  owner_.swap(updated);
}

double BlockPartition::ProjectedImbalance(const std::vector<Eigen::Vector3i>& home) const {
  std::vector<long long> per_rank(size_, 0), total(size_, 0);
  for (const Eigen::Vector3i& block : home) ++per_rank[Owner(block)];
  MPI_Allreduce(per_rank.data(), total.data(), size_, MPI_LONG_LONG, MPI_SUM, comm_);
  return LoadImbalance(total);
}

void BlockPartition::Repartition(const std::vector<Eigen::Vector3i>& home) {
  std::vector<std::uint64_t> keys;
  keys.reserve(owner_.size());
  for (const auto& [key, r] : owner_) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  const int n = static_cast<int>(keys.size());
  std::unordered_map<std::uint64_t, int> index;
  index.reserve(n);
  for (int b = 0; b < n; ++b) index[keys[b]] = b;
  std::vector<long long> local(n, 0), weight(n, 0);
  for (const Eigen::Vector3i& block : home) ++local[index.at(Key(block))];
  MPI_Allreduce(local.data(), weight.data(), n, MPI_LONG_LONG, MPI_SUM, comm_);

  std::vector<int> part(n, 0);
  // One part needs no METIS (METIS_PartGraphKway divides by zero for nparts = 1).
  if (rank_ == 0 && n > 0 && size_ > 1) {
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
      // Every block carries its nodes' work even without items of its own.
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

void BlockPartition::Export(std::vector<Eigen::Vector3i>* blocks, std::vector<int>* owners) const {
  std::vector<std::pair<std::uint64_t, int>> map(owner_.begin(), owner_.end());
  std::sort(map.begin(), map.end());
  blocks->clear();
  owners->clear();
  for (const auto& [key, r] : map) {
    blocks->push_back(Unkey(key));
    owners->push_back(r);
  }
}

void BlockPartition::Assign(const std::vector<Eigen::Vector3i>& blocks,
                            const std::vector<int>& owners) {
  owner_.clear();
  for (std::size_t b = 0; b < blocks.size(); ++b) owner_[Key(blocks[b])] = owners[b];
}

bool BlockPartition::Fits(const std::vector<Eigen::Vector3i>& touched,
                          const std::vector<Eigen::Vector3i>& home) const {
  BlockPartition refreshed = *this;
  refreshed.Update(touched);  // keeps the owners of known blocks: a change is a block set change
  int fits = refreshed.owner_ == owner_;
  for (const Eigen::Vector3i& block : home) {
    const auto it = owner_.find(Key(block));
    fits &= it != owner_.end() && it->second == rank_;
  }
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm_);
  return fits != 0;
}

}  // namespace optistep
