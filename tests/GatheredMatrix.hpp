#pragma once
// A distributed PETSc matrix, or a grid level's nodes, gathered whole onto every rank, for
// suites that form the multigrid's products independently (test_hot_multigrid,
// test_fem_multigrid).
#include <petscmat.h>

#include <Eigen/Sparse>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/Error.hpp"
#include "core/Exchange.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep::test {

using Sparse = Eigen::SparseMatrix<double>;

/// Collective: the whole matrix A on every rank, as an Eigen sparse matrix (a MAIJ matrix,
/// which has no MatGetRow, through its AIJ form).
inline Sparse Gather(Mat A) {
  PetscBool maij = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(A), &maij, MATSEQMAIJ, MATMPIMAIJ, ""));
  if (maij) {
    Mat aij = nullptr;
    OPTISTEP_PETSC(MatConvert(A, MATAIJ, MAT_INITIAL_MATRIX, &aij));
    const Sparse S = Gather(aij);
    MatDestroy(&aij);
    return S;
  }
  const MPI_Comm comm = PetscObjectComm(reinterpret_cast<PetscObject>(A));
  PetscInt begin = 0, end = 0, rows = 0, cols = 0;
  OPTISTEP_PETSC(MatGetOwnershipRange(A, &begin, &end));
  OPTISTEP_PETSC(MatGetSize(A, &rows, &cols));
  std::vector<std::int64_t> index;
  std::vector<double> value;
  for (PetscInt r = begin; r < end; ++r) {
    PetscInt n = 0;
    const PetscInt* c = nullptr;
    const PetscScalar* v = nullptr;
    OPTISTEP_PETSC(MatGetRow(A, r, &n, &c, &v));
    for (PetscInt k = 0; k < n; ++k) {
      index.insert(index.end(), {r, c[k]});
      value.push_back(v[k]);
    }
    OPTISTEP_PETSC(MatRestoreRow(A, r, &n, &c, &v));
  }
  const auto all_index = AllGatherLists(comm, index);
  const auto all_value = AllGatherLists(comm, value);
  std::vector<Eigen::Triplet<double>> triplets;
  for (std::size_t k = 0; k < all_value.size(); ++k)
    triplets.emplace_back(static_cast<int>(all_index[2 * k]), static_cast<int>(all_index[2 * k + 1]), all_value[k]);
  Sparse S(rows, cols);
  S.setFromTriplets(triplets.begin(), triplets.end());
  return S;
}

/// Largest |entry| of A.
inline double MaxAbs(const Sparse& A) {
  double m = 0.0;
  for (int k = 0; k < A.outerSize(); ++k)
    for (Sparse::InnerIterator it(A, k); it; ++it) m = std::max(m, std::abs(it.value()));
  return m;
}

/// Collective: every node of a grid level, in global (PETSc) order, on every rank.
inline std::vector<std::array<int, 3>> GatherGridNodes(const GridInfo& level, MPI_Comm comm = MPI_COMM_WORLD) {
  std::vector<int> mine;
  for (const auto& c : level.owned_nodes) mine.insert(mine.end(), c.begin(), c.end());
  const std::vector<int> all = AllGatherLists(comm, mine);
  std::vector<std::array<int, 3>> nodes(all.size() / 3);
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n] = {all[3 * n], all[3 * n + 1], all[3 * n + 2]};
  return nodes;
}

}  // namespace optistep::test
