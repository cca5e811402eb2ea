#include "materials/FixedCorotated.hpp"

#include <Eigen/LU>
#include <algorithm>

#include "materials/IsotropicTangent.hpp"

namespace optistep {

double FixedCorotated::Psi(const Mat3& F) const {
  const Vec3 sigma = RotationVariantSingularValues(F);
  const double J = F.determinant();
  return lame_.mu * (sigma.array() - 1.0).square().sum() +
         0.5 * lame_.lambda * (J - 1.0) * (J - 1.0);
}

double FixedCorotated::PsiAndP(const Mat3& F, Mat3* P) const {
  const RotationVariantSVD svd = ComputeRotationVariantSVD(F);
  const Mat3 F_minus_R = F - svd.U * svd.V.transpose();
  const double J = F.determinant();
  *P = 2.0 * lame_.mu * F_minus_R + lame_.lambda * (J - 1.0) * Cofactor(F);
  return lame_.mu * F_minus_R.squaredNorm() + 0.5 * lame_.lambda * (J - 1.0) * (J - 1.0);
}

Mat9 FixedCorotated::dPdF(const Mat3& F, bool project_spd) const {
  const RotationVariantSVD svd = ComputeRotationVariantSVD(F);
  const Vec3& sigma = svd.sigma;
  const double two_mu = 2.0 * lame_.mu;
  IsotropicTangentBlocks blocks;
  blocks.d2psi_dsigma2.diagonal().setConstant(two_mu);
  blocks.stretch.setConstant(two_mu);
  for (int k = 0; k < 3; ++k) {
    const double pair_sum = std::max(sigma((k + 1) % 3) + sigma((k + 2) % 3), kMinPairSum);
    blocks.twist(k) = two_mu * (1.0 - 2.0 / pair_sum);
  }
  AddVolumeTerm(sigma, lame_.lambda, 1.0, &blocks);
  return AssembleIsotropicTangent(svd, blocks, project_spd);
}

}  // namespace optistep
