#include "integrators/IntegratorFactory.hpp"

#include <string>
#include <vector>

#include "core/Error.hpp"
#include "integrators/FemAsync.hpp"
#include "integrators/FemBackwardEuler.hpp"
#include "integrators/FemSemiImplicit.hpp"
#include "integrators/MpmBackwardEuler.hpp"

namespace optistep {
namespace {

[[noreturn]] void Unavailable(const SceneConfig& scene, const char* discretization,
                              const std::vector<std::string>& available) {
  std::string names;
  for (const auto& n : available) names += (names.empty() ? "" : ", ") + n;
  throw InputError(scene.path + ": integrator: '" + scene.integrator + "' is not available for " +
                   discretization + " scenes (available: " + names + ")");
}

}  // namespace

std::unique_ptr<Integrator> CreateFemIntegrator(const SceneConfig& scene, FemModel& model, Vec x,
                                                Vec v) {
  if (scene.integrator == "backward_euler") return std::make_unique<FemBackwardEuler>(model, x, v);
  if (scene.integrator == "semi_implicit") return std::make_unique<FemSemiImplicit>(model, x, v);
  if (scene.integrator == "async") return std::make_unique<FemAsync>(model, x, v);
  Unavailable(scene, "FEM", {"backward_euler", "semi_implicit", "async"});
}

std::unique_ptr<Integrator> CreateMpmIntegrator(const SceneConfig& scene, mpm::MpmDomain& domain,
                                                const mpm::MpmModel& model) {
  if (scene.integrator == "backward_euler")
    return std::make_unique<MpmBackwardEuler>(scene, domain, model);
  Unavailable(scene, "MPM", {"backward_euler"});
}

}  // namespace optistep
