#pragma once
// XPBD with small steps on a tet mesh (Macklin, Storey, Lu, Terdiman, Chentanez, Jeschke,
// Mueller 2019, "Small Steps in Physics Simulation", Alg. 1), the scene's `integrator: xpbd`.
//
// One StepController step of size dt (time.dt; with time.dt = the frame dt, the paper's
// "visual time step") is cut into n = xpbd.substeps substeps of dt_s = dt / n. Per step,
// contacts against the collision objects are found once (Sec. 4.3) from the swept
// prediction x_n -> x_n + dt v_n + dt^2 g; per substep:
//   x_prev = x;  v += dt_s g;  x += dt_s v          (free nodes; Dirichlet nodes to their
//                                                    scripted position at the substep's end)
//   lambda = 0; xpbd.iterations passes (1: Alg. 1) over the constraints:
//     dlambda = (-C - alpha~ lambda - gamma grad C (x - x_prev)) / ((1 + gamma) grad C W grad C^T + alpha~)
//     x += W grad C^T dlambda                       (Macklin et al. 2016, XPBD, Eqs. 18, 26)
//   v = (x - x_prev) / dt_s
// with alpha~ = alpha / dt_s^2 and W the inverse lumped masses (0 at Dirichlet nodes).
// Only x and v cross steps: lambda is reset every substep and the contact set is found
// again every step, so a checkpoint (FemSimulation::SaveState: x, v, the clock) resumes a
// run bitwise.
//
// Constraints, per tet of rest volume V0 (Macklin & Mueller 2021, "A Constraint-based
// Formulation of Stable Neo-Hookean Materials"): the deviatoric energy mu/2 |F|^2 and the
// hydrostatic C_H = det F - gamma_H with alpha_H = 1 / (lambda_H V0), gamma_H =
// 1 + mu / lambda_H. Their energy mu/2 (I_C - 3) + lambda_H/2 (J - gamma_H)^2 (up to a
// constant) linearizes at F = I to mu (|dF|^2 + tr(dF^2)) / 2 + (lambda_H - mu) tr(dF)^2 / 2,
// so lambda_H = lambda + mu gives the body's Lame parameters (lambda, mu from E, nu) in the
// small-strain limit (the re-parameterization of Smith, de Goes, Kim 2018, "Stable
// Neo-Hookean Flesh Simulation", for the energy without its log term).
// The deviatoric energy is held by the 9 constraints C_D = F (alpha_D = 1 / (mu V0) each; F
// is linear in x), not by the paper's one C_D = |F|_F: the energy is the same, but |F|_F is
// sqrt(3) at rest, so the curvature of C_D, which XPBD's update leaves out, carries the whole
// shear stiffness, treated explicitly: one pass per substep is then stable only for
// dt_s < 2 / w of the stiffest shear mode (the elephant broke up below 400 substeps a frame,
// at nodes of 1e-5 kg). With C_D = F the update's G W G^T holds the deviatoric stiffness
// exactly; what stays explicit is C_H's curvature lambda_H (J - gamma_H) d2J/dF2, of size
// mu near rest. A tet's 10 rows are solved together (ProjectTet: a 3x3 solve and its Schur
// complement); solved apart, C_D and C_H would have no fixed point at the rest shape.
// Damping (Sec. 4.1; XPBD Eq. 26): gamma = alpha~ beta~ / dt_s with beta~ = dt_s^2 beta; with
// beta = beta_R / alpha for the scene's damping.stiffness_beta beta_R (s, Rayleigh
// stiffness-proportional), gamma = beta_R / dt_s for every constraint.
// Contacts (Sec. 4.3, 4.4): C = phi(x) >= 0 at each free node against each analytic
// collision object, zero compliance; Coulomb friction removes the tangential motion of the
// substep up to mu times the normal correction (the frictional multiplier clamped by mu
// times the normal one). With xpbd.max_depenetration_speed v_max (Sec. 4.2; the paper gives
// no value, so it is off unless set) the constraint is phi(x) >= min(0, phi(x_prev) +
// v_max dt_s): a node that starts the substep at depth d leaves at no more than v_max.
//
// Distribution (docs/ARCHITECTURE.md), xpbd.order: coloring (the default): Gauss-Seidel in an
// order that does not depend on the rank count. The tets are colored greedily in original tet id order (no two tets of a color
// share a node; computed once, on rank 0); per color, each tet is projected by the rank that
// counts it, corrections of ghost nodes go to their owners (a reverse ADD scatter: one
// correction per node per color, so the sum is exact), then ghosts are refreshed. Every
// kernel is per tet or per node, so 1, 2, 4 ranks give bitwise the same trajectory.
// xpbd.order: jacobi (the paper's GPU variant; averaging as in Macklin, Mueller,
// Chentanez, Kim 2014, "Unified Particle Physics for Real-Time Applications", Sec. 4.2, with
// omega = 1): every tet is projected from the same positions, and each owned node moves by the
// mean of its tets' corrections, x_i += (sum_t delta_i^t) / n_i (n_i: the tets at node i).
// Every rank keeps every tet at its owned nodes (partition/TetPartition.hpp), so it projects
// them all itself (the ghost layer's tets twice over ranks, from bitwise the same inputs) and
// sums each node's corrections in original tet id order: rank-invariant, and one halo
// exchange per pass instead of two per color.
#include <petscvec.h>

#include <array>
#include <string>
#include <vector>

#include "fem/FemModel.hpp"
#include "integrators/Xpbd.hpp"
#include "integrators/KeptState.hpp"

namespace optistep {

class FemXpbd : public Xpbd {
 public:
  /// Collective. x (m) and v (m/s) are the model's ghosted node vectors that TryStep
  /// advances in place (the simulation owns them); colors the tets (rank 0).
  FemXpbd(FemModel& model, Vec x, Vec v);
  ~FemXpbd() override;
  FemXpbd(const FemXpbd&) = delete;
  FemXpbd& operator=(const FemXpbd&) = delete;

  /// "xpbd, 20 substeps x 1 iteration, Gauss-Seidel over 14 tet colors" (or ", Jacobi with
  /// averaged corrections").
  std::string Describe() const override;

  /// Collective. n substeps of dt / n (s). Fails (state unchanged) only on a NaN.
  SolveReport TryStep(double dt) override;
  void KeepState() override;
  void RestoreKeptState() override;


  /// stats.csv: substeps of the step, tet colors (0 under Jacobi), constraint projections of
  /// the step summed over ranks (each tet counted once), the largest volume change
  /// |det F - 1| over the tets after the step, and the halo exchanges of the step.
  std::vector<std::string> StatsColumns() const override;
  std::vector<double> StatsValues() const override;

  /// Per counted local tet in local order (FemSimulation's frames): the force estimates
  /// lambda / dt_s^2 of the last substep (Macklin et al. 2019, Sec. 4, Fig. 4) of the
  /// tet's constraints, "force_deviatoric" (Lambda_D : F / |F|, the force conjugate to
  /// |F|_F, from C_D = F's 9 multipliers Lambda_D) and "force_hydrostatic"
  /// (C_H = det F - gamma_H), N m (C is dimensionless: lambda / dt_s^2 is the generalized
  /// force conjugate to C, -dU/dC at convergence; over V0, a stress in Pa). At the rest
  /// shape (free fall, rigid motion) they are -sqrt(3) mu V0 and mu V0, whose nodal forces
  /// cancel. 0 before this run's first step. Not collective.
  std::vector<std::pair<std::string, std::vector<double>>> FrameCellFields() const override;

  /// Per counted local tet in local order: C_D = F's 9 force estimates Lambda_D / dt_s^2 of
  /// the last substep (N m), whose deviatoric force on the tet's corner a is Lambda_D beta_a
  /// / dt_s^2 (beta_a: column a of the rest-shape gradient matrix). Zero before this run's
  /// first step. Not collective.
  std::vector<Mat3> DeviatoricForceEstimates() const;

  /// The number of tet colors (the same on every rank).
  int colors() const { return n_colors_; }

 private:
  /// One tet's constraint pair, in color order.
  struct TetConstraint {
    std::array<int, 4> nodes;            ///< local node indices
    size_t tet = 0;                      ///< local tet index (mesh.tets)
    Eigen::Matrix<double, 3, 4> beta;    ///< shape-function gradients, 1/m
    double alpha_D = 0.0;                ///< compliance of C_D, 1/(Pa m^3)
    double alpha_H = 0.0;                ///< compliance of C_H, 1/(Pa m^3)
    double gamma_H = 1.0;                ///< rest value of det F in C_H
  };

  void ColorTets();
  /// xpbd.order: jacobi: every local tet in original id order, and n_i per owned node.
  void ListTetsForJacobi();
  TetConstraint MakeConstraint(size_t e) const;
  /// One pass over the constraints of every color, then the contacts; x is the local form
  /// (owned then ghosts), its ghosts current on entry and on return.
  void ConstraintPass(double dt_s);
  /// The same under Jacobi: all tets from one x, averaged corrections, contacts, one halo.
  void JacobiPass(double dt_s);
  void ProjectTet(const TetConstraint& c, double dt_s, double* lambda, const double* x,
                  std::array<Vec3, 4>* delta) const;
  void ProjectContacts(double* x, double dt_s) const;
  /// Contact candidates of the step (Sec. 4.3): owned free nodes whose swept prediction
  /// comes within its own length of an object.
  void FindContacts(double dt);
  void RefreshGhosts();

  FemModel& model_;
  Vec x_;
  Vec v_;
  double damping_beta_ = 0.0;  ///< damping.stiffness_beta, s
  double max_depenetration_speed_;  ///< v_max, m/s (infinity: off)
  bool jacobi_ = false;             ///< xpbd.order: jacobi

  std::vector<TetConstraint> tets_;     ///< counted tets, by color (Jacobi: every local tet, by id)
  std::vector<char> tet_counted_;       ///< Jacobi: 1 where this rank counts tets_[t]
  std::vector<double> node_tets_;       ///< Jacobi: n_i, the tets at owned node i
  std::vector<double> jacobi_delta_;    ///< Jacobi: summed corrections per owned node (m)
  std::vector<size_t> color_begin_;     ///< tets_ of color c: [color_begin_[c], color_begin_[c+1])
  int n_colors_ = 0;
  /// Multipliers per tet of tets_: C_D's 9 (column-major, as F), then C_H's (N m s^2).
  static constexpr size_t kLambdas = 10;
  std::vector<double> lambda_;
  std::vector<double> w_;               ///< inverse mass per local node, 1/kg (0: Dirichlet)
  std::vector<std::pair<int, int>> contacts_;  ///< (owned node, collision object)

  Vec xs_ = nullptr;    ///< positions during the step (ghosted)
  Vec dx_ = nullptr;    ///< ghost corrections of one color (ghosted)
  Vec vs_ = nullptr;    ///< velocities during the step
  std::vector<double> x_prev_;          ///< local form at the substep's start

  KeptFemState kept_;
  double projections_ = 0.0;
  double volume_change_ = 0.0;
  double halo_exchanges_ = 0.0;
  double dt_s_ = 0.0;                   ///< the last substep, s
};

}  // namespace optistep
