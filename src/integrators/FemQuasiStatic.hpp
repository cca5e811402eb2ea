#pragma once
// Quasi-static load stepping on a tet mesh (integrator: quasi_static, FEM): each step
// minimizes elastic energy + contact penalty (+ friction) - external work over x_{n+1}, with
// no inertia term (fem/FemIncrementalPotential with inertia weight 0), the loads taken at
// t_{n+1}: gravity times min(1, t_{n+1} / T) with quasi_static.ramp (the default;
// T = quasi_static.ramp_time, or the run's duration), the full gravity otherwise. Velocities
// stay zero. Newton uses the true (unprojected) Hessian by default
// (solver.hessian_projection: none), relying on Gast et al. 2015 Sec. 3.1's CG early exit and
// downhill check far from equilibrium.
// Convergence: |g|_2 <= quasi_static.tolerance |f_ext|_2, the load-relative force criterion
// of structural codes (e.g. ANSYS CNVTOL).
// Contract: every body must be held (Dirichlet nodes or contact): without inertia a free
// body's Hessian is singular.
// Why the true Hessian, f_ext with loads, and the limits: docs/methods/quasi-static.md.
#include <memory>

#include "core/PetscHandles.hpp"
#include "fem/FemIncrementalPotential.hpp"
#include "fem/FemModel.hpp"
#include "integrators/Integrator.hpp"

namespace optistep {

class FemQuasiStatic : public Integrator {
 public:
  /// Collective. x (m) and v (m/s) are the model's ghosted node vectors (v is kept zero).
  FemQuasiStatic(const IntegratorConfig& config, FemModel& model, Vec x, Vec v);
  ~FemQuasiStatic() override;

  const char* Name() const override { return "quasi_static"; }
  std::string Method() const override { return minimizer_->Type(); }
  std::string Describe() const override;
  SolveReport TryStep(double dt) override;
  void KeepState() override;
  void RestoreKeptState() override;

  /// The load factor at time t: min(1, t / T) with ramp, else 1.
  double LoadScale(double t) const;
  /// tau = tolerance |f_ext|_2 (N) of the convergence test.
  double Tau() const { return tau_; }
  FemIncrementalPotential& potential() { return potential_; }

 private:
  const IntegratorConfig& config_;
  FemModel& model_;
  Vec x_;
  Vec v_;
  FemIncrementalPotential potential_;
  double tau_ = 0.0;
  std::unique_ptr<Minimizer> minimizer_;
  OwnedVec u_;
  OwnedVec zero_;
  OwnedVec x_kept_;
  double t_kept_ = 0.0;
  long steps_kept_ = 0;
};

}  // namespace optistep
