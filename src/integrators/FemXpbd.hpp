#pragma once
// XPBD with small steps on a tet mesh (Macklin, Storey, Lu, Terdiman, Chentanez, Jeschke,
// Mueller 2019, "Small Steps in Physics Simulation", Alg. 1), the scene's `integrator: xpbd`.
// One step of size dt is n = xpbd.substeps substeps of dt_s = dt / n; contacts against the
// collision objects are found once per step (Sec. 4.3); per substep: predict, reset the
// multipliers, xpbd.iterations passes over the constraints (per tet the stable Neo-Hookean
// energy of Macklin & Mueller 2021, its deviatoric part held by the nine rows C_D = F
// rather than the paper's C_D = |F|_F, with C_H = det F - gamma_H, the ten solved as one
// update; the contacts with friction), then v = (x - x_prev) / dt_s.
// xpbd.order: coloring (Gauss-Seidel by greedy tet colors, the default) or jacobi (averaged
// corrections, the paper's GPU variant); both give the same trajectory on any rank count.
// Contract: only x and v cross steps (a checkpoint resumes bitwise); a step fails (state
// unchanged) only on a NaN.
// The update, the constraints, damping, depenetration, the order over ranks, the force
// estimates and the stability limit: docs/methods/xpbd.md.
#include <petscvec.h>

#include <array>
#include <string>
#include <vector>

#include "core/PetscHandles.hpp"
#include "fem/FemModel.hpp"
#include "integrators/Xpbd.hpp"
#include "integrators/KeptState.hpp"

namespace optistep {

class FemXpbd : public Xpbd {
 public:
  /// Collective. x (m) and v (m/s) are the model's ghosted node vectors that TryStep
  /// advances in place (the simulation owns them); colors the tets (rank 0).
  FemXpbd(const IntegratorConfig& config, FemModel& model, Vec x, Vec v);
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

  OwnedVec xs_;                         ///< positions during the step (ghosted)
  OwnedVec dx_;                         ///< ghost corrections of one color (ghosted)
  OwnedVec vs_;                         ///< velocities during the step
  std::vector<double> x_prev_;          ///< local form at the substep's start

  KeptFemState kept_;
  double projections_ = 0.0;
  double volume_change_ = 0.0;
  double halo_exchanges_ = 0.0;
  double dt_s_ = 0.0;                   ///< the last substep, s
};

}  // namespace optistep
