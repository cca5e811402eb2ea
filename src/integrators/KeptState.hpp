#pragma once
// What an FEM integrator without a step limit keeps at the start of a step the controller
// halves (Integrator::KeepState / RestoreKeptState): node positions and velocities (owned
// values; ghosts are refreshed where they are read) and the clock.
#include <petscvec.h>

#include "core/Error.hpp"

namespace optistep {

class KeptNodeState {
 public:
  KeptNodeState() = default;
  KeptNodeState(const KeptNodeState&) = delete;
  KeptNodeState& operator=(const KeptNodeState&) = delete;
  ~KeptNodeState() {
    VecDestroy(&x_);
    VecDestroy(&v_);
  }

  /// Not collective. Copies x (m), v (m/s), t (s) and steps.
  void Keep(Vec x, Vec v, double t, long steps) {
    if (!x_) {
      OPTISTEP_PETSC(VecDuplicate(x, &x_));
      OPTISTEP_PETSC(VecDuplicate(v, &v_));
    }
    OPTISTEP_PETSC(VecCopy(x, x_));
    OPTISTEP_PETSC(VecCopy(v, v_));
    t_ = t;
    steps_ = steps;
  }
  /// Not collective. Puts the kept copies back (after a Keep).
  void Restore(Vec x, Vec v, double* t, long* steps) const {
    OPTISTEP_PETSC(VecCopy(x_, x));
    OPTISTEP_PETSC(VecCopy(v_, v));
    *t = t_;
    *steps = steps_;
  }

 private:
  Vec x_ = nullptr;
  Vec v_ = nullptr;
  double t_ = 0.0;
  long steps_ = 0;
};

}  // namespace optistep
