#pragma once
// Fixed corotated elasticity: Stomakhin, Howes, Schroeder, Teran 2012, "Energetically
// consistent invertible elasticity" (SCA 2012), Sec. 4. The project's default material.
#include "materials/Material.hpp"

namespace optistep {

/// Psi(F) = mu ||F - R||_F^2 + lambda/2 (J - 1)^2 = mu sum_i (sigma_i - 1)^2 + lambda/2 (J - 1)^2,
/// P(F) = 2 mu (F - R) + lambda (J - 1) cof(F),
/// with R = U V^T and sigma from the rotation-variant SVD (U, V rotations, sigma_2 < 0 for
/// inverted F), so Psi, P and dP/dF are defined for inverted and degenerate F.
/// In the SVD eigen-system (IsotropicTangent.hpp) the pair eigenvalues are
///   stretch_k = 2 mu - lambda (J - 1) sigma_k,
///   twist_k = 2 mu (1 - 2 / (sigma_i + sigma_j)) + lambda (J - 1) sigma_k.
/// sigma_i + sigma_j >= 0 by the SVD's ordering; where it vanishes R is not unique and the
/// true twist eigenvalue is -infinity, so the sum is floored at kMinPairSum.
class FixedCorotated final : public ElasticMaterial {
 public:
  static constexpr const char* kName = "fixed_corotated";
  /// Floor of sigma_i + sigma_j in twist_k (dimensionless).
  static constexpr double kMinPairSum = 1e-6;

  explicit FixedCorotated(LameParameters lame) : ElasticMaterial(lame) {}
  std::string Name() const override { return kName; }
  double Psi(const Mat3& F) const override;
  double PsiAndP(const Mat3& F, Mat3* P) const override;
  Mat9 dPdF(const Mat3& F, bool project_spd) const override;
};

}  // namespace optistep
