#include "materials/StableNeoHookean.hpp"

#include <Eigen/LU>
#include <cmath>

#include "materials/IsotropicTangent.hpp"

namespace optistep {

namespace {

// [v]_x, the matrix with [v]_x w = v x w.
Mat3 CrossProductMatrix(const Vec3& v) {
  Mat3 m;
  m << 0.0, -v(2), v(1),
       v(2), 0.0, -v(0),
       -v(1), v(0), 0.0;
  return m;
}

// H_J = d^2 J / dF^2 = d cof(F) / dF: column m of cof(F) is f_{m+1} x f_{m+2} (f_n the
// columns of F), so block (m, m+1) is -[f_{m+2}]_x and block (m, m+2) is [f_{m+1}]_x.
Mat9 DeterminantHessian(const Mat3& F) {
  Mat9 H_J = Mat9::Zero();
  for (int m = 0; m < 3; ++m) {
    const int n1 = (m + 1) % 3, n2 = (m + 2) % 3;
    H_J.block<3, 3>(3 * m, 3 * n1) = -CrossProductMatrix(F.col(n2));
    H_J.block<3, 3>(3 * m, 3 * n2) = CrossProductMatrix(F.col(n1));
  }
  return H_J;
}

}  // namespace

StableNeoHookean::StableNeoHookean(LameParameters lame)
    : ElasticMaterial(lame),
      mu_snh_(4.0 / 3.0 * lame.mu),
      lambda_snh_(lame.lambda + 5.0 / 6.0 * lame.mu),
      alpha_(1.0 + mu_snh_ / lambda_snh_ - mu_snh_ / (4.0 * lambda_snh_)),
      Psi_rest_(PsiSNH(3.0, 1.0)) {}

double StableNeoHookean::PsiSNH(double I_C, double J) const {
  return 0.5 * mu_snh_ * (I_C - 3.0) + 0.5 * lambda_snh_ * (J - alpha_) * (J - alpha_) -
         0.5 * mu_snh_ * std::log(I_C + 1.0);
}

double StableNeoHookean::Psi(const Mat3& F) const {
  return PsiSNH(F.squaredNorm(), F.determinant()) - Psi_rest_;
}

double StableNeoHookean::PsiAndP(const Mat3& F, Mat3* P) const {
  const double I_C = F.squaredNorm();
  const double J = F.determinant();
  *P = mu_snh_ * (1.0 - 1.0 / (I_C + 1.0)) * F + lambda_snh_ * (J - alpha_) * Cofactor(F);
  return PsiSNH(I_C, J) - Psi_rest_;
}

Mat9 StableNeoHookean::dPdF(const Mat3& F, bool project_spd) const {
  const double I_C = F.squaredNorm();
  const double shear = mu_snh_ * (1.0 - 1.0 / (I_C + 1.0));
  const double log_curvature = 2.0 * mu_snh_ / ((I_C + 1.0) * (I_C + 1.0));
  if (!project_spd) {
    const Mat3 cof = Cofactor(F);
    const Eigen::Map<const Vec9> f(F.data());
    const Eigen::Map<const Vec9> g(cof.data());
    return shear * Mat9::Identity() + log_curvature * f * f.transpose() +
           lambda_snh_ * g * g.transpose() +
           lambda_snh_ * (F.determinant() - alpha_) * DeterminantHessian(F);
  }
  const RotationVariantSVD svd = ComputeRotationVariantSVD(F);
  IsotropicTangentBlocks blocks;
  blocks.d2psi_dsigma2 =
      shear * Mat3::Identity() + log_curvature * svd.sigma * svd.sigma.transpose();
  blocks.stretch.setConstant(shear);
  blocks.twist.setConstant(shear);
  AddVolumeTerm(svd.sigma, lambda_snh_, alpha_, &blocks);
  return AssembleIsotropicTangent(svd, blocks, true);
}

}  // namespace optistep
