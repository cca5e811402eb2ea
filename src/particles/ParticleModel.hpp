#pragma once
// The particles of a scene's chains and cloths (discretization: particles; Macklin et al.
// 2019, Secs. 6.1-6.2) and the distance constraints that join them, in scene order: the
// chains' particles, then each cloth's vertices; the chains' links in chain order, then each
// cloth's edges by vertex pair, then, with bending_compliance, its bending constraints across
// the interior edges by edge. These orders are the global ids: ParticlePartition splits the
// particles and colors the constraints by them, and XpbdParticles projects in them.
#include <array>
#include <cstdint>
#include <vector>

#include "core/Types.hpp"
#include "io/SceneSections.hpp"
#include "particles/XpbdParticles.hpp"

namespace optistep {

struct ParticleModel {
  std::vector<Vec3> x;                  ///< m, per particle
  std::vector<Vec3> v;                  ///< m/s, per particle (0 where pinned)
  std::vector<double> inverse_mass;     ///< 1/kg per particle, 0 where pinned
  /// Every constraint, by global id, with global particle ids.
  std::vector<XpbdParticles::Constraint> constraints;
  /// The cloths' triangles, global particle ids.
  std::vector<std::array<std::int64_t, 3>> triangles;
};

/// The particles of scene.chains, then of scene.cloths (each cloth's surface read from its
/// file, io/SurfaceMesh.hpp), at their initial velocities. Rank-local, not collective: every
/// rank builds the whole model. InputError naming the scene (scene_path) and the cloth for a pinned vertex
/// out of range, a zero-length edge, or a bending constraint whose opposite vertices coincide.
ParticleModel BuildParticleModel(const ParticlesConfig& scene, const std::string& scene_path);

}  // namespace optistep
