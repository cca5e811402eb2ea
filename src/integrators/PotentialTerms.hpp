#pragma once
// Scene terms that only the incremental potential (src/fem/FemIncrementalPotential) carries:
// the `loads:` (src/fem/FemLoads), IPC's friction potential, the self-contact penalty
// (src/fem/SelfContact), the contact damping (src/fem/ContactDamping) and, for integrators that keep forces as functions of x alone, a
// time-dependent gravity. Integrators that step without that potential (xpbd on tets and
// particles, semi_implicit, async's substeps) refuse them instead of ignoring them.

#include <string>

#include "core/Error.hpp"
#include "io/SceneConfig.hpp"

namespace optistep {

/// Not collective. Throws InputError naming the scene and the first collision object with
/// damping > 0, the message ending in `why`.
inline void RefuseContactDamping(const SceneConfig& scene, const std::string& why) {
  for (std::size_t i = 0; i < scene.collision_objects.size(); ++i)
    if (scene.collision_objects[i].damping > 0.0)
      throw InputError(scene.path + ": collision_objects[" + std::to_string(i) + "].damping:" + why);
}

/// Not collective (every rank reads the same scene). Throws InputError naming the scene, the
/// key and `integrator` for loads, friction.model potential, self_contact
/// enabled, a collision object's damping > 0, and, unless time_dependent_gravity, a gravity_time_function.
inline void RefusePotentialOnlyTerms(const SceneConfig& scene, bool time_dependent_gravity) {
  const std::string with = " is not available with integrator: " + ToString(scene.integrator) +
                           (scene.discretization == Discretization::kParticles ? " on particles" : "");
  if (!scene.loads.empty())
    throw InputError(scene.path + ": loads:" + with +
                     " (backward_euler and quasi_static take them)");
  if (scene.friction.model == FrictionModel::kPotential)
    throw InputError(scene.path + ": friction.model: '" + ToString(scene.friction.model) + "'" + with +
                     " (leave friction.model out)");
  if (scene.self_contact.enabled)
    throw InputError(scene.path + ": self_contact.enabled:" + with +
                     " (backward_euler and quasi_static take it)");
  RefuseContactDamping(scene, with + " (backward_euler takes it)");
  const TimeFunctionConfig& tau = scene.gravity_time_function;
  const bool unit = tau.kind == TimeFunctionConfig::Kind::kConstant && tau.value == 1.0;
  if (!time_dependent_gravity && !unit)
    throw InputError(scene.path + ": gravity_time_function:" + with +
                     " (constant gravity only here)");
}

}  // namespace optistep
