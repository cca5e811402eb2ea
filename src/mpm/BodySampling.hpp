#pragma once
// The particles of a scene's bodies (mpm.dx, mpm.ppc, mpm.seed): each body's solid (a tet
// mesh, a closed surface or a shape) sampled in world space (mpm/Sampling.hpp), with its
// material and initial conditions (model/InitialConditions.hpp).
#include <vector>

#include "core/AvailableMemory.hpp"
#include "io/SceneSections.hpp"
#include "mpm/MemoryEstimate.hpp"
#include "mpm/MpmModel.hpp"
#include "mpm/Particles.hpp"

namespace optistep::mpm {

/// Samples every body of `scene` in world space, on the grid and particle count of `mpm`
/// (the inverse transform maps a candidate to the body frame). Particle ids are 0..N-1 in body order, then sampling order. First,
/// before any particle is allocated, refuses (InputError) a scene whose estimated memory
/// (mpm/MemoryEstimate.hpp, on `ranks` ranks, into *estimate) exceeds what is available.
/// With tractions or pressures, also their particle forces (TractionParticleForces,
/// mpm/MpmLoads.hpp, from the sampled rest positions) into *forces. Rank-local, not
/// collective (a run calls it on rank 0). InputError naming the scene and the body for a
/// body that holds no particle.
Particles SampleBodies(const ModelConfig& scene, const MpmConfig& mpm, const AvailableMemory& available, int ranks,
                       MemoryEstimate* estimate, std::vector<ParticleForce>* forces);

}  // namespace optistep::mpm
