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
};

}  // namespace optistep
