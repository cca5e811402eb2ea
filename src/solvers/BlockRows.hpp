#pragma once
// The rows of a symmetric matrix of 3x3 blocks (a Hessian over nodes with three unknowns
// each) that one rank assembles, laid out as PETSc stores them: the rank's owned block rows,
// global ids first_row, first_row + 1, ..., each with its block columns sorted by global id,
// and one column-major 3x3 block per (row, column) slot. A discretization sums its element
// or particle blocks straight into the slots and hands PETSc one whole row per
// MatSetValuesBlocked call (Insert): per-element insertion would search each row once per
// block. The layout also gives the matrix its exact preallocation, so that the first
// assembly has no unused room to squeeze out. FEM (fem/FemIncrementalPotential) and MPM
// (mpm/MpmIncrementalPotential) share it; each keeps its own map from its elements or
// particles to slots.
#include <mpi.h>
#include <petscmat.h>

#include <vector>

namespace optistep {

class BlockRows {
 public:
  /// Starts an empty layout whose rows are the global block rows first_row, first_row + 1,
  /// ... (the rank's contiguous ownership range, in nodes); the diagonal part of an MPI
  /// matrix is the columns in that same range. Rank-local.
  void Reset(PetscInt first_row);
  /// Appends block column `column` (global node id) to the row under way and returns its
  /// slot. A row's columns come in increasing order; nothing checks it (PETSc's sorted
  /// insertion relies on it).
  PetscInt AddColumn(PetscInt column) {
    columns_.push_back(column);
    return static_cast<PetscInt>(columns_.size()) - 1;
  }
  /// Ends the row under way (which may be empty).
  void EndRow() { start_.push_back(static_cast<PetscInt>(columns_.size())); }

  /// Whether Reset has been called: a layout (perhaps of no rows) exists.
  bool laid_out() const { return !start_.empty(); }
  /// Rows ended since Reset.
  PetscInt rows() const { return start_.empty() ? 0 : static_cast<PetscInt>(start_.size()) - 1; }
  PetscInt first_row() const { return first_row_; }
  /// Row k's slots are [row_start()[k], row_start()[k + 1]) (size rows() + 1).
  const std::vector<PetscInt>& row_start() const { return start_; }
  /// The global block column of a slot.
  PetscInt column(PetscInt slot) const { return columns_[static_cast<std::size_t>(slot)]; }

  /// Sets every block to zero (and sizes the buffer to the layout: 9 doubles per slot).
  void Zero() { values_.assign(9 * columns_.size(), 0.0); }
  /// The column-major 3x3 block of a slot; valid after Zero().
  double* block(PetscInt slot) { return &values_[9 * static_cast<std::size_t>(slot)]; }
  /// All blocks, 9 doubles per slot in slot order.
  std::vector<double>& values() { return values_; }
  const std::vector<double>& values() const { return values_; }

  /// Collective on H (MatXAIJSetPreallocation). Sets H's preallocation (block size 3) to
  /// exactly this layout: per row, the columns inside and outside the rank's range for AIJ
  /// and BAIJ, and those on and above the diagonal for SBAIJ. Any nonzero H held is dropped.
  void Preallocate(Mat H) const;
  /// Collective on comm. A new matrix for this layout: square, block size 3, `type` unless
  /// -hessian_mat_type says otherwise (options prefix "hessian_"), exactly preallocated
  /// (Preallocate), flagged symmetric for good and reading the blocks column-major
  /// (MAT_ROW_ORIENTED off), with no off-rank entries; SBAIJ ignores the lower triangle.
  /// The caller owns the result.
  Mat NewMatrix(MPI_Comm comm, MatType type) const;
  /// Collective on H. Writes every row's blocks into H (INSERT_VALUES, one
  /// MatSetValuesBlocked call per row) and assembles H (timed as kAssemblyPhase). H must
  /// have this layout's rows, read blocks column-major and hold room for the columns (a
  /// matrix from NewMatrix, or one Preallocate reset).
  void Insert(Mat H) const;
  /// Rank-local: whether H's scalar rows on this rank are this layout's, column for column
  /// (MatGetRow), with block size 3 and the same ownership range.
  bool SamePattern(Mat H) const;

 private:
  PetscInt first_row_ = 0;
  std::vector<PetscInt> start_;  // empty until Reset
  std::vector<PetscInt> columns_;
  std::vector<double> values_;
};

}  // namespace optistep
