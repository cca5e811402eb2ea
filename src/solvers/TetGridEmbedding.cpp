#include "solvers/TetGridEmbedding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/Error.hpp"
#include "solvers/NodeEmbedding.hpp"

namespace optistep {
namespace {

/// A node's place on its body's grid: the grid nodes it takes weight from, with the weights.
struct Embedded {
  int n = 0;
  GridCoord corner[8];
  double weight[8];
};

}  // namespace

double MeanNodeSpacing(const RestNodes& nodes) {
  return std::cbrt(nodes.volume / static_cast<double>(std::max<PetscInt>(nodes.n_global, 1)));
}

Mat BuildTetGridProlongation(MPI_Comm comm, const RestNodes& nodes, double h, int levels_below,
                             GridInfo* grid) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const PetscInt n_fine = static_cast<PetscInt>(nodes.X.size());
  const int n_bodies = std::max(nodes.n_bodies, 1);

  // Each body's bounding box at rest, over all ranks.
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> low(3 * n_bodies, kInf), high(3 * n_bodies, kInf);  // high stored negated
  for (PetscInt k = 0; k < n_fine; ++k)
    for (int d = 0; d < 3; ++d) {
      const int b = nodes.body[k];
      low[3 * b + d] = std::min(low[3 * b + d], nodes.X[k][d]);
      high[3 * b + d] = std::min(high[3 * b + d], -nodes.X[k][d]);
    }
  MPI_Allreduce(MPI_IN_PLACE, low.data(), 3 * n_bodies, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(MPI_IN_PLACE, high.data(), 3 * n_bodies, MPI_DOUBLE, MPI_MIN, comm);
  // Body b's grid starts at x index shift[b]: its cells, then a gap that halves on every
  // level below and still separates the bodies on the coarsest.
  if (levels_below < 0) {  // as many as a grid can shrink: until a body spans one cell
    double widest = 0.0;
    for (int b = 0; b < n_bodies; ++b)
      for (int d = 0; d < 3; ++d)
        if (low[3 * b + d] < kInf) widest = std::max(widest, -high[3 * b + d] - low[3 * b + d]);
    levels_below = static_cast<int>(std::ceil(std::log2(std::max(widest / h, 1.0)))) + 2;
  }
  const int gap = (2 << std::min(levels_below, 24)) + 2;
  std::vector<int> shift(n_bodies, 0);
  for (int b = 0; b + 1 < n_bodies; ++b) {
    const double extent = low[3 * b] < kInf ? -high[3 * b] - low[3 * b] : 0.0;
    shift[b + 1] = shift[b] + static_cast<int>(std::floor(extent / h)) + 2 + gap;
  }

  const auto embed = [&](PetscInt k) {
    Embedded e;
    const int b = nodes.body[k];
    int c[3];
    double t[3];
    for (int d = 0; d < 3; ++d) {
      const double s = (nodes.X[k][d] - low[3 * b + d]) / h;
      c[d] = static_cast<int>(std::floor(s));
      t[d] = s - c[d];
    }
    c[0] += shift[b];
    for (int corner = 0; corner < 8; ++corner) {
      double w = 1.0;
      GridCoord g;
      for (int d = 0; d < 3; ++d) {
        const int up = (corner >> d) & 1;
        w *= up ? t[d] : 1.0 - t[d];
        g[d] = c[d] + up;
      }
      if (w == 0.0) continue;
      e.corner[e.n] = g;
      e.weight[e.n++] = w;
    }
    return e;
  };

  // The grid nodes the free owned nodes take weight from, each given once, split over the
  // ranks by HOT's 4^3 blocks (DistributeGridNodes) so that the colored smoother of this
  // level does not depend on the rank count.
  std::vector<Embedded> embedded(n_fine);
  std::vector<GridCoord> referenced;
  for (PetscInt k = 0; k < n_fine; ++k) {
    if (nodes.held[k]) continue;
    embedded[k] = embed(k);
    for (int j = 0; j < embedded[k].n; ++j) referenced.push_back(embedded[k].corner[j]);
  }
  std::sort(referenced.begin(), referenced.end(),
            [](const GridCoord& a, const GridCoord& b) { return NodeIndex::Key(a) < NodeIndex::Key(b); });
  referenced.erase(std::unique(referenced.begin(), referenced.end()), referenced.end());
  *grid = DistributeGridNodes(comm, referenced, h);
  std::vector<PetscInt> global_id;
  std::vector<int> owner;
  GridDirectory(comm, *grid).LookUp(referenced, &global_id, &owner);
  const NodeIndex where(referenced);
  const PetscInt n_grid = static_cast<PetscInt>(grid->owned_nodes.size());

  // P: per free node, its weights on the diagonal of the 3x3 blocks, one scalar row per
  // component; held nodes' rows are empty.
  std::vector<PetscInt> d_nnz(3 * n_fine, 0), o_nnz(3 * n_fine, 0);
  std::vector<std::vector<std::pair<PetscInt, double>>> rows(n_fine);
  for (PetscInt k = 0; k < n_fine; ++k) {
    for (int j = 0; j < embedded[k].n; ++j) {
      const PetscInt n = where.Find(embedded[k].corner[j]);
      rows[k].emplace_back(global_id[n], embedded[k].weight[j]);
      for (int d = 0; d < 3; ++d) (owner[n] == rank ? d_nnz : o_nnz)[3 * k + d]++;
    }
    std::sort(rows[k].begin(), rows[k].end());
  }
  Mat P = nullptr;
  OPTISTEP_PETSC(MatCreate(comm, &P));
  OPTISTEP_PETSC(MatSetSizes(P, 3 * n_fine, 3 * n_grid, 3 * nodes.n_global, 3 * grid->n_global));
  OPTISTEP_PETSC(MatSetBlockSizes(P, 3, 3));
  OPTISTEP_PETSC(MatSetType(P, MATAIJ));
  OPTISTEP_PETSC(MatSeqAIJSetPreallocation(P, 0, d_nnz.data()));
  OPTISTEP_PETSC(MatMPIAIJSetPreallocation(P, 0, d_nnz.data(), 0, o_nnz.data()));
  OPTISTEP_PETSC(MatSetOption(P, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  std::vector<PetscInt> cols;
  std::vector<double> weights;
  for (PetscInt k = 0; k < n_fine; ++k) {
    weights.clear();
    for (const auto& [column, w] : rows[k]) weights.push_back(w);
    for (int d = 0; d < 3; ++d) {
      cols.clear();
      for (const auto& entry : rows[k]) cols.push_back(3 * entry.first + d);
      const PetscInt row = 3 * (nodes.first_global + k) + d;
      OPTISTEP_PETSC(MatSetValues(P, 1, &row, static_cast<PetscInt>(cols.size()), cols.data(), weights.data(),
                                  INSERT_VALUES));
    }
  }
  OPTISTEP_PETSC(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  return P;
}

}  // namespace optistep
