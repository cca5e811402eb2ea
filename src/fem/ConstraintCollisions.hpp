#pragma once
// Constraint collisions with analytic objects by gradient projection (Gast, Schroeder,
// Stomakhin, Jiang, Teran 2015, "Optimization Integrator for Large Time Steps", Sec. 3.2),
// for the collision objects of a FEM scene with `method: constraint`: every node keeps
// phi(x_i) >= 0. The incremental potential becomes E(x) = E'(P(x)), P projecting every
// active or violated node onto the object's surface, x_i - phi(x_i) grad phi(x_i). Each outer
// iteration projects the iterate and registers the active set (nodes touching an object
// whose unconstrained gradient q_i pushes them in); their rows are projected onto the tangent
// plane, plus -lambda_i Hess phi, lambda_i = q_i . n_i (N) the normal force that friction
// uses (Sec. 5.1, or IPC's lagged potential with friction.model: potential).
// Up to 3 objects per node (sequential projection, least-squares normal forces: ours).
// Contract: scripted objects are posed at t_{n+1}; backward Euler without self-contact only
// (SceneConfig checks); nothing crosses steps (the active set starts empty every step).
// The method, the multi-object extension, friction and the limits:
// docs/methods/constraint-collisions.md.
#include <petscvec.h>

#include <algorithm>
#include <array>
#include <vector>

#include "core/PetscHandles.hpp"
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
  OwnedVec columns_[3];              ///< ghosted: Q's columns, for the Hessian
};

}  // namespace optistep
