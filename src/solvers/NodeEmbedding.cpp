#include "solvers/NodeEmbedding.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include "core/Error.hpp"
#include "core/Exchange.hpp"

namespace optistep {
namespace {

using Coord = std::array<int, 3>;

/// Order by (z, y, x): the order the grid's nodes are laid out in.
bool ZyxLess(const Coord& a, const Coord& b) {
  if (a[2] != b[2]) return a[2] < b[2];
  if (a[1] != b[1]) return a[1] < b[1];
  return a[0] < b[0];
}

int FloorHalf(int i) { return i >= 0 ? i / 2 : -((-i + 1) / 2); }

/// One axis of the embedding: the coarse indices fine index i takes weight from.
struct AxisWeights {
  int n = 0;
  int index[3];
  double weight[3];
};

AxisWeights Axis(int i, Embedding embedding) {
  const int c = FloorHalf(i);
  AxisWeights a;
  const auto add = [&](int index, double weight) {
    a.index[a.n] = index;
    a.weight[a.n++] = weight;
  };
  if (i == 2 * c) {
    if (embedding == Embedding::kLinear) {
      add(c, 1.0);
    } else {
      add(c - 1, 0.125);
      add(c, 0.75);
      add(c + 1, 0.125);
    }
  } else {
    add(c, 0.5);
    add(c + 1, 0.5);
  }
  return a;
}

/// Calls f(coarse node, weight) for every coarse node fine node x takes weight from.
template <class F>
void ForEachCoarseNode(const Coord& x, Embedding embedding, F&& f) {
  const AxisWeights ax = Axis(x[0], embedding), ay = Axis(x[1], embedding), az = Axis(x[2], embedding);
  for (int c = 0; c < az.n; ++c)
    for (int b = 0; b < ay.n; ++b)
      for (int a = 0; a < ax.n; ++a)
        f(Coord{ax.index[a], ay.index[b], az.index[c]}, ax.weight[a] * ay.weight[b] * az.weight[c]);
}

/// The rank that collects the ownership claims of coarse node c (splitmix64 of its
/// coordinates): spreads the rendezvous over the ranks whatever the grid's shape.
int HomeRank(const Coord& c, int size) {
  std::uint64_t h = 0;
  for (int d = 0; d < 3; ++d) {
    h += static_cast<std::uint64_t>(static_cast<std::uint32_t>(c[d])) + 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return static_cast<int>(h % static_cast<std::uint64_t>(size));
}

/// Index of c in the (z, y, x)-sorted list, or -1.
std::ptrdiff_t Find(const std::vector<Coord>& sorted, const Coord& c) {
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), c, ZyxLess);
  return it != sorted.end() && *it == c ? it - sorted.begin() : -1;
}

}  // namespace

const char* EmbeddingName(Embedding embedding) {
  return embedding == Embedding::kLinear ? "linear" : "quadratic";
}

bool ParseEmbedding(const std::string& name, Embedding* embedding) {
  if (name == "linear") *embedding = Embedding::kLinear;
  else if (name == "quadratic") *embedding = Embedding::kQuadratic;
  else return false;
  return true;
}

Mat BuildProlongation(MPI_Comm comm, const GridInfo& fine, Embedding embedding, GridInfo* coarse) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);

  // The coarse nodes this rank's fine nodes take weight from, and which of them it claims
  // (it owns the fine node 2c that copies c).
  std::vector<Coord> fine_sorted = fine.owned_nodes;
  std::sort(fine_sorted.begin(), fine_sorted.end(), ZyxLess);
  std::vector<Coord> referenced;
  for (const Coord& x : fine.owned_nodes)
    ForEachCoarseNode(x, embedding, [&](const Coord& c, double) { referenced.push_back(c); });
  std::sort(referenced.begin(), referenced.end(), ZyxLess);
  referenced.erase(std::unique(referenced.begin(), referenced.end()), referenced.end());

  // Rendezvous at each coarse node's home rank: (x, y, z, claim) in, the owner out.
  std::vector<std::vector<std::int64_t>> claims(size);
  for (const Coord& c : referenced) {
    const bool claim = Find(fine_sorted, Coord{2 * c[0], 2 * c[1], 2 * c[2]}) >= 0;
    auto& to = claims[HomeRank(c, size)];
    to.insert(to.end(), {c[0], c[1], c[2], claim ? 1 : 0});
  }
  const auto received = AllToAll(comm, claims);
  std::map<Coord, int, decltype(&ZyxLess)> owner_at_home(ZyxLess);
  for (int r = 0; r < size; ++r)  // ascending r: the first rank seen is the lowest
    for (std::size_t k = 0; k < received[r].size(); k += 4) {
      const Coord c{static_cast<int>(received[r][k]), static_cast<int>(received[r][k + 1]),
                    static_cast<int>(received[r][k + 2])};
      const auto [it, fresh] = owner_at_home.emplace(c, r);
      if (received[r][k + 3]) it->second = r;  // the rank of the fine node 2c wins
      (void)fresh;
    }
  std::vector<std::vector<std::int64_t>> answers(size);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < received[r].size(); k += 4)
      answers[r].push_back(owner_at_home.at(Coord{static_cast<int>(received[r][k]),
                                                  static_cast<int>(received[r][k + 1]),
                                                  static_cast<int>(received[r][k + 2])}));
  owner_at_home.clear();
  const auto owners_by_home = AllToAll(comm, answers);
  std::vector<int> owner(referenced.size());
  {
    std::vector<std::size_t> next(size, 0);
    for (std::size_t n = 0; n < referenced.size(); ++n) {
      const int home = HomeRank(referenced[n], size);
      owner[n] = static_cast<int>(owners_by_home[home][next[home]++]);
    }
  }

  // Number the owned coarse nodes: those copied by this rank's fine nodes in the fine
  // PETSc order, then the others by (z, y, x).
  std::vector<PetscInt> local_id(referenced.size(), -1);
  coarse->owned_nodes.clear();
  for (const Coord& x : fine.owned_nodes) {
    if ((x[0] | x[1] | x[2]) & 1) continue;
    const std::ptrdiff_t n = Find(referenced, Coord{x[0] / 2, x[1] / 2, x[2] / 2});
    if (n < 0 || owner[n] != rank) continue;
    local_id[n] = static_cast<PetscInt>(coarse->owned_nodes.size());
    coarse->owned_nodes.push_back(referenced[n]);
  }
  for (std::size_t n = 0; n < referenced.size(); ++n)
    if (owner[n] == rank && local_id[n] < 0) {
      local_id[n] = static_cast<PetscInt>(coarse->owned_nodes.size());
      coarse->owned_nodes.push_back(referenced[n]);
    }
  const PetscInt n_owned = static_cast<PetscInt>(coarse->owned_nodes.size());
  PetscInt first = 0;
  MPI_Exscan(&n_owned, &first, 1, MPIU_INT, MPI_SUM, comm);
  if (rank == 0) first = 0;
  MPI_Allreduce(&n_owned, &coarse->n_global, 1, MPIU_INT, MPI_SUM, comm);
  coarse->first_global = first;
  coarse->dx = 2.0 * fine.dx;

  // Global ids of the referenced coarse nodes: ours directly, the others from their owners.
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
      const std::ptrdiff_t n = Find(referenced, Coord{static_cast<int>(questions[r][k]),
                                                      static_cast<int>(questions[r][k + 1]),
                                                      static_cast<int>(questions[r][k + 2])});
      if (n < 0 || owner[n] != rank)
        throw std::logic_error("BuildProlongation: a coarse node was asked of a rank that does not own it");
      replies[r].push_back(first + local_id[n]);
    }
  const auto ids = AllToAll(comm, replies);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < asked[r].size(); ++k) global_id[asked[r][k]] = static_cast<PetscInt>(ids[r][k]);

  // P: one block row per fine node, weight times I3 per coarse node it takes weight from.
  const PetscInt n_fine = static_cast<PetscInt>(fine.owned_nodes.size());
  std::vector<std::vector<std::pair<PetscInt, double>>> rows(n_fine);
  std::vector<PetscInt> d_nnz(n_fine, 0), o_nnz(n_fine, 0);
  for (PetscInt k = 0; k < n_fine; ++k) {
    ForEachCoarseNode(fine.owned_nodes[k], embedding, [&](const Coord& c, double w) {
      const std::ptrdiff_t n = Find(referenced, c);
      rows[k].emplace_back(global_id[n], w);
      (owner[n] == rank ? d_nnz[k] : o_nnz[k])++;
    });
    std::sort(rows[k].begin(), rows[k].end());
  }
  Mat P = nullptr;
  OPTISTEP_PETSC(MatCreate(comm, &P));
  OPTISTEP_PETSC(MatSetSizes(P, 3 * n_fine, 3 * n_owned, 3 * fine.n_global, 3 * coarse->n_global));
  OPTISTEP_PETSC(MatSetBlockSizes(P, 3, 3));
  OPTISTEP_PETSC(MatSetType(P, MATAIJ));
  OPTISTEP_PETSC(MatXAIJSetPreallocation(P, 3, d_nnz.data(), o_nnz.data(), nullptr, nullptr));
  OPTISTEP_PETSC(MatSetOption(P, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  std::vector<PetscInt> cols;
  std::vector<double> values;
  for (PetscInt k = 0; k < n_fine; ++k) {
    const std::size_t m = rows[k].size();
    cols.resize(m);
    values.assign(9 * m, 0.0);  // row-oriented 3 x 3m
    for (std::size_t j = 0; j < m; ++j) {
      cols[j] = rows[k][j].first;
      for (int d = 0; d < 3; ++d) values[d * 3 * m + 3 * j + d] = rows[k][j].second;
    }
    const PetscInt row = fine.first_global + k;
    OPTISTEP_PETSC(MatSetValuesBlocked(P, 1, &row, static_cast<PetscInt>(m), cols.data(), values.data(),
                                       INSERT_VALUES));
  }
  OPTISTEP_PETSC(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  return P;
}

}  // namespace optistep
