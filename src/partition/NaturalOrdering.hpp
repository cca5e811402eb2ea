#pragma once
// Maps distributed items (nodes, tets) from their PETSc ownership order to the natural
// order of their original, rank-count-independent ids, so that frames and checkpoints
// are laid out the same whatever the number of ranks. A PETSc VecScatter does the move.
#include <petscvec.h>

#include <vector>

#include "core/DistributedArray.hpp"
#include "core/PetscHandles.hpp"

namespace optistep {

class NaturalOrdering {
 public:
  /// Collective. original_ids: the original ids (0 <= id < n_global) of this rank's items,
  /// in the order in which this rank stores them; every id appears on exactly one rank.
  /// bs: values per item (3 for a vector per node, 1 for a scalar, 4 for a tet's nodes).
  NaturalOrdering(MPI_Comm comm, const std::vector<PetscInt>& original_ids, PetscInt n_global,
                  int bs);
  ~NaturalOrdering();
  NaturalOrdering(const NaturalOrdering&) = delete;
  NaturalOrdering& operator=(const NaturalOrdering&) = delete;

  /// Collective. values: this rank's items' values (items x bs, in storage order).
  /// Returns this rank's contiguous slice of the natural-order array, valid until the
  /// next call.
  DistributedArray<double> ToNatural(const double* values);

  /// Collective, the inverse of ToNatural: natural holds this rank's rows NaturalRows() of
  /// the natural-order array (rows x bs); writes this rank's items' values, in storage
  /// order, to values (items x bs).
  void FromNatural(const double* natural, double* values);

  /// This rank's rows of the natural-order array: EvenRows(comm, n_global).
  RowRange NaturalRows() const { return rows_; }

  PetscInt n_global() const { return n_global_; }

 private:
  PetscInt n_global_;
  int bs_;
  RowRange rows_;
  OwnedVec source_;
  OwnedVec natural_;
  OwnedVecScatter scatter_;
  std::vector<double> slice_;
};

}  // namespace optistep
