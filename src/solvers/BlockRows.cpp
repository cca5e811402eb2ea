#include "solvers/BlockRows.hpp"

#include "core/Error.hpp"
#include "core/PetscHandles.hpp"
#include "core/Phases.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {

void BlockRows::Reset(PetscInt first_row) {
  first_row_ = first_row;
  start_.assign(1, 0);
  columns_.clear();
  values_.clear();
}

void BlockRows::Preallocate(Mat H) const {
  const PetscInt n = rows(), first = first_row_, end = first_row_ + n;
  std::vector<PetscInt> d_nnz(n, 0), o_nnz(n, 0), d_upper(n, 0), o_upper(n, 0);
  for (PetscInt k = 0; k < n; ++k)
    for (PetscInt s = start_[k]; s < start_[k + 1]; ++s) {
      const PetscInt c = columns_[s];
      const bool inside = c >= first && c < end;
      ++(inside ? d_nnz : o_nnz)[k];
      if (c >= first + k) ++(inside ? d_upper : o_upper)[k];
    }
  OPTISTEP_PETSC(MatXAIJSetPreallocation(H, 3, d_nnz.data(), o_nnz.data(), d_upper.data(), o_upper.data()));
}

Mat BlockRows::NewMatrix(MPI_Comm comm, MatType type) const {
  OwnedMat H;
  const PetscInt n = 3 * rows();
  OPTISTEP_PETSC(MatCreate(comm, H.out()));
  OPTISTEP_PETSC(MatSetSizes(H, n, n, PETSC_DETERMINE, PETSC_DETERMINE));
  OPTISTEP_PETSC(MatSetBlockSize(H, 3));
  OPTISTEP_PETSC(MatSetType(H, type));
  OPTISTEP_PETSC(MatSetOptionsPrefix(H, "hessian_"));
  CallReadingOptions("hessian_", [&] { return MatSetFromOptions(H); });
  Preallocate(H);
  PetscBool symmetric_storage = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(H.get()), &symmetric_storage, MATSBAIJ,
                                           MATSEQSBAIJ, MATMPISBAIJ, ""));
  if (symmetric_storage) OPTISTEP_PETSC(MatSetOption(H, MAT_IGNORE_LOWER_TRIANGULAR, PETSC_TRUE));
  OPTISTEP_PETSC(MatSetOption(H, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  // The blocks are column-major 3x3 (Eigen's layout): a row of them is the column-oriented
  // 3 x 3n array PETSc reads with MAT_ROW_ORIENTED off.
  OPTISTEP_PETSC(MatSetOption(H, MAT_ROW_ORIENTED, PETSC_FALSE));
  OPTISTEP_PETSC(MatSetOption(H, MAT_SYMMETRIC, PETSC_TRUE));
  OPTISTEP_PETSC(MatSetOption(H, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
  return H.release();
}

void BlockRows::Insert(Mat H) const {
  for (PetscInt k = 0; k < rows(); ++k) {
    const PetscInt row = first_row_ + k;
    OPTISTEP_PETSC(MatSetValuesBlocked(H, 1, &row, start_[k + 1] - start_[k], &columns_[start_[k]],
                                       &values_[9 * static_cast<std::size_t>(start_[k])], INSERT_VALUES));
  }
  ScopedPhase phase(kAssemblyPhase);
  OPTISTEP_PETSC(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
}

bool BlockRows::SamePattern(Mat H) const {
  PetscInt bs = 0, first = 0, last = 0;
  OPTISTEP_PETSC(MatGetBlockSize(H, &bs));
  OPTISTEP_PETSC(MatGetOwnershipRange(H, &first, &last));
  if (bs != 3 || first != 3 * first_row_ || last - first != 3 * rows()) return false;
  // Scalar row 3 k + d holds the columns 3 c + e of the layout's block columns c of row k.
  bool same = true;
  for (PetscInt k = 0; k < rows() && same; ++k)
    for (PetscInt d = 0; d < 3 && same; ++d) {
      const PetscInt row = first + 3 * k + d;
      PetscInt n = 0;
      const PetscInt* cols = nullptr;
      OPTISTEP_PETSC(MatGetRow(H, row, &n, &cols, nullptr));
      same = n == 3 * (start_[k + 1] - start_[k]);
      for (PetscInt s = start_[k], j = 0; same && s < start_[k + 1]; ++s, j += 3)
        same = cols[j] == 3 * columns_[s] && cols[j + 1] == 3 * columns_[s] + 1 && cols[j + 2] == 3 * columns_[s] + 2;
      OPTISTEP_PETSC(MatRestoreRow(H, row, &n, &cols, nullptr));
    }
  return same;
}

}  // namespace optistep
