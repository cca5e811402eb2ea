#include "integrators/IntegratorFactory.hpp"

#include <string>
#include <vector>

#include "core/Error.hpp"
#include "integrators/FemAsync.hpp"
#include "integrators/FemBackwardEuler.hpp"
#include "integrators/FemQuasiStatic.hpp"
#include "integrators/ChainXpbd.hpp"
#include "integrators/FemXpbd.hpp"
#include "integrators/FemSemiImplicit.hpp"
#include "integrators/MpmBackwardEuler.hpp"
#include "integrators/PotentialTerms.hpp"

namespace optistep {
namespace {

[[noreturn]] void Unavailable(const SceneConfig& scene, const char* discretization,
                              const std::vector<std::string>& available) {
  std::string names;
  for (const auto& n : available) names += (names.empty() ? "" : ", ") + n;
  throw InputError(scene.path + ": integrator: '" + ToString(scene.integrator) + "' is not available for " +
                   discretization + " scenes (available: " + names + ")");
}

}  // namespace

std::unique_ptr<Integrator> CreateFemIntegrator(const SceneConfig& scene, FemModel& model, Vec x,
                                                Vec v) {
  if (scene.integrator == IntegratorKind::kBackwardEuler) return std::make_unique<FemBackwardEuler>(model, x, v);
  if (scene.integrator == IntegratorKind::kQuasiStatic) {
    if (scene.self_contact.friction > 0.0)  // friction after the solve acts on velocities
      throw InputError(scene.path + ": self_contact.friction: is not available with integrator: "
                       "quasi_static, which has no velocities (leave it out or 0)");
    // Quasi-static steps have no velocity: a dashpot would only resist each load step.
    RefuseContactDamping(scene, " is not available with integrator: quasi_static (no velocities)");
    return std::make_unique<FemQuasiStatic>(model, x, v);
  }
  // XPBD steps by constraint projections (gravity taken per step), semi_implicit and
  // async's substeps by forces of x alone: none minimizes the potential that holds the loads.
  if (scene.integrator == IntegratorKind::kXpbd) {
    RefusePotentialOnlyTerms(scene, /*time_dependent_gravity=*/true);
    return std::make_unique<FemXpbd>(model, x, v);
  }
  if (scene.integrator == IntegratorKind::kSemiImplicit || scene.integrator == IntegratorKind::kAsync) {
    RefusePotentialOnlyTerms(scene, /*time_dependent_gravity=*/false);
    if (scene.integrator == IntegratorKind::kAsync) return std::make_unique<FemAsync>(model, x, v);
    return std::make_unique<FemSemiImplicit>(model, x, v);
  }
  Unavailable(scene, "FEM", {"backward_euler", "quasi_static", "xpbd", "semi_implicit", "async"});
}

std::unique_ptr<Integrator> CreateParticleIntegrator(MPI_Comm comm, const SceneConfig& scene) {
  if (scene.integrator == IntegratorKind::kXpbd) {
    // Chains and cloths: constant gravity, no incremental potential.
    RefusePotentialOnlyTerms(scene, /*time_dependent_gravity=*/false);
    return std::make_unique<ChainXpbd>(comm, scene);
  }
  Unavailable(scene, "particle", {"xpbd"});
}

std::unique_ptr<Integrator> CreateMpmIntegrator(const SceneConfig& scene, mpm::MpmDomain& domain,
                                                const mpm::MpmModel& model) {
  if (scene.integrator == IntegratorKind::kBackwardEuler)
    return std::make_unique<MpmBackwardEuler>(scene, domain, model);
  Unavailable(scene, "MPM", {"backward_euler"});
}

}  // namespace optistep
