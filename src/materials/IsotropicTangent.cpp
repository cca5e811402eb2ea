#include "materials/IsotropicTangent.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <Eigen/LU>

namespace optistep {

Mat3 Cofactor(const Mat3& F) {
  Mat3 cof;
  cof.col(0) = F.col(1).cross(F.col(2));
  cof.col(1) = F.col(2).cross(F.col(0));
  cof.col(2) = F.col(0).cross(F.col(1));
  return cof;
}

void AddVolumeTerm(const Vec3& sigma, double lambda, double J_rest,
                   IsotropicTangentBlocks* blocks) {
  const double J = sigma.prod();
  const Vec3 g(sigma(1) * sigma(2), sigma(0) * sigma(2), sigma(0) * sigma(1));
  Mat3 d2J_dsigma2;
  d2J_dsigma2 << 0.0, sigma(2), sigma(1),
                 sigma(2), 0.0, sigma(0),
                 sigma(1), sigma(0), 0.0;
  const double lambda_dJ = lambda * (J - J_rest);
  blocks->d2psi_dsigma2 += lambda * g * g.transpose() + lambda_dJ * d2J_dsigma2;
  blocks->stretch -= lambda_dJ * sigma;
  blocks->twist += lambda_dJ * sigma;
}

Mat9 AssembleIsotropicTangent(const RotationVariantSVD& svd, IsotropicTangentBlocks blocks,
                              bool project_spd) {
  if (project_spd) {
    const Mat3& A = blocks.d2psi_dsigma2;
    // Sylvester's criterion spares the eigen-solve (half the cost of the projection) in
    // the common case of an already positive definite block.
    const bool positive_definite = A(0, 0) > 0.0 &&
                                   A(0, 0) * A(1, 1) - A(0, 1) * A(1, 0) > 0.0 &&
                                   A.determinant() > 0.0;
    if (!positive_definite) {
      const Eigen::SelfAdjointEigenSolver<Mat3> eig(A);
      blocks.d2psi_dsigma2 = eig.eigenvectors() *
                             eig.eigenvalues().cwiseMax(0.0).asDiagonal() *
                             eig.eigenvectors().transpose();
    }
    blocks.stretch = blocks.stretch.cwiseMax(0.0);
    blocks.twist = blocks.twist.cwiseMax(0.0);
  }
  // W = V (x) U: W(k + 3l, i + 3j) = U_ki V_lj, so column i + 3j is vec(u_i v_j^T).
  Mat9 W;
  for (int j = 0; j < 3; ++j)
    for (int l = 0; l < 3; ++l) W.block<3, 3>(3 * l, 3 * j) = svd.V(l, j) * svd.U;

  // W H_hat, column by column: H_hat has 21 nonzeros, 9 of them in the diagonal block on
  // the indices 0, 4, 8 of (F_hat_00, F_hat_11, F_hat_22).
  const Mat3& A = blocks.d2psi_dsigma2;
  Mat9 WH;
  for (int i = 0; i < 3; ++i)
    WH.col(4 * i) = W.col(0) * A(0, i) + W.col(4) * A(1, i) + W.col(8) * A(2, i);
  for (int k = 0; k < 3; ++k) {
    const int i = (k + 1) % 3, j = (k + 2) % 3;
    const int ij = i + 3 * j, ji = j + 3 * i;
    // [[a, b], [b, a]] has eigenvalue a + b on (1, 1) and a - b on (1, -1).
    const double a = 0.5 * (blocks.stretch(k) + blocks.twist(k));
    const double b = 0.5 * (blocks.stretch(k) - blocks.twist(k));
    WH.col(ij) = a * W.col(ij) + b * W.col(ji);
    WH.col(ji) = b * W.col(ij) + a * W.col(ji);
  }
  const Mat9 dPdF = WH * W.transpose();
  // Bitwise symmetric, so that a Hessian assembled from it is symmetric to the last bit.
  return 0.5 * (dPdF + dPdF.transpose());
}

}  // namespace optistep
