#include "core/Phases.hpp"

#include <petsclog.h>

#include <algorithm>
#include <numeric>

namespace optistep {
namespace {

struct Registry {
  std::vector<std::string> names;
  std::vector<PetscLogEvent> events;
  std::vector<double> seconds;
  PetscClassId class_id = 0;
  bool logging = false;
};

/// Function-local, so phases declared at namespace scope in any translation unit find it
/// constructed whatever the order of static initialization.
Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

void RegisterEvent(Registry& r, int id) {
  PetscLogEventRegister(("Os" + r.names[id]).c_str(), r.class_id, &r.events[id]);
}

}  // namespace

const Phase kOutputPhase("Output");
const Phase kSetupPhase("Setup");
const Phase kCheckpointPhase("Checkpoint");

Phase::Phase(const char* name) {
  Registry& r = TheRegistry();
  const auto found = std::find(r.names.begin(), r.names.end(), name);
  id_ = static_cast<int>(found - r.names.begin());
  if (found != r.names.end()) return;
  r.names.emplace_back(name);
  r.events.push_back(0);
  r.seconds.push_back(0.0);
  if (r.logging) RegisterEvent(r, id_);
}

const std::string& Phase::name() const { return TheRegistry().names[id_]; }

void StartPhaseLogging() {
  Registry& r = TheRegistry();
  if (r.logging) return;
  PetscClassIdRegister("optistep", &r.class_id);
  for (int id = 0; id < static_cast<int>(r.names.size()); ++id) RegisterEvent(r, id);
  r.logging = true;
}

std::vector<int> PhasesByName() {
  const Registry& r = TheRegistry();
  std::vector<int> ids(r.names.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](int a, int b) { return r.names[a] < r.names[b]; });
  return ids;
}

const std::string& PhaseName(int id) { return TheRegistry().names[id]; }

double PhaseSeconds(int id) { return TheRegistry().seconds[id]; }

void ResetPhaseTimes() {
  auto& seconds = TheRegistry().seconds;
  std::fill(seconds.begin(), seconds.end(), 0.0);
}

ScopedPhase::ScopedPhase(const Phase& phase) : id_(phase.id()), start_(MPI_Wtime()) {
  const Registry& r = TheRegistry();
  if (r.logging) PetscLogEventBegin(r.events[id_], 0, 0, 0, 0);
}

ScopedPhase::~ScopedPhase() {
  Registry& r = TheRegistry();
  if (r.logging) PetscLogEventEnd(r.events[id_], 0, 0, 0, 0);
  r.seconds[id_] += MPI_Wtime() - start_;
}

}  // namespace optistep
