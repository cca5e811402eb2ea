#pragma once
// The MPM model of a scene, besides its particles (mpm/MpmDomain): the per-body elastic
// materials and plasticity (particles index them by body), and the collision objects
// that project grid nodes (static or scripted). Built once from the scene.
#include <memory>
#include <vector>

#include "io/SceneConfig.hpp"
#include "materials/Material.hpp"
#include "model/MovingObject.hpp"
#include "mpm/Plasticity.hpp"

namespace optistep::mpm {

struct MpmModel {
  /// Not collective. InputError for a plasticity model's bad parameters, naming the key.
  explicit MpmModel(const SceneConfig& scene);

  std::vector<std::unique_ptr<ElasticMaterial>> owned_materials;
  MaterialTable materials;                    ///< per body
  std::vector<PlasticityParameters> plasticity;  ///< per body
  std::vector<MovingObject> objects;          ///< the scene's collision objects, in order
};

}  // namespace optistep::mpm
