#pragma once
// The finiteness check the integrators make on a step's result before accepting it.
#include <petscvec.h>

#include <cmath>

#include "core/Error.hpp"

namespace optistep {

/// Collective on v's communicator: whether every entry of v is finite. A NaN or an
/// infinity in any entry makes the 2-norm NaN or infinite (PETSc's norm scales its sum, so
/// finite entries do not overflow it).
inline bool AllFinite(Vec v) {
  PetscReal norm = 0.0;
  OPTISTEP_PETSC(VecNorm(v, NORM_2, &norm));
  return std::isfinite(norm);
}

}  // namespace optistep
