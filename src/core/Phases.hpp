#pragma once
// The collective phases of a time step, each a PetscLogEvent (so -log_view shows them)
// and a wall-clock accumulator (so stats.csv can report the split per step).
#include <petscsys.h>

#include <array>

namespace optistep {

enum class Phase {
  kEnergy,       ///< E(x) evaluations
  kGradient,     ///< grad E(x)
  kHessian,      ///< element kernel of the projected Hessian, values into the Mat
  kAssembly,     ///< MatAssemblyBegin/End
  kLinearSolve,  ///< KSPSolve inside Newton
  kLineSearch,   ///< the whole line search (includes its energy and gradient calls)
  kFriction,     ///< post-solve Coulomb friction
  kOutput,       ///< frames and stats
  kSetup,        ///< reading, partitioning, building the model
  kCheckpoint,   ///< writing or reading a checkpoint
  kCount
};

/// Short names used for -log_view ("OsEnergy"...) and stats.csv columns ("t_energy"...).
const char* PhaseName(Phase phase);

/// Registers the events once (idempotent; call after PetscInitialize).
void RegisterPhases();

/// Seconds spent in each phase since the last ResetPhaseTimes (this rank).
double PhaseSeconds(Phase phase);
void ResetPhaseTimes();

/// RAII: PetscLogEventBegin/End plus the wall-clock accumulator.
class ScopedPhase {
 public:
  explicit ScopedPhase(Phase phase);
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  Phase phase_;
  double start_;
};

}  // namespace optistep
