#pragma once
// Read access to the local form (owned entries, then ghosts) of a ghosted PETSc Vec.
#include <petscvec.h>

#include "core/Error.hpp"

namespace optistep {

/// RAII: refreshes the ghost entries of v from their owners (collective: every rank must
/// construct it), then exposes the local form's array until destruction.
class GhostedLocalView {
 public:
  explicit GhostedLocalView(Vec v) : v_(v) {
    OPTISTEP_PETSC(VecGhostUpdateBegin(v_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecGhostUpdateEnd(v_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecGhostGetLocalForm(v_, &local_));
    OPTISTEP_PETSC(VecGetArrayRead(local_, &array_));
  }
  ~GhostedLocalView() {
    VecRestoreArrayRead(local_, &array_);
    VecGhostRestoreLocalForm(v_, &local_);
  }
  GhostedLocalView(const GhostedLocalView&) = delete;
  GhostedLocalView& operator=(const GhostedLocalView&) = delete;
  /// 3 values per local node for block size 3: owned nodes first, then ghosts.
  const PetscScalar* data() const { return array_; }

 private:
  Vec v_;
  Vec local_ = nullptr;
  const PetscScalar* array_ = nullptr;
};

}  // namespace optistep
