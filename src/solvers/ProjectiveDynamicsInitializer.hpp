#pragma once
// LBFGS-PD (Liu, Bouaziz, Kavan 2017, Sec. 4; the DOT paper's baseline): H0^-1 is the
// rest-shape matrix M / dt^2 + L (IncrementalPotential::RestShapeMatrix), factored by a KSP
// under the options prefix "lbfgspd_" when dt first takes a value and again whenever it
// changes (type projective_dynamics: solvers/Initializer.hpp). FEM only.
#include <petscksp.h>

#include "core/PetscHandles.hpp"
#include "solvers/Initializer.hpp"

namespace optistep {

class ProjectiveDynamicsInitializer : public InverseHessianInitializer {
 public:
  explicit ProjectiveDynamicsInitializer(MPI_Comm comm) : comm_(comm) {}
  ~ProjectiveDynamicsInitializer() override;
  const char* Type() const override { return "projective_dynamics"; }
  void SetFromOptions() override;
  void SetUp(IncrementalPotential& potential, Vec u0) override;
  int Apply(Vec q, Vec r) override;
  void View(PetscViewer viewer) const override;

 private:
  MPI_Comm comm_;
  OwnedKsp ksp_;
  OwnedMat A_;
  double factored_dt_ = 0.0;
};

}  // namespace optistep
