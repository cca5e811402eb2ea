#pragma once
// What backward Euler as optimization (Gast et al. 2015, Secs. 2-3) shares across
// discretizations: every step minimizes the discretization's incremental potential with
// the scene's minimizer (solver.method, solvers/MinimizerFactory.hpp), from the better of
// two initial guesses (Sec. 3.1); the clock.
#include <functional>
#include <memory>

#include "integrators/Integrator.hpp"
#include "io/SceneSections.hpp"

namespace optistep {

class BackwardEuler : public Integrator {
 public:
  const char* Name() const override { return "backward_euler"; }
  std::string Method() const override { return minimizer_->Type(); }
  /// "backward_euler, minimizer newton, termination characteristic_norm (epsilon 1e-05)".
  std::string Describe() const override {
    return std::string(Name()) + ", minimizer " + minimizer_->Describe();
  }
  /// The minimizer's own columns (L-BFGS's refreshes).
  std::vector<std::string> StatsColumns() const override { return minimizer_->StatsColumns(); }
  /// Their values for the last accepted step (all its solves).
  std::vector<double> StatsValues() const override { return minimizer_->StatsValues(step_); }
  void SaveState(CheckpointWriter& out) override { minimizer_->SaveState(out); }
  void LoadState(const CheckpointReader& in, bool same_ranks) override { minimizer_->LoadState(in, same_ranks); }

 protected:
  /// Collective: creates, configures and sets up the scene's minimizer.
  BackwardEuler(MPI_Comm comm, const IntegratorConfig& scene, const MinimizerDefaults& defaults);
  /// Collective. The better (lower E) of the two starts u and other, in u (Gast Sec. 3.1),
  /// when solver.best_of_two_guesses; u unchanged otherwise.
  void TakeBetterStart(IncrementalPotential& potential, Vec u, Vec other) const;
  /// Collective. Friction as a potential: IPC's outer lagging iterations (Li et al. 2020,
  /// Sec. 5.1) after a step's first solve, whose report is `report`: up to `solves` more
  /// minimizations of potential from u, each after lag() has lagged the friction's normal
  /// forces (FEM) or impulses (MPM) again at u and prepared the start; they stop at the
  /// first that does not converge (none follows a report that did not). Returns the last
  /// solve's report with the iterations, Krylov iterations, initializer applications and
  /// L-BFGS refreshes of all of them summed, the step's counts in stats.csv.
  SolveReport LaggedFrictionSolves(IncrementalPotential& potential, Vec u, int solves, SolveReport report,
                                   const std::function<void()>& lag);

  MPI_Comm comm_;
  const IntegratorConfig& scene_;
  std::unique_ptr<Minimizer> minimizer_;
  /// The report of the last accepted step's solves (LaggedFrictionSolves' sums), set by
  /// TryStep on success: what StatsValues reports.
  SolveReport step_;
};

}  // namespace optistep
