#include "mpm/MpmModel.hpp"

#include <string>

namespace optistep::mpm {

MpmModel::MpmModel(const ModelConfig& scene) {
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const MaterialConfig& m = scene.bodies[b].material;
    owned_materials.push_back(MakeMaterial(m.model, LameParameters::FromYoungPoisson(m.E, m.nu)));
    materials.push_back(owned_materials.back().get());
    PlasticityParameters p;
    p.model = PlasticityModelFromName(m.plasticity.model);
    p.theta_c = m.plasticity.theta_c;
    p.theta_s = m.plasticity.theta_s;
    p.xi = m.plasticity.hardening;
    p.tau_Y = m.plasticity.yield_stress;
    p.Validate(scene.path + ": bodies[" + std::to_string(b) + "].material.plasticity");
    plasticity.push_back(p);
  }
  for (const auto& c : scene.collision_objects) objects.emplace_back(c);
}

}  // namespace optistep::mpm
