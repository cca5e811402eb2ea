#include "core/Phases.hpp"

#include <petsclog.h>

#include <string>

namespace optistep {
namespace {

constexpr int kPhases = static_cast<int>(Phase::kCount);
const char* const kNames[kPhases] = {"Energy",      "Gradient",   "Hessian",  "Assembly",
                                     "LinearSolve", "LineSearch", "Friction", "Output",
                                     "Setup",       "Checkpoint"};
std::array<PetscLogEvent, kPhases> g_events{};
std::array<double, kPhases> g_seconds{};
bool g_registered = false;

}  // namespace

const char* PhaseName(Phase phase) { return kNames[static_cast<int>(phase)]; }

void RegisterPhases() {
  if (g_registered) return;
  PetscClassId class_id = 0;
  PetscClassIdRegister("optistep", &class_id);
  for (int p = 0; p < kPhases; ++p) {
    const std::string name = std::string("Os") + kNames[p];
    PetscLogEventRegister(name.c_str(), class_id, &g_events[p]);
  }
  g_registered = true;
}

double PhaseSeconds(Phase phase) { return g_seconds[static_cast<int>(phase)]; }

void ResetPhaseTimes() { g_seconds.fill(0.0); }

ScopedPhase::ScopedPhase(Phase phase) : phase_(phase), start_(MPI_Wtime()) {
  if (g_registered) PetscLogEventBegin(g_events[static_cast<int>(phase_)], 0, 0, 0, 0);
}

ScopedPhase::~ScopedPhase() {
  if (g_registered) PetscLogEventEnd(g_events[static_cast<int>(phase_)], 0, 0, 0, 0);
  g_seconds[static_cast<int>(phase_)] += MPI_Wtime() - start_;
}

}  // namespace optistep
