#pragma once
// The MPM model of a scene, besides its particles (mpm/MpmDomain): the per-body elastic
// materials and plasticity (particles index them by body), and the collision objects
// that project grid nodes (static or scripted). Built once from the scene.
#include <cstdint>
#include <memory>
#include <vector>

#include "io/SceneSections.hpp"
#include "materials/Material.hpp"
#include "model/CollisionObject.hpp"
#include "mpm/Plasticity.hpp"

namespace optistep::mpm {

/// A dead force on one particle per unit of its load's time function: the particle of
/// global id `id` carries tau_load(t) force (N) (MPM tractions and pressures,
/// mpm/MpmLoads.hpp).
struct ParticleForce {
  std::int64_t id = 0;
  int load = 0;  ///< index into the scene's loads
  Vec3 force = Vec3::Zero();
};

struct MpmModel {
  /// Not collective. InputError for a plasticity model's bad parameters, naming the key.
  explicit MpmModel(const ModelConfig& scene);

  std::vector<std::unique_ptr<ElasticMaterial>> owned_materials;
  MaterialTable materials;                    ///< per body
  std::vector<PlasticityParameters> plasticity;  ///< per body
  /// The scene's collision objects, in order; posed per call (SignedDistanceAt, VelocityAt).
  std::vector<CollisionObject> objects;
  /// The traction and pressure loads on particles, sorted by (id, load); empty without
  /// such loads. Set by the simulation after sampling (mpm::TractionParticleForces).
  std::vector<ParticleForce> particle_forces;
};

}  // namespace optistep::mpm
