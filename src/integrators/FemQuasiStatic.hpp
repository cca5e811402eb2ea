#pragma once
// Quasi-static load stepping on a tet mesh (integrator: quasi_static, FEM): each step
// minimizes elastic energy + contact penalty (+ friction) - external work over x_{n+1},
// with no inertia term (fem/FemIncrementalPotential with inertia weight 0), the loads
// taken at the step's end time t_{n+1}: gravity times min(1, t_{n+1} / T) with
// quasi_static.ramp (the default; T = quasi_static.ramp_time, or the run's duration
// frames frame_dt when not given), the full gravity otherwise. Velocities stay zero.
//
// Newton uses the true (unprojected) elastic Hessian (solver.hessian_projection: none, the
// default here; element projects as backward Euler does), relying on Gast et al. 2015 Sec.
// 3.1's CG early exit on indefiniteness and downhill check far from equilibrium: the
// per-element SPD projection clips the compressed fibres' indefinite modes of a bent
// beam, which the assembled tangent does not need near equilibrium, and turns Newton's
// quadratic convergence into a linear one (error x 0.59 per iteration on a cantilever under
// its own weight; with the true Hessian 2.8 -> 2.9e-2 -> 6.0e-6 in the last three).
//
// Convergence: |g|_2 <= quasi_static.tolerance |f_ext|_2 (solver termination "absolute"
// with tau = tolerance |f_ext|_2), f_ext the full load m_i g on the free nodes: the
// load-relative force criterion of structural codes (e.g. ANSYS CNVTOL's L2 norm of the
// residual against the applied loads). Every body must be held (Dirichlet nodes or
// contact): without inertia a free body's Hessian is singular.
#include <memory>

#include "fem/FemIncrementalPotential.hpp"
#include "fem/FemModel.hpp"
#include "integrators/Integrator.hpp"

namespace optistep {

class FemQuasiStatic : public Integrator {
 public:
  /// Collective. x (m) and v (m/s) are the model's ghosted node vectors (v is kept zero).
  FemQuasiStatic(FemModel& model, Vec x, Vec v);
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
  FemModel& model_;
  Vec x_;
  Vec v_;
  FemIncrementalPotential potential_;
  double tau_ = 0.0;
  std::unique_ptr<Minimizer> minimizer_;
  Vec u_ = nullptr;
  Vec zero_ = nullptr;
  Vec x_kept_ = nullptr;
  double t_kept_ = 0.0;
  long steps_kept_ = 0;
};

}  // namespace optistep
