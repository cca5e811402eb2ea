#pragma once
// Backward Euler as optimization (Gast et al. 2015, Sec. 2): each step minimizes the
// incremental potential over x_{n+1}; then v_{n+1} = (x_{n+1} - x_n) / dt and Coulomb
// friction against collision objects is applied to v_{n+1} (Sec. 5.2). Starts from the
// better (lower E) of x_n and x_hat = x_n + dt v_n (Sec. 3.1). A step that fails (no
// decrease, NaN, iteration cap) is retried as two steps of half the size, recursively,
// up to max_dt_halvings times; the state is never advanced by a failed step.
#include <functional>
#include <stdexcept>
#include <vector>

#include "fem/FemIncrementalPotential.hpp"
#include "fem/FemModel.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

/// One accepted step, as reported per step on rank 0 and in stats.csv.
struct StepRecord {
  long step = 0;        ///< 1-based count of accepted steps
  double t = 0.0;       ///< time at the end of the step, s
  double dt = 0.0;      ///< s
  int halvings = 0;     ///< how many times dt was halved to get this step through
  SolveReport solve;
  double wall = 0.0;    ///< wall-clock seconds of this step (including failed tries)
  /// Values of the discretization's extra stats.csv columns (StepStats' extra_columns).
  std::vector<double> extra;
};

/// Thrown when a step still fails after the last allowed halving.
class StepFailure : public std::runtime_error {
 public:
  explicit StepFailure(const std::string& what) : std::runtime_error(what) {}
};

class BackwardEulerIntegrator {
 public:
  /// Collective. State starts at the model's initial state, t = 0.
  BackwardEulerIntegrator(FemModel& model, Minimizer& minimizer);
  ~BackwardEulerIntegrator();
  BackwardEulerIntegrator(const BackwardEulerIntegrator&) = delete;
  BackwardEulerIntegrator& operator=(const BackwardEulerIntegrator&) = delete;

  /// Collective. Advances the state by dt (s), halving on failure; calls on_step after
  /// each accepted (sub)step. Throws StepFailure naming the time and the reason.
  void Advance(double dt, const std::function<void(const StepRecord&)>& on_step);

  /// Collective. Replaces the state (a restart): x (m) and v (m/s) of the owned nodes,
  /// 3 values each in the local PETSc order, the time t (s) and the accepted-step count.
  /// Nothing else crosses steps: the Dirichlet targets and obstacles are functions of t,
  /// and the minimizer starts every step afresh.
  void SetState(const double* x, const double* v, double t, long steps);

  Vec positions() const { return x_; }    ///< ghosted, m
  Vec velocities() const { return v_; }   ///< ghosted, m/s
  double time() const { return t_; }
  long steps() const { return steps_; }
  FemIncrementalPotential& potential() { return potential_; }

 private:
  /// One try; on success the state moves to t + dt. Returns the solve report.
  SolveReport TryStep(double dt);
  void AdvanceRecursive(double dt, int depth, double start_wall,
                        const std::function<void(const StepRecord&)>& on_step);
  void ApplyFriction(Vec x, Vec v, double dt) const;

  FemModel& model_;
  Minimizer& minimizer_;
  FemIncrementalPotential potential_;
  Vec x_ = nullptr;
  Vec v_ = nullptr;
  Vec u_ = nullptr;
  Vec guess_ = nullptr;
  double t_ = 0.0;
  long steps_ = 0;
  int max_halvings_;
};

}  // namespace optistep
