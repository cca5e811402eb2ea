#pragma once
// Asynchronous evolution on a tet mesh (Schroeder, Kwatra, Zheng, Fedkiw 2010,
// "Asynchronous Evolution for Fully-Implicit and Semi-Implicit Time Integration",
// Secs. 4-5), integrator: async. One step of size Dt (the frame's fixed split, as
// backward Euler: StepController) from (x^n, v^n):
//  1. Substeps. n = ceil(Dt / dt_cfl) steps of h = Dt / n of the semi-implicit scheme of
//     Sec. 3.1 (integrators/FemSemiImplicit) with the elastic forces of the surface-layer
//     region only (integrators/AsyncRegions: SurfaceLayerTets, async.surface_layers),
//     gravity and the penalty contacts explicit on every node; dt_cfl is the CFL step of the
//     surface-layer tets alone. Every node's position and velocity is evolved in every
//     substep (nodes without applied forces drift). Before every kick, the forces on the
//     fully implicit region's nodes are distributed: f <- epsilon P f + (1 - epsilon) f
//     (Sec. 5, RigidForceDistribution, async.epsilon).
//  2. Coupled step at t^n + Dt: the interior region's elastic forces f_I, not applied in
//     the substeps, as one backward-Euler impulse over the whole step:
//         v^(n+1) = v_S + Dt M^-1 f_I(x^(n+1)),  x^(n+1) = x_S + Dt (v^(n+1) - v_S),
//     (x_S, v_S) the substeps' result; x^(n+1) minimizes the incremental potential
//         E(x) = |x - x_S|_M^2 / (2 Dt^2) + sum_(e interior) V_e Psi(F_e(x))
//     with the scene's minimizer (fem/FemIncrementalPotential restricted to the interior
//     tets, no gravity or penalty: those were applied in the substeps). In the paper's
//     terms (PhysBAM's implementation notes): the interior forces act in the velocity
//     update scaled by r = Dt / h, their stiffness by r^2 (a step of Dt, not h).
//     Deviations from the paper's Sec. 4.3 (README, "Asynchronous evolution"): the
//     position update uses Dt dv (backward Euler's) instead of the (2r - 1) scaling of the
//     last substep; f_I is evaluated at the step's end positions, not at the interior
//     nodes rewound to x^n; no velocity averaging (the paper's eqs. 7-8).
// async.coupling: paper (the coupled step of the paper's Sec. 4.3, by our reading of the
// authors' PhysBAM ASYNCHRONOUS_EVOLUTION and NEWMARK_EVOLUTION): the first n - 1 substeps
// as above; the last substep, from (x_S, v_S) at t^n + Dt - h, with r = Dt / h = n and
// alpha = 2 r - 1 = (2 Dt - h) / h:
//  a. implicit position update: v_B = v_S + h M^-1 (f_S(x_S) + alpha f_I(x^n + alpha h v_B)),
//     f_S the substep forces (surface tets, gravity, penalties, distribution) and f_I the
//     interior tets' elastic forces at the interior's nodes rewound to x^n and moved by
//     alpha h v_B (PhysBAM's scaled forces: scale alpha, stiffness alpha^2). With
//     z = x^n + alpha h v_B it is the minimization of
//         |z - x^n - alpha h (v_S + h M^-1 f_S(x_S))|_M^2 / (2 (alpha h)^2) + Psi_I(z)
//     (the incremental potential of the interior tets for a step of alpha h), by the
//     scene's minimizer from its inertial point;
//  b. velocity averaging: v_H = (v_S + v_B) / 2 (PhysBAM's Average_Velocities);
//  c. positions: x = x_S + h v_H; the interior-only nodes (in no surface-layer tet)
//     x = x^n + Dt (v^n + v_B) / 2 (PhysBAM's Set_External_Positions puts them at
//     x^n + Dt v_H, see below);
//  d. velocity update: v = v_S + h M^-1 (f_S(x) + r f_I(z)), f_I the interior forces of the
//     implicit update a. (PhysBAM evaluates f_I at the new x: explicit, so an interior mode
//     of frequency w grows without bound once w Dt >> 1, the NaN of the sliver sphere; at z
//     the step is stable for every w Dt and every n, for interior-only and mixed nodes alike,
//     by the step matrix of one undamped mode: spectral radius below 1).
// Free fall (no elastic force on a rigid translation): v_B = v^n + Dt g, every velocity is
// v^n + Dt g and every node of a surface-layer tet is at x^n + Dt v^n + Dt^2 g / 2, exact.
// PhysBAM's x^n + Dt v_H = x^n + Dt v^n + Dt (Dt - h / 2) g would leave the interior-only
// nodes Dt (Dt - h) g / 2 beyond the parabola (zero only for n = 1), and d. would then give
// them a velocity from the stretched interior tets; x^n + Dt (v^n + v_B) / 2, the average of
// the step's start velocity and the implicit update's, is exact. Refused (InputError,
// async.coupling) with Dirichlet nodes and with damping.stiffness_beta > 0, which the last
// substep does not treat.
// Momentum: the surface forces, f_I and (P keeps net force and torque) the distribution
// are internal; the change of total momentum over a step is M g Dt plus the ground's
// penalty impulses. Free fall is exact (f_I of a rigid motion is zero).
// State across steps: x, v and the clock only (each step's substeps and coupled step start
// from them; the semi-implicit forces kept between substeps are recomputed at each step's
// start), so a checkpoint of x and v restarts bit for bit.
#include <memory>
#include <vector>

#include "fem/FemIncrementalPotential.hpp"
#include "fem/FemModel.hpp"
#include "integrators/AsyncRegions.hpp"
#include "integrators/BackwardEuler.hpp"
#include "integrators/KeptState.hpp"
#include "integrators/FemSemiImplicit.hpp"

namespace optistep {

class FemAsync : public BackwardEuler {
 public:
  /// Collective. x (m) and v (m/s): the model's ghosted node vectors that TryStep advances
  /// in place. InputError (scene path and key) for a mesh without interior tets
  /// (async.surface_layers: use semi_implicit), and as FemSemiImplicit (friction).
  FemAsync(FemModel& model, Vec x, Vec v);
  ~FemAsync() override;

  const char* Name() const override { return "async"; }
  std::string Describe() const override;
  /// Collective. On failure (the coupled minimization, a NaN) the state is as before.
  SolveReport TryStep(double dt) override;
  void KeepState() override;
  void RestoreKeptState() override;

  /// The substeps of the last accepted step (stats.csv column "substeps").
  std::vector<std::string> StatsColumns() const override { return {"substeps"}; }
  std::vector<double> StatsValues() const override { return {static_cast<double>(substeps_)}; }
  /// Per-tet "async_region": 1 semi-implicit (surface layer), 0 fully implicit.
  std::vector<std::pair<std::string, std::vector<double>>> FrameCellFields() const override;

  /// Per local tet: 1 in the semi-implicit region.
  const std::vector<char>& region() const { return region_; }
  /// CFL step of the surface-layer tets (s).
  double SubstepLimit() const { return semi_->MaxStep(); }
  /// Per owned node: 1 when no surface-layer tet holds it (async.coupling: paper places
  /// these from the step's start).
  const std::vector<char>& interior_only() const { return interior_only_; }

 private:
  FemModel& model_;
  Vec x_;
  Vec v_;
  std::vector<char> region_;
  std::unique_ptr<RigidForceDistribution> distribution_;
  std::unique_ptr<FemSemiImplicit> semi_;
  FemIncrementalPotential interior_;
  Vec x_start_ = nullptr;
  Vec v_start_ = nullptr;
  Vec x_sub_ = nullptr;
  Vec zero_ = nullptr;
  Vec u_ = nullptr;
  KeptFemState kept_;
  long substeps_ = 0;
  // async.coupling: paper only.
  bool paper_ = false;
  std::vector<char> interior_tets_;
  std::vector<char> interior_only_;
  Vec v_sub_ = nullptr;
  Vec force_ = nullptr;
  Vec interior_force_ = nullptr;

  /// The paper's last substep (file comment, a-d) of size h from (x_, v_) = (x_S, v_S);
  /// x_start_ holds x^n. On failure the caller rewinds.
  SolveReport PaperCoupledSubstep(double dt, double h, double t_next);
};

}  // namespace optistep
