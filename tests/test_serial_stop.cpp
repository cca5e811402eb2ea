// Stopping a run on a signal (core/StopSignals, integrators/StepController), without the
// executable: which signal wins and when a step under way is to be abandoned (at once
// with no grace period, after half of it otherwise, never for SIGUSR1); and what the step
// controller leaves when a step is abandoned, checked on an integrator whose tries are
// scripted: the state before the step, also after some halves of a halved step were
// accepted (restored for a fixed split; kept with a step limit, where any accepted step
// is a state to resume from).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <deque>
#include <thread>
#include <tuple>

#include "core/StopSignals.hpp"
#include "integrators/StepController.hpp"

namespace optistep {
namespace {

TEST(StopSignals, SigtermAbandonsTheStepAfterHalfTheGracePeriodSigusrNever) {
  EXPECT_FALSE(StopSignals::StepMustBeAbandoned(MPI_COMM_WORLD)) << "not watching";
  {
    const StopSignals watching(0.0);
    std::raise(SIGUSR1);
    EXPECT_EQ(StopSignals::Received(), SIGUSR1);
    EXPECT_FALSE(StopSignals::StepMustBeAbandoned(MPI_COMM_WORLD)) << "SIGUSR1 finishes the step";
    std::raise(SIGTERM);
    EXPECT_EQ(StopSignals::Received(), SIGTERM) << "SIGTERM wins";
    EXPECT_TRUE(StopSignals::StepMustBeAbandoned(MPI_COMM_WORLD)) << "no grace: at once";
    EXPECT_TRUE(StopSignals::Abandoning());
  }
  EXPECT_EQ(StopSignals::Received(), 0) << "forgotten when the run ends";
  EXPECT_FALSE(StopSignals::Abandoning());
  {
    const StopSignals watching(60.0);
    std::raise(SIGTERM);
    EXPECT_FALSE(StopSignals::StepMustBeAbandoned(MPI_COMM_WORLD)) << "30 s left for the step";
  }
  {
    const StopSignals watching(0.2);
    std::raise(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    EXPECT_TRUE(StopSignals::StepMustBeAbandoned(MPI_COMM_WORLD)) << "half of 0.2 s is over";
  }
}

/// An integrator whose tries follow a script: each TryStep takes the next outcome
/// ('c' converged, 'f' failed, 'a' abandoned); the state is the clock.
class ScriptedIntegrator : public Integrator {
 public:
  ScriptedIntegrator(std::string script, bool step_limit)
      : script_(script.begin(), script.end()), step_limit_(step_limit) {}
  const char* Name() const override { return "scripted"; }
  std::string Method() const override { return "script"; }
  std::string Describe() const override { return "scripted"; }
  SolveReport TryStep(double dt) override {
    SolveReport report;
    const char outcome = script_.front();
    script_.pop_front();
    report.converged = outcome == 'c';
    report.abandoned = outcome == 'a';
    report.reason = outcome == 'c' ? "converged" : outcome == 'a' ? "abandoned" : "failed";
    if (report.converged) {
      t_ += dt;
      ++steps_;
    }
    return report;
  }
  void KeepState() override { kept_ = {t_, steps_}; }
  void RestoreKeptState() override { std::tie(t_, steps_) = kept_; }
  bool HasStepLimit() const override { return step_limit_; }
  double MaxStep() const override { return step_limit_ ? 0.1 : INFINITY; }

 private:
  std::deque<char> script_;
  bool step_limit_;
  std::pair<double, long> kept_{0.0, 0};
};

/// Time 0.1 s per frame, one step of 0.1 s per frame, up to 8 halvings.
TimeConfig OneStepPerFrame() {
  TimeConfig time;
  time.dt = 0.1;
  time.frame_dt = 0.1;
  time.frames = 4;
  return time;
}

TEST(StepController, AnAbandonedStepLeavesTheStateBeforeIt) {
  for (const bool step_limit : {false, true}) {
    SCOPED_TRACE(step_limit ? "with a step limit" : "fixed split");
    ScriptedIntegrator integrator("ca", step_limit);
    StepController controller(MPI_COMM_WORLD, OneStepPerFrame(), integrator);
    int accepted = 0;
    const auto count = [&](const StepRecord&) { ++accepted; };
    EXPECT_TRUE(controller.AdvanceStep(0, count));
    EXPECT_THROW(controller.AdvanceStep(1, count), StepAbandoned);
    EXPECT_EQ(integrator.steps(), 1);
    EXPECT_EQ(integrator.time(), 0.1);
    EXPECT_EQ(accepted, 1);
  }
}

TEST(StepController, AStepAbandonedHalfWayIsUndoneForAFixedSplitOnly) {
  // The whole step fails, its first half is accepted, its second half abandoned.
  for (const bool step_limit : {false, true}) {
    SCOPED_TRACE(step_limit ? "with a step limit" : "fixed split");
    ScriptedIntegrator integrator("cfca", step_limit);
    StepController controller(MPI_COMM_WORLD, OneStepPerFrame(), integrator);
    int accepted = 0;
    const auto count = [&](const StepRecord&) { ++accepted; };
    EXPECT_TRUE(controller.AdvanceStep(0, count));
    EXPECT_THROW(controller.AdvanceStep(1, count), StepAbandoned);
    EXPECT_EQ(accepted, 2) << "the first half was accepted (and recorded) before";
    if (step_limit) {
      EXPECT_EQ(integrator.steps(), 2) << "a state between accepted steps resumes as it is";
      EXPECT_DOUBLE_EQ(integrator.time(), 0.15);
    } else {
      EXPECT_EQ(integrator.steps(), 1) << "the frame's fixed split resumes from whole steps";
      EXPECT_EQ(integrator.time(), 0.1);
      EXPECT_EQ(controller.frame_step(), 0);
    }
  }
}

}  // namespace
}  // namespace optistep
