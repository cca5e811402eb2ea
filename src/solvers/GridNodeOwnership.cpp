#include "solvers/GridNodeOwnership.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>

#include "core/Exchange.hpp"

namespace optistep {
namespace {

/// The rank that collects the claims on coarse node c (splitmix64 of its coordinates):
/// spreads the rendezvous over the ranks whatever the grid's shape.
int HomeRank(const GridCoord& c, int size) {
  std::uint64_t h = 0;
  for (int d = 0; d < 3; ++d) {
    h += static_cast<std::uint64_t>(static_cast<std::uint32_t>(c[d])) + 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return static_cast<int>(h % static_cast<std::uint64_t>(size));
}

GridCoord CoordAt(const std::vector<std::int64_t>& list, std::size_t k) {
  return {static_cast<int>(list[k]), static_cast<int>(list[k + 1]), static_cast<int>(list[k + 2])};
}

}  // namespace

bool ZyxLess(const GridCoord& a, const GridCoord& b) {
  if (a[2] != b[2]) return a[2] < b[2];
  if (a[1] != b[1]) return a[1] < b[1];
  return a[0] < b[0];
}

std::ptrdiff_t FindGridNode(const std::vector<GridCoord>& sorted, const GridCoord& c) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), c, ZyxLess);
  return it != sorted.end() && *it == c ? it - sorted.begin() : -1;
}

std::vector<int> ElectOwners(MPI_Comm comm, const std::vector<GridCoord>& referenced,
                             const std::vector<double>& claim) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  // (x, y, z, the claim's bits) to each node's home rank; the owner comes back.
  std::vector<std::vector<std::int64_t>> claims(size);
  for (std::size_t n = 0; n < referenced.size(); ++n) {
    std::int64_t bits = 0;
    std::memcpy(&bits, &claim[n], sizeof bits);
    auto& to = claims[HomeRank(referenced[n], size)];
    to.insert(to.end(), {referenced[n][0], referenced[n][1], referenced[n][2], bits});
  }
  const auto received = AllToAll(comm, claims);
  struct Best {
    int rank;
    double claim;
  };
  std::map<GridCoord, Best, decltype(&ZyxLess)> best_at_home(ZyxLess);
  for (int r = 0; r < size; ++r)  // ascending r: a tie keeps the lowest rank
    for (std::size_t k = 0; k < received[r].size(); k += 4) {
      double c = 0.0;
      std::memcpy(&c, &received[r][k + 3], sizeof c);
      const auto [it, fresh] = best_at_home.emplace(CoordAt(received[r], k), Best{r, c});
      if (!fresh && c > it->second.claim) it->second = Best{r, c};
    }
  std::vector<std::vector<std::int64_t>> answers(size);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < received[r].size(); k += 4)
      answers[r].push_back(best_at_home.at(CoordAt(received[r], k)).rank);
  best_at_home.clear();
  const auto owners_by_home = AllToAll(comm, answers);
  std::vector<int> owner(referenced.size());
  std::vector<std::size_t> next(size, 0);
  for (std::size_t n = 0; n < referenced.size(); ++n) {
    const int home = HomeRank(referenced[n], size);
    owner[n] = static_cast<int>(owners_by_home[home][next[home]++]);
  }
  return owner;
}

std::vector<PetscInt> NumberCoarseNodes(MPI_Comm comm, const std::vector<GridCoord>& referenced,
                                        const std::vector<int>& owner,
                                        const std::vector<std::size_t>& numbering, GridInfo* coarse) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<PetscInt> local_id(referenced.size(), -1);
  coarse->owned_nodes.clear();
  for (std::size_t n : numbering) {
    local_id[n] = static_cast<PetscInt>(coarse->owned_nodes.size());
    coarse->owned_nodes.push_back(referenced[n]);
  }
  const PetscInt n_owned = static_cast<PetscInt>(coarse->owned_nodes.size());
  PetscInt first = 0;
  MPI_Exscan(&n_owned, &first, 1, MPIU_INT, MPI_SUM, comm);
  if (rank == 0) first = 0;
  MPI_Allreduce(&n_owned, &coarse->n_global, 1, MPIU_INT, MPI_SUM, comm);
  coarse->first_global = first;

  // Ours directly, the others from their owners.
  std::vector<PetscInt> global_id(referenced.size(), -1);
  std::vector<std::vector<std::int64_t>> asks(size);
  std::vector<std::vector<std::size_t>> asked(size);
  for (std::size_t n = 0; n < referenced.size(); ++n) {
    if (owner[n] == rank) {
      global_id[n] = first + local_id[n];
      continue;
    }
    asks[owner[n]].insert(asks[owner[n]].end(), {referenced[n][0], referenced[n][1], referenced[n][2]});
    asked[owner[n]].push_back(n);
  }
  const auto questions = AllToAll(comm, asks);
  std::vector<std::vector<std::int64_t>> replies(size);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < questions[r].size(); k += 3) {
      const std::ptrdiff_t n = FindGridNode(referenced, CoordAt(questions[r], k));
      if (n < 0 || owner[n] != rank || local_id[n] < 0)
        throw std::logic_error("NumberCoarseNodes: a coarse node was asked of a rank that does not own it");
      replies[r].push_back(first + local_id[n]);
    }
  const auto ids = AllToAll(comm, replies);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < asked[r].size(); ++k) global_id[asked[r][k]] = static_cast<PetscInt>(ids[r][k]);
  return global_id;
}

}  // namespace optistep
