#pragma once
// Small-strain linear elasticity, for verification against analytic solutions. Not
// rotation invariant: use it only where displacements and rotations are small.
#include "materials/Material.hpp"

namespace optistep {

/// eps = (F + F^T)/2 - I,  Psi = mu eps:eps + lambda/2 tr(eps)^2,
/// P = 2 mu eps + lambda tr(eps) I,
/// dP_ij/dF_kl = C_ijkl = mu (delta_ik delta_jl + delta_il delta_jk) + lambda delta_ij delta_kl,
/// constant. C has eigenvalues 2 mu (5 shear modes), 3 lambda + 2 mu = 3 x bulk modulus
/// (mode vec I / sqrt 3) and 0 (the 3 skew modes). The projection drops the volume mode
/// when 3 lambda + 2 mu < 0, which no (E > 0, -1 < nu < 0.5) gives; it assumes mu >= 0.
class LinearElasticity final : public ElasticMaterial {
 public:
  static constexpr const char* kName = "linear";

  explicit LinearElasticity(LameParameters lame);
  std::string Name() const override { return kName; }
  double Psi(const Mat3& F) const override;
  double PsiAndP(const Mat3& F, Mat3* P) const override;
  Mat9 dPdF(const Mat3& F, bool project_spd) const override;

 private:
  Mat9 C_;            // dP/dF (Pa)
  Mat9 C_projected_;  // C with its negative eigenvalue, if any, clamped to 0 (Pa)
};

}  // namespace optistep
