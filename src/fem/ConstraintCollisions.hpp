#pragma once
// Constraint collisions with analytic objects by gradient projection (Gast, Schroeder,
// Stomakhin, Jiang, Teran 2015, "Optimization Integrator for Large Time Steps", Sec. 3.2),
// for the collision objects of a FEM scene with `method: constraint`: every node must keep
// phi(x_i) >= 0. The incremental potential becomes E(x) = E'(P(x)) with E' the
// unconstrained one and P the projection of every node that is active or violated onto the
// object's surface, x_i <- x_i - phi(x_i) grad phi(x_i); a line search along x + alpha d
// then runs along a curved path on the surface. At the start of each outer iteration the
// iterate is projected and the active set registered: the nodes touching an object
// (projected, or phi <= 0) whose unconstrained gradient q_i = dE'/dx_i pushes them in
// (q_i . n_i >= 0, n = grad phi). The gradient and the directions of active nodes are
// projected onto the tangent plane (T = I - n n^T); their Hessian rows and columns are
// T H' T, plus -lambda_i Hess phi on the diagonal (the only second-derivative term of P that
// survives on the surface: the third derivatives of phi multiply phi = 0), plus m_i / dt^2
// n n^T, so that the normal direction is decoupled as for a Dirichlet row. lambda_i = q_i .
// n_i (N) is the constraint's normal force, from which Coulomb friction acts after the solve
// (Sec. 5.1).
//
// Limits: one constraint object per node at a time (the active one, else the one it
// penetrates most); static objects; backward Euler without self-contact (SceneConfig checks).
// Nothing crosses steps: BeginStep empties the active set, each iteration registers it anew.
#include <petscvec.h>

#include <vector>

#include "core/Types.hpp"
#include "fem/FemModel.hpp"

namespace optistep {

class ConstraintCollisions {
 public:
  /// Collective. The model's collision objects with method: constraint (there must be one).
  explicit ConstraintCollisions(const FemModel& model);
  ~ConstraintCollisions();
  ConstraintCollisions(const ConstraintCollisions&) = delete;
  ConstraintCollisions& operator=(const ConstraintCollisions&) = delete;

  /// Whether the model has any collision object with method: constraint.
  static bool Any(const FemModel& model);

  /// Rank-local: empties the active set (the start of a step).
  void Clear();
  /// Rank-local: xp = P(x) over the owned free nodes (m; xp may be x). A node is projected
  /// onto its active object, else onto the constraint object it penetrates most (phi < 0);
  /// dP/dx = I - n n^T - phi Hess phi of each projected node is kept for ChainRule.
  void Project(Vec x, Vec xp);
  /// Rank-local: g <- (dP/dx)^T g at the nodes the last Project moved (the chain rule of
  /// E = E'(P(x)); N).
  void ChainRule(Vec g) const;
  /// Collective: registers the active set at x = P(x) (m), g holding the unconstrained
  /// gradient q = grad E'(x) (N) on entry and the projected gradient on return (T q at
  /// active nodes). Touching: projected by the last Project, or phi <= 0.
  void Register(Vec x, Vec g);
  /// Rank-local: d_i <- T_i d_i at active nodes.
  void ProjectDirection(Vec d) const;
  /// Rank-local: the Hessian's row buffers of FemIncrementalPotential (per owned node l,
  /// slots row_start[l] .. row_start[l+1] - 1, local column node local_cols[slot], 9
  /// column-major values per slot) projected: block <- T_l block T_c, and at active nodes
  /// the diagonal block adds m_l / dt^2 n n^T and -lambda Hess phi (its positive
  /// semi-definite part when project_spd). dt in s.
  void ProjectHessian(const std::vector<PetscInt>& row_start, const std::vector<PetscInt>& local_cols,
                      const std::vector<int>& diagonal_slot, double dt, bool project_spd,
                      std::vector<double>* values) const;
  /// Owned node l: the normal force lambda (N, >= 0) of the constraint holding it, its
  /// normal in *normal and its object (index into FemModel::collision_objects()) in
  /// *object; 0 and -1 when it is not active.
  double NormalForce(int l, Vec3* normal, int* object) const;
  /// Collective: the number of active nodes on all ranks.
  PetscInt ActiveCount() const;

 private:
  const FemModel& model_;
  std::vector<int> objects_;      ///< indices of the constraint objects
  std::vector<int> active_;       ///< per owned node: active object, -1 if none
  std::vector<int> projected_;    ///< per owned node: object of the last Project, -1 if none
  std::vector<Mat3> jacobian_;    ///< per owned node: dP/dx of the last Project
  std::vector<double> lambda_;    ///< per owned node: normal force (N) when active
  std::vector<Vec3> normal_;      ///< per local node (owned, then ghosts): n when active, else 0
  std::vector<Mat3> curvature_;   ///< per owned node: Hess phi (1/m) when active
  Vec normals_ = nullptr;         ///< ghosted: n of active nodes, for the Hessian's columns
};

}  // namespace optistep
