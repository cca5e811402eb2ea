#pragma once
// Backward-Euler incremental potential of a tetrahedral FEM model (Gast et al. 2015,
// Sec. 2.2-2.3, eq. 5), over node positions x (m):
//   E(x) = w sum_i m_i |x_i - x_hat_i|^2 / (2 dt^2) + sum_e V_e Psi(F_e(x)) - s sum_i m_i g . x_i
//        + sum_i sum_c k_c m_i max(-phi_c(x_i), 0)^3                     (Sec. 5.2)
//        + sum_i sum_c c_ic / (2 dt) (n_ic . (x_i - x_n,i))^2   (contact damping, lagged at x_n;
//                                  fem/ContactDamping.hpp; collision objects' damping > 0)
//        + beta / (2 dt) (x - x_n)^T K(x_n) (x - x_n)     (lagged Rayleigh damping, Sec. 4.2)
//        + E_loads(x, t_next)             (the scene's loads, fem/FemLoads.hpp; g = g(t_next))
//        + sum_p k d_p sqrt(d_p + 1e-15)   (self-contact, Sec. 5.3, when the scene enables it;
//                                           left out above the line search's guard, Sec. 3.3)
//        + sum_i D_i(x_i)        (IPC's lagged friction, Li et al. 2020 Sec. 5; friction.model
//                                  potential)
// with x_hat = x_n + dt v_n and lumped masses m_i; w = s = 1 (backward Euler), w = 0 and s the
// load ramp for quasi-static steps (SetInertiaAndLoadScale); Restrict keeps only some tets'
// elastic terms and the inertia (async's coupled step). Units: J. Dirichlet nodes are held at
// their scripted targets: their gradient rows are zero and their Hessian rows and
// columns are m_i/dt^2 I (projected out). With collision objects of method: constraint the
// above is E' and the potential is E'(P(x)), P projecting nodes onto those objects (Sec.
// 3.2; fem/ConstraintCollisions.hpp); their penalty terms are then 0.
#include <petscmat.h>

#include <memory>
#include <vector>

#include "core/GhostedVector.hpp"
#include "core/PetscHandles.hpp"
#include "fem/ConstraintCollisions.hpp"
#include "fem/ContactDamping.hpp"
#include "fem/FemLoads.hpp"
#include "fem/FemModel.hpp"
#include "fem/FrictionPotential.hpp"
#include "fem/SelfContact.hpp"
#include "solvers/BlockRows.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {

class FemIncrementalPotential : public IncrementalPotential {
 public:
  /// Collective. damping_beta: Rayleigh stiffness coefficient (s), 0 disables it.
  FemIncrementalPotential(FemModel& model, double damping_beta);
  ~FemIncrementalPotential() override;

  /// Collective. Sets up the step from (x_n, v_n) (owned values, m and m/s) of size dt (s)
  /// ending at t_next (s), the time at which Dirichlet targets are taken.
  void BeginStep(Vec x_n, Vec v_n, double dt, double t_next);
  /// Self-contact work since BeginStep (all zero without self-contact): evaluations of E
  /// or grad E that included the contact term, those whose contact term the line search's
  /// guard skipped (Gast et al. 2015, Sec. 3.3), and the pairs of the last detection. The
  /// same on every rank and across a restart (SelfContact's cache of the last positions,
  /// which a restart empties, does not enter).
  struct ContactCounts {
    std::size_t evaluations = 0, skipped = 0, pairs = 0;
  };
  ContactCounts StepContactCounts() const;
  /// The self-contact term, or null when the scene does not enable it.
  SelfContact* self_contact() { return self_contact_.get(); }
  /// Rank-local: overwrites the constrained rows of x with their targets at t_next.
  void ApplyDirichlet(Vec x) const;
  /// With false, Hessian() assembles the true (possibly indefinite) tangent instead of the
  /// per-element SPD projection; for verification and ablation. Default true.
  void SetProjectHessian(bool project) { project_spd_ = project; }
  /// x_hat = x_n + dt v_n of the current step (owned values).
  Vec InertialTarget() const { return x_hat_; }
  /// Friction as a potential (scene friction.model: potential; fem/FrictionPotential.hpp):
  /// whether it is on (friction.model potential and an object with friction > 0), and, collective, lag its normal forces and normals at x (owned
  /// values, m); BeginStep lags them at x_n.
  bool HasFrictionPotential() const { return friction_ != nullptr; }
  void LagFriction(Vec x);
  /// Quasi-static steps (integrators/FemQuasiStatic): inertia_weight 0 drops the inertia
  /// term m |x - x_hat|^2 / (2 dt^2) (Dirichlet rows keep m/dt^2 I in the Hessian);
  /// load_scale (dimensionless) multiplies gravity. Defaults 1 and 1: backward Euler.
  void SetInertiaAndLoadScale(double inertia_weight, double load_scale) {
    cached_ = false;
    inertia_ = inertia_weight;
    load_scale_ = load_scale;
  }
  /// The external load of the free nodes (N), over the free owned nodes of all ranks:
  /// |f_ext|_2 = sqrt(|load_scale m_i g|_2^2 + sum_loads |peak tau f_load|_2^2), the loads'
  /// nodal forces at their time function's peak (FemLoads::PeakForceSquaredNorm), each load
  /// and gravity in quadrature so that opposing loads do not cancel. Collective.
  double ExternalLoadNorm() const;
  /// Restricts the potential to the elastic terms of the local tets with tets[e] != 0 and,
  /// with external = false, drops gravity and the collision penalties (the coupled step of
  /// integrators/FemAsync: the interior region's forces alone). Default: every term.
  void Restrict(std::vector<char> tets, bool external) {
    cached_ = false;
    active_tets_ = std::move(tets);
    external_ = external;
  }

  void Hessian(Vec x, Mat H) override;
  /// Collective. The elastic stiffness K(x) = sum_e V_e B_e^T dP/dF(F_e) B_e alone (N/m,
  /// SPD-projected per tet unless SetProjectHessian(false)), at positions x (m), into K
  /// from CreateHessian(): Dirichlet rows and columns decoupled as in Hessian(). For the
  /// implicit Rayleigh damping of integrators/FemSemiImplicit.
  void Stiffness(Vec x, Mat K);
  Mat CreateHessian() override;
  /// tol_i = epsilon s_i |dP/dF(I)|-weighted, see the .cpp (HOT Sec. 5.2 after DOT).
  void CharacteristicNormWeights(double epsilon, Vec w) override;
  PetscInt GlobalNodeCount() const override { return model_.mesh().n_global_nodes; }
  /// Zeroes the Dirichlet rows of d; with constraint collisions, also the normal part of
  /// active nodes' rows.
  void Project(Vec d) const override;
  /// Constraint collisions (collision objects with method: constraint; Gast et al. 2015
  /// Sec. 3.2, fem/ConstraintCollisions.hpp): u <- P(u), the active set registered at u,
  /// E(u) and the projected gradient into g. Collective. False (nothing done) without them.
  /// E'(u) and its gradient are reused, not evaluated again, when the last gradient
  /// evaluation was at a point that projects to u (the line search's accepted trial).
  bool ProjectIterate(Vec u, Vec g, PetscReal* energy) override;
  /// Rank-local: x <- P(x) (owned values, m), a no-op without constraint collisions (the
  /// initial guesses of a step).
  void ProjectOntoConstraints(Vec x);
  /// The constraint collisions, or null when no object has method: constraint.
  const ConstraintCollisions* constraints() const { return constraints_.get(); }
  const ElementSets* Elements() const override { return &elements_; }
  /// The owned nodes at rest (the mesh's reference positions, m), with their bodies and
  /// Dirichlet flags, for the embedded-grid multigrid.
  const RestNodes* Nodes() const override { return &nodes_; }
  /// M / dt^2 + L (LBFGS-PD, Liu et al. 2017, Sec. 4), L = sum_e V_e w_e (beta_e^T beta_e)
  /// (x) I_3, the Laplacian of the mesh weighted per tet by w_e = 2 mu + lambda (Pa, the
  /// P-wave modulus: the rest-shape stiffness of a uniaxial strain), so that L is the
  /// rest-shape Hessian of linear elasticity exactly for uniaxial strains.
  Mat RestShapeMatrix() override;
  double StepSize() const override { return dt_; }
  /// Per body without Dirichlet nodes (IncrementalPotential::RigidMotionResidual): net
  /// force (N) and torque (N m) of the residual over epsilon M_b a_b and epsilon M_b a_b r_b.
  double RigidMotionResidual(double epsilon, Vec x, Vec g) override;
  /// Collective (self-contact's detection). Keys of the free owned nodes inside a penalty
  /// collision object (global node id x objects + object index) and, with self-contact, of
  /// the penetrating node of every pair this rank owns; none for a restricted potential
  /// without external terms.
  std::vector<std::int64_t> PenaltyContacts(Vec x) override;

 private:
  /// Copies x's owned values into the ghosted work vector and returns a view of its
  /// updated local form (owned then ghost nodes), valid while the view lives.
  std::unique_ptr<GhostedLocalView> LoadLocal(Vec x);
  /// The common pass: energy (always) and the gradient (when g is non-null).
  PetscReal Evaluate(Vec x, Vec g) override;
  /// The Hessian's row layout (owned rows, sorted columns) and each tet's block slots.
  void BuildRowLayout();
  /// Sums the (projected) elastic blocks of all local tets at the local positions xl into
  /// the row buffers, which it zeroes first; constrained rows and columns are left out.
  /// xl null: the blocks of RestShapeMatrix's L instead.
  void AccumulateElasticHessian(const PetscScalar* xl);
  /// The lagged damping energy at x (J); leaves K(x_n) (x - x_n) in work2_ for the gradient.
  double DampingEnergy(Vec x);
  /// A new matrix (AIJ, block size 3; -hessian_mat_type) exactly preallocated for the
  /// Hessian's row layout.
  Mat NewHessianMatrix();
  /// (Re)sets H's preallocation to the row layout (the tets' pattern), dropping any other
  /// nonzeros.
  void Preallocate(Mat H);

  FemModel& model_;
  double beta_;
  FemLoads loads_;          // external loads, at t_next
  Vec3 gravity_ = Vec3::Zero();  // gravity at t_next
  ElementSets elements_;
  RestNodes nodes_;
  std::vector<char> body_held_;  ///< per body: some node of it is a Dirichlet node (any rank)
  /// Per body: sum over its tets of V_e |dP/dF(I)|_e (N m), the scale of the round-off in its
  /// elastic forces' net torque.
  std::vector<double> body_stiffness_volume_;
  bool project_spd_ = true;
  std::unique_ptr<FrictionPotential> friction_;  ///< null unless friction.model is potential and some object has friction
  std::unique_ptr<ContactDamping> contact_damping_;  ///< null unless an object has damping > 0
  double inertia_ = 1.0;
  double load_scale_ = 1.0;
  std::vector<char> active_tets_;  ///< empty: all tets (Restrict)
  bool external_ = true;           ///< gravity and penalties (Restrict)
  double dt_ = 0.0;
  double t_next_ = 0.0;
  OwnedVec x_n_;
  OwnedVec x_hat_;
  OwnedVec x_local_;   // ghosted work vector
  OwnedVec work_;
  OwnedVec work2_;
  OwnedMat hessian_;   // cached; handed out by reference
  OwnedMat stiffness_n_;  // K(x_n) for damping
  BlockRows rows_;                   // the Hessian's owned rows (BuildRowLayout) and their blocks
  std::vector<int> diagonal_slot_;   // per owned node
  std::vector<int> tet_slots_;       // 16 per local tet: (row corner, column corner) -> slot
  std::unique_ptr<SelfContact> self_contact_;  // null unless the scene's self_contact.enabled
  /// Constraint collisions: null unless an object has method: constraint. Then Evaluate
  /// takes E'(P(x)) (P into x_local_), unless raw_ (ProjectIterate's pass at u = P(u)); the
  /// Hessian's row buffers are projected, so the damping term's blocks join them there.
  std::unique_ptr<ConstraintCollisions> constraints_;
  bool raw_ = false;
  /// The last projected gradient evaluation (Evaluate at x with g): P(x), E'(P(x)) and the
  /// unconstrained gradient q there, for ProjectIterate when the accepted iterate is that x;
  /// cleared by Register (ProjectIterate), BeginStep, LagFriction and the setters above.
  OwnedVec cached_point_;
  OwnedVec cached_gradient_;
  PetscReal cached_energy_ = 0.0;
  bool cached_ = false;
  std::vector<PetscInt> row_local_cols_;  // per slot: local node of its column
  std::vector<double> damping_rows_;      // per slot: K(x_n) blocks, with constraints_ and beta > 0
  bool guard_contact_ = true;  ///< self_contact.line_search_guard (Gast Sec. 3.3)
  ContactCounts contact_counts_;
};

}  // namespace optistep
