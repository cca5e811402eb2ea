#pragma once
// Picks the time integrator of a scene by its `integrator:` key (docs/dev/ARCHITECTURE.md).
// Names: backward_euler (Gast et al. 2015: every step a minimization, for FEM and MPM);
// quasi_static (FEM: integrators/FemQuasiStatic.hpp); xpbd (Macklin et al. 2019: substeps of
// XPBD, FEM and particle scenes; integrators/FemXpbd.hpp, ChainXpbd.hpp); semi_implicit
// (Schroeder et al. 2010 Sec. 3.1, FEM: integrators/FemSemiImplicit.hpp); async (Schroeder
// et al. 2010 Secs. 4-5, FEM: integrators/FemAsync.hpp).
#include <memory>
#include <petscvec.h>

#include "fem/FemModel.hpp"
#include "integrators/Integrator.hpp"
#include "io/SceneSections.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/MpmModel.hpp"

namespace optistep {

/// Collective on the model's communicator. The FEM integrator named by scene.integrator,
/// advancing the ghosted node vectors x (m) and v (m/s) in place; InputError naming the
/// scene file and the key for a name FEM does not have.
std::unique_ptr<Integrator> CreateFemIntegrator(const IntegratorConfig& scene, FemModel& model, Vec x,
                                                Vec v);

/// Collective on comm. The integrator of a particle scene's chains and cloths (only xpbd:
/// integrators/ChainXpbd.hpp); InputError naming the scene file and the key for another name.
std::unique_ptr<Integrator> CreateParticleIntegrator(MPI_Comm comm, const IntegratorConfig& scene);

/// Collective on the domain's communicator. The MPM integrator named by scene.integrator,
/// advancing domain's particles; InputError naming the scene file and the key for a name
/// MPM does not have.
std::unique_ptr<Integrator> CreateMpmIntegrator(const IntegratorConfig& scene, mpm::MpmDomain& domain,
                                                const mpm::MpmModel& model);

}  // namespace optistep
