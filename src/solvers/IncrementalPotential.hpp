#pragma once
// One time step's problem: minimize E(u) over the distributed unknown u (the seam every
// minimizer meets; ../shared/DESIGN.md). u is a PETSc Vec of block size 3: node positions
// (m) for FEM, grid velocity increments (m/s) for MPM.
#include <petscmat.h>
#include <petscvec.h>

namespace optistep {

class IncrementalPotential {
 public:
  virtual ~IncrementalPotential() = default;
  /// E(u). Collective. Units: J for FEM (positions), kg m^2/s^2 for MPM.
  virtual PetscReal Energy(Vec u) = 0;
  /// g = dE/du, same layout as u. Collective. Rows of constrained (Dirichlet) dofs are 0.
  virtual void Gradient(Vec u, Vec g) = 0;
  /// E(u) and dE/du in one pass (the line search asks for both). Collective.
  virtual PetscReal EnergyAndGradient(Vec u, Vec g) {
    Gradient(u, g);
    return Energy(u);
  }
  /// Projected (SPD) Hessian into H, which comes from CreateHessian. Constrained rows and
  /// columns are identity-scaled. Collective.
  virtual void Hessian(Vec u, Mat H) = 0;
  /// A new Hessian matrix with the potential's layout and preallocation. Collective.
  virtual Mat CreateHessian() = 0;
  /// Node-wise characteristic-norm tolerances tol_i (units of the gradient), repeated for
  /// the 3 components of each node; constrained nodes get +inf. Collective.
  virtual void CharacteristicNormWeights(Vec w) = 0;
  /// Number of global nodes (for the CN test sum_i |g_i|^2 / tol_i^2 < n_nodes).
  virtual PetscInt GlobalNodeCount() const = 0;
};

}  // namespace optistep
