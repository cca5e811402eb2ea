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
// (Sec. 5.1; integrators/FemBackwardEuler) or, with friction.model: potential, inside the
// minimization as IPC's lagged potential (fem/FrictionPotential.hpp, lambda lagged at a
// frictionless solve of the step).
//
// A node touching several objects (up to 3: a box's corner in the corner of a floor and a
// wall) is projected onto each in turn, sweeping again while one is left off its surface by
// more than 1e-15 (1 m + |x|) (exact after one sweep for orthogonal planes), dP/dx the product of the
// projections' Jacobians. Its normal forces solve q = sum_k lambda_k n_k in the least-squares
// sense, an object with lambda_k < 0 leaving the set (the most negative first); T = I - Q
// with Q = N (N^T N)^-1 N^T the projection onto the normals' span, and the curvature term is
// -T (sum_k lambda_k Hess phi_k) T (our extension of Sec. 3.2's single-constraint case: the
// reduced Hessian of the Lagrangian on the intersection).
//
// Scripted objects are posed at t_{n+1} (CollisionObject::SetTime, in BeginStep): P, phi,
// n and Hess phi are those of the posed object, friction acts on the velocity relative to
// its material points. Limits: backward Euler without self-contact (SceneConfig checks). Nothing
// crosses steps: BeginStep empties the active set, each iteration registers it anew.
#include <petscvec.h>

#include <algorithm>
#include <array>
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
  /// onto its active objects and every constraint object it penetrates (phi < 0), in the
  /// objects' order; dP/dx (the product of I - n n^T - phi Hess phi over the projections)
  /// is kept for ChainRule.
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
  /// the diagonal block adds m_l / dt^2 Q and -T (sum_k lambda_k Hess phi_k) T (its
  /// positive semi-definite part when project_spd). dt in s.
  void ProjectHessian(const std::vector<PetscInt>& row_start, const std::vector<PetscInt>& local_cols,
                      const std::vector<int>& diagonal_slot, double dt, bool project_spd,
                      std::vector<double>* values) const;
  /// Owned node l, its which-th active constraint (0, 1, 2): the normal force lambda (N,
  /// >= 0), its normal in *normal and its object (index into
  /// FemModel::collision_objects()) in *object; 0 and -1 beyond the node's active ones.
  double NormalForce(int l, int which, Vec3* normal, int* object) const;
  /// Owned node l: Q = N (N^T N)^-1 N^T, the projection onto its active normals' span (0
  /// when it is not active); the tangent space is that of I - Q.
  const Mat3& NormalProjection(int l) const { return normal_projection_[l]; }
  /// Collective: the number of active nodes on all ranks.
  PetscInt ActiveCount() const;

 private:
  /// Up to 3 objects holding one node.
  struct Set {
    int count = 0;
    int object[3] = {-1, -1, -1};
    bool Has(int k) const { return std::find(object, object + count, k) != object + count; }
    void Add(int k) {
      if (count < 3 && !Has(k)) object[count++] = k;
    }
  };

  const FemModel& model_;
  std::vector<int> objects_;         ///< indices of the constraint objects
  std::vector<Set> active_;          ///< per owned node: its active objects
  std::vector<Set> projected_;       ///< per owned node: the objects of the last Project
  std::vector<Mat3> jacobian_;       ///< per owned node: dP/dx of the last Project
  std::vector<std::array<double, 3>> lambda_;  ///< per owned node and active object: N
  std::vector<std::array<Vec3, 3>> normal_;    ///< per owned node and active object: n
  std::vector<Mat3> normal_projection_;  ///< per local node (owned, then ghosts): Q
  std::vector<Mat3> curvature_;      ///< per owned node: -sum_k lambda_k Hess phi_k (N/m)
  Vec columns_[3] = {nullptr, nullptr, nullptr};  ///< ghosted: Q's columns, for the Hessian
};

}  // namespace optistep
