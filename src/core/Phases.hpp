#pragma once
// The collective phases of a time step. Each is a PetscLogEvent "Os<name>" (so -log_view
// shows it) and a wall-clock accumulator (so stats.csv reports the split per step, in the
// column t_<name>). Every component declares the phases it times, at namespace scope in
// its own .cpp (or, when several components time the same phase, in the header of the
// layer that owns it):
//
//   const Phase kP2GPhase("P2G");
//   ...
//   { ScopedPhase timed(kP2GPhase); P2G(...); }
//
// Phases may be nested (the line search contains energy evaluations); each accumulates its
// own wall time.
#include <petscsys.h>

#include <string>
#include <vector>

namespace optistep {

class Phase {
 public:
  /// Registers the phase (not collective; a name registered twice is the same phase). If
  /// PETSc logging has started (StartPhaseLogging), its event is registered at once.
  explicit Phase(const char* name);
  int id() const { return id_; }
  const std::string& name() const;

 private:
  int id_;
};

/// The phases timed in every run, whatever the discretization and method.
extern const Phase kOutputPhase;      ///< frames and stats
extern const Phase kSetupPhase;       ///< reading, partitioning, building the model
extern const Phase kCheckpointPhase;  ///< writing or reading a checkpoint

/// Registers the PETSc events of every phase registered so far, and of those registered
/// later as they come (call once after PetscInitialize; idempotent). Without it phases are
/// timed but not logged (tests).
void StartPhaseLogging();

/// Ids of all registered phases, sorted by name: the order of stats.csv's t_ columns.
std::vector<int> PhasesByName();
/// The name of phase id ("Energy").
const std::string& PhaseName(int id);
/// Seconds spent in phase id on this rank since the last ResetPhaseTimes.
double PhaseSeconds(int id);
void ResetPhaseTimes();

/// RAII: PetscLogEventBegin/End (when logging has started) plus the wall-clock accumulator.
class ScopedPhase {
 public:
  explicit ScopedPhase(const Phase& phase);
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  int id_;
  double start_;
};

}  // namespace optistep
