#include "integrators/IntegratorFactory.hpp"

#include <stdexcept>

#include "integrators/ChainXpbd.hpp"
#include "integrators/FemAsync.hpp"
#include "integrators/FemBackwardEuler.hpp"
#include "integrators/FemQuasiStatic.hpp"
#include "integrators/FemSemiImplicit.hpp"
#include "integrators/FemXpbd.hpp"
#include "integrators/MpmBackwardEuler.hpp"
#include "io/SceneCompatibility.hpp"

namespace optistep {
namespace {

/// A scene that reached a factory without ReadSceneConfig (a test's): the compatibility
/// table's refusal, the one place that names what each discretization takes.
[[noreturn]] void Unavailable(const IntegratorConfig& scene) {
  CheckCombinations(scene);
  throw std::logic_error("integrator '" + ToString(scene.integrator) +
                         "' has no implementation for this discretization");
}

}  // namespace

// Which integrator takes which scene terms is checked once, when the scene is read
// (io/SceneCompatibility.hpp).

std::unique_ptr<Integrator> CreateFemIntegrator(const IntegratorConfig& scene, FemModel& model, Vec x,
                                                Vec v) {
  switch (scene.integrator) {
    case IntegratorKind::kBackwardEuler:
      return std::make_unique<FemBackwardEuler>(scene, model, x, v);
    case IntegratorKind::kQuasiStatic:
      return std::make_unique<FemQuasiStatic>(scene, model, x, v);
    case IntegratorKind::kXpbd:
      return std::make_unique<FemXpbd>(scene, model, x, v);
    case IntegratorKind::kSemiImplicit:
      return std::make_unique<FemSemiImplicit>(scene, model, x, v);
    case IntegratorKind::kAsync:
      return std::make_unique<FemAsync>(scene, model, x, v);
  }
  Unavailable(scene);
}

std::unique_ptr<Integrator> CreateParticleIntegrator(MPI_Comm comm, const IntegratorConfig& scene) {
  if (scene.integrator == IntegratorKind::kXpbd) return std::make_unique<ChainXpbd>(comm, scene);
  Unavailable(scene);
}

std::unique_ptr<Integrator> CreateMpmIntegrator(const IntegratorConfig& scene, mpm::MpmDomain& domain,
                                                const mpm::MpmModel& model) {
  if (scene.integrator == IntegratorKind::kBackwardEuler)
    return std::make_unique<MpmBackwardEuler>(scene, domain, model);
  Unavailable(scene);
}

}  // namespace optistep
