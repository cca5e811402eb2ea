#pragma once
// Picks the time integrator of a scene by its `integrator:` key (docs/ARCHITECTURE.md).
// Names: backward_euler (Gast et al. 2015: every step a minimization, for FEM and MPM),
// semi_implicit (Schroeder et al. 2010 Sec. 3.1, FEM: integrators/FemSemiImplicit.hpp).
// XPBD and asynchronous evolution join here as further names.
#include <memory>
#include <petscvec.h>

#include "fem/FemModel.hpp"
#include "integrators/Integrator.hpp"
#include "io/SceneConfig.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/MpmModel.hpp"

namespace optistep {

/// Collective on the model's communicator. The FEM integrator named by scene.integrator,
/// advancing the ghosted node vectors x (m) and v (m/s) in place; InputError naming the
/// scene file and the key for a name FEM does not have.
std::unique_ptr<Integrator> CreateFemIntegrator(const SceneConfig& scene, FemModel& model, Vec x,
                                                Vec v);

/// Collective on the domain's communicator. The MPM integrator named by scene.integrator,
/// advancing domain's particles; InputError naming the scene file and the key for a name
/// MPM does not have.
std::unique_ptr<Integrator> CreateMpmIntegrator(const SceneConfig& scene, mpm::MpmDomain& domain,
                                                const mpm::MpmModel& model);

}  // namespace optistep
