#include "solvers/NodeEmbedding.hpp"

#include <algorithm>
#include <cstdint>
#include <map>

#include "core/Error.hpp"
#include "solvers/GridNodeOwnership.hpp"

namespace optistep {
namespace {

using Coord = GridCoord;

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
  int rank = 0;
  MPI_Comm_rank(comm, &rank);

  // The coarse nodes this rank's fine nodes take weight from, and which of them it claims
  // (it owns the fine node 2c that copies c).
  std::vector<Coord> fine_sorted = fine.owned_nodes;
  std::sort(fine_sorted.begin(), fine_sorted.end(), ZyxLess);
  std::vector<Coord> referenced;
  for (const Coord& x : fine.owned_nodes)
    ForEachCoarseNode(x, embedding, [&](const Coord& c, double) { referenced.push_back(c); });
  std::sort(referenced.begin(), referenced.end(), ZyxLess);
  referenced.erase(std::unique(referenced.begin(), referenced.end()), referenced.end());

  // The owner: the rank of the fine node 2c when that node is an unknown, else the lowest
  // rank referencing c.
  std::vector<double> claim(referenced.size());
  for (std::size_t n = 0; n < referenced.size(); ++n) {
    const Coord& c = referenced[n];
    claim[n] = FindGridNode(fine_sorted, Coord{2 * c[0], 2 * c[1], 2 * c[2]}) >= 0 ? 1.0 : 0.0;
  }
  const std::vector<int> owner = ElectOwners(comm, referenced, claim);

  // Number the owned coarse nodes: those copied by this rank's fine nodes in the fine
  // PETSc order, then the others by (z, y, x).
  std::vector<std::size_t> numbering;
  std::vector<char> numbered(referenced.size(), 0);
  for (const Coord& x : fine.owned_nodes) {
    if ((x[0] | x[1] | x[2]) & 1) continue;
    const std::ptrdiff_t n = FindGridNode(referenced, Coord{x[0] / 2, x[1] / 2, x[2] / 2});
    if (n < 0 || owner[n] != rank) continue;
    numbering.push_back(static_cast<std::size_t>(n));
    numbered[n] = 1;
  }
  for (std::size_t n = 0; n < referenced.size(); ++n)
    if (owner[n] == rank && !numbered[n]) numbering.push_back(n);
  const std::vector<PetscInt> global_id = NumberCoarseNodes(comm, referenced, owner, numbering, coarse);
  const PetscInt n_owned = static_cast<PetscInt>(coarse->owned_nodes.size());
  coarse->dx = 2.0 * fine.dx;

  // P: one block row per fine node, weight times I3 per coarse node it takes weight from.
  const PetscInt n_fine = static_cast<PetscInt>(fine.owned_nodes.size());
  std::vector<std::vector<std::pair<PetscInt, double>>> rows(n_fine);
  std::vector<PetscInt> d_nnz(n_fine, 0), o_nnz(n_fine, 0);
  for (PetscInt k = 0; k < n_fine; ++k) {
    ForEachCoarseNode(fine.owned_nodes[k], embedding, [&](const Coord& c, double w) {
      const std::ptrdiff_t n = FindGridNode(referenced, c);
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
