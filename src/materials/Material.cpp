#include "materials/Material.hpp"

#include "core/Error.hpp"
#include "materials/FixedCorotated.hpp"
#include "materials/LinearElasticity.hpp"
#include "materials/StableNeoHookean.hpp"

namespace optistep {

LameParameters LameParameters::FromYoungPoisson(double E, double nu) {
  LameParameters lame;
  lame.mu = E / (2.0 * (1.0 + nu));
  lame.lambda = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
  return lame;
}

std::unique_ptr<ElasticMaterial> MakeMaterial(const std::string& model, LameParameters lame) {
  if (model == FixedCorotated::kName) return std::make_unique<FixedCorotated>(lame);
  if (model == StableNeoHookean::kName) return std::make_unique<StableNeoHookean>(lame);
  if (model == LinearElasticity::kName) return std::make_unique<LinearElasticity>(lame);
  throw InputError("unknown material model '" + model + "'; known models: " +
                   FixedCorotated::kName + ", " + StableNeoHookean::kName + ", " +
                   LinearElasticity::kName);
}

}  // namespace optistep
