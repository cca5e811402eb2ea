#pragma once
// The state a FEM integrator keeps for Integrator::KeepState / RestoreKeptState: copies of
// the ghosted node vectors x (m) and v (m/s) and the clock.
#include <petscvec.h>

#include "core/Error.hpp"
#include "core/PetscHandles.hpp"

namespace optistep {

class KeptFemState {
 public:
  KeptFemState() = default;

  /// Collective (the first call duplicates x and v).
  void Keep(Vec x, Vec v, double t, long steps) {
    if (!x_) {
      OPTISTEP_PETSC(VecDuplicate(x, x_.out()));
      OPTISTEP_PETSC(VecDuplicate(v, v_.out()));
    }
    OPTISTEP_PETSC(VecCopy(x, x_));
    OPTISTEP_PETSC(VecCopy(v, v_));
    t_ = t;
    steps_ = steps;
  }

  /// Owned entries only, as the integrators write them; ghosts are refreshed where read.
  void Restore(Vec x, Vec v, double* t, long* steps) const {
    OPTISTEP_PETSC(VecCopy(x_, x));
    OPTISTEP_PETSC(VecCopy(v_, v));
    *t = t_;
    *steps = steps_;
  }

 private:
  OwnedVec x_;
  OwnedVec v_;
  double t_ = 0.0;
  long steps_ = 0;
};

}  // namespace optistep
