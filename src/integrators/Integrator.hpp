#pragma once
// The time-stepping seam (docs/dev/ARCHITECTURE.md). An Integrator advances a discretization's
// state from t to t + dt: backward Euler as optimization for FEM and MPM (Gast et al.
// 2015; integrators/FemBackwardEuler, MpmBackwardEuler); XPBD and asynchronous evolution
// are further implementations. The StepController (integrators/StepController.hpp), one
// for every integrator, cuts frames into steps, caps them by the integrator's stability
// limit, and halves and retries failed steps.
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "solvers/Minimizer.hpp"

namespace optistep {

/// One accepted step, as reported per step on rank 0 and in stats.csv.
struct StepRecord {
  long step = 0;        ///< 1-based count of accepted steps
  double t = 0.0;       ///< time at the end of the step, s
  double dt = 0.0;      ///< s
  int halvings = 0;     ///< how many times dt was halved to get this step through
  std::string method;   ///< what solved the step ("newton", "lbfgs")
  SolveReport solve;
  double wall = 0.0;    ///< wall-clock seconds of this step (including failed tries)
  /// Values of the integrator's own stats.csv columns (Integrator::StatsColumns).
  std::vector<double> extra;
};

/// Thrown when a step still fails after the last allowed halving, or when a refused state
/// leaves no earlier state to halve from. what() says what failed, where and why; remedy()
/// what the user can change (the scene keys to try, "" when none applies), said once by
/// whoever reports the failure (main: exit 2).
class StepFailure : public std::runtime_error {
 public:
  explicit StepFailure(const std::string& what, std::string remedy = "")
      : std::runtime_error(what), remedy_(std::move(remedy)) {}
  const std::string& remedy() const { return remedy_; }

 private:
  std::string remedy_;
};

/// Thrown (on every rank) by StepController when a stop signal abandons the step under way
/// (core/StopSignals.hpp); the state is that of the last accepted step a run can resume
/// from.
class StepAbandoned : public std::runtime_error {
 public:
  explicit StepAbandoned(const std::string& what) : std::runtime_error(what) {}
};

class Integrator {
 public:
  virtual ~Integrator() = default;

  /// The scene's name of the scheme (integrator: backward_euler).
  virtual const char* Name() const = 0;
  /// What solves a step, for the step line and stats.csv ("newton", "lbfgs").
  virtual std::string Method() const = 0;
  /// One line for the run's summary: the scheme, its solver and their main settings.
  virtual std::string Describe() const = 0;

  /// Collective. One try of a step of size dt (s) from time(). On success
  /// (report.converged) the state is at time() + dt and steps() grew by one; otherwise the
  /// state is exactly as before (the controller halves dt and tries again, or, if
  /// report.abandoned, gives the step up): a NaN is rejected before any state changes.
  virtual SolveReport TryStep(double dt) = 0;

  /// Collective. Keep a copy of the state and the clock, and put it back: the controller
  /// keeps the state at the start of a step it halves, so that a step abandoned after some
  /// of its halves were accepted leaves the state of the last whole step. Only an
  /// integrator without a step limit needs them (FEM: checkpoints hold whole steps of the
  /// frame's fixed split); with one, any accepted (half) step is a state to resume from.
  virtual void KeepState() {}
  virtual void RestoreKeptState() {}

  /// Besides a smaller time.dt, the scene setting that makes this scheme's steps smaller
  /// ("more xpbd.substeps"); "" when time.dt is the only one. Used in StepFailure's remedy.
  virtual std::string SmallerStepKey() const { return ""; }
  /// StepFailure's remedy for a step that failed at its size: "try a smaller time.dt",
  /// then SmallerStepKey() and, when the failure came after halving (`halved`), "more
  /// time.max_dt_halvings", the last joined by " or " and the others by ", ".
  std::string SmallerStepRemedy(bool halved) const {
    std::vector<std::string> keys = {"a smaller time.dt"};
    if (!SmallerStepKey().empty()) keys.push_back(SmallerStepKey());
    if (halved) keys.push_back("more time.max_dt_halvings");
    std::string remedy = "try " + keys[0];
    for (std::size_t i = 1; i < keys.size(); ++i) remedy += (i + 1 == keys.size() ? " or " : ", ") + keys[i];
    return remedy;
  }

  /// Whether the scheme has a state-dependent step limit (MPM's CFL condition). Without
  /// one, frames are cut into a fixed number of equal steps (StepController).
  virtual bool HasStepLimit() const { return false; }
  /// Collective: the largest step (s) the current state allows; +inf when there is no limit.
  virtual double MaxStep() const { return INFINITY; }

  double time() const { return t_; }   ///< s
  long steps() const { return steps_; }  ///< accepted steps so far
  /// Sets the clock: a restart, or the controller ending a frame exactly on its boundary.
  /// Integrators that keep something derived from the state extend it (semi_implicit).
  virtual void SetClock(double t, long steps) {
    t_ = t;
    steps_ = steps;
  }

  /// The integrator's own stats.csv columns and, after an accepted step, their values.
  virtual std::vector<std::string> StatsColumns() const { return {}; }
  virtual std::vector<double> StatsValues() const { return {}; }
  /// Collective: state of the solver that crosses steps (lagged factors) into a checkpoint,
  /// and back before the next step (same_ranks: written on this rank count and
  /// partition). None by default.
  virtual void SaveState(CheckpointWriter& out) { (void)out; }
  virtual void LoadState(const CheckpointReader& in, bool same_ranks) {
    (void)in;
    (void)same_ranks;
  }
  /// Per-cell fields the integrator adds to every frame: (name, one value per counted local
  /// tet in local order), e.g. async's region split. Not collective.
  virtual std::vector<std::pair<std::string, std::vector<double>>> FrameCellFields() const {
    return {};
  }

 protected:
  /// The clock every integrator keeps: the state's time (s) and the accepted steps;
  /// TryStep advances it, KeepState/RestoreKeptState save and restore it.
  double t_ = 0.0;
  long steps_ = 0;
};

}  // namespace optistep
