#pragma once
// LBFGS-H (the baseline of the HOT and DOT papers): H0^-1 is the SPD-projected Hessian at
// the step's start, solved by a KSP under the options prefix "lbfgsh_" (types lagged_hessian
// and jacobi: solvers/Initializer.hpp).
#include <petscksp.h>

#include "core/PetscHandles.hpp"
#include "solvers/Initializer.hpp"

namespace optistep {

class LaggedHessianInitializer : public InverseHessianInitializer {
 public:
  /// diagonal_only: the "jacobi" type, one application of the default PC.
  LaggedHessianInitializer(MPI_Comm comm, const MinimizerDefaults& defaults, bool diagonal_only)
      : comm_(comm), defaults_(defaults), diagonal_only_(diagonal_only) {}
  ~LaggedHessianInitializer() override;
  const char* Type() const override { return diagonal_only_ ? "jacobi" : "lagged_hessian"; }
  void SetFromOptions() override;
  void SetUp(IncrementalPotential& potential, Vec u0) override;
  int Apply(Vec q, Vec r) override;
  void View(PetscViewer viewer) const override;
  Mat LaggedHessian() const override { return H_; }

 private:
  MPI_Comm comm_;
  MinimizerDefaults defaults_;
  bool diagonal_only_;
  OwnedKsp ksp_;
  OwnedMat H_;
};

}  // namespace optistep
