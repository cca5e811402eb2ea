#pragma once
// Linear (P1) tetrahedron kernels. With reference shape matrix Dm = [X1-X0, X2-X0, X3-X0]
// and deformed Ds = [x1-x0, x2-x0, x3-x0], F = Ds Dm^{-1} (Sifakis and Barbic 2012,
// "FEM simulation of 3D deformable solids", Sec. 4). Writing F = sum_a x_a beta_a^T with
// beta_a = (Dm^{-1})^T e_a for a = 1..3 and beta_0 = -(beta_1 + beta_2 + beta_3):
//   dPsi/dx_a = V P beta_a,   d^2(V Psi)/dx_a dx_b = V (beta_a^T (x) I) dP/dF (beta_b (x) I).
#include <array>

#include "core/Types.hpp"
#include "materials/Material.hpp"

namespace optistep {

/// The four shape-function gradients beta_a (1/m) of a tet, as the columns of a 3x4 matrix.
inline Eigen::Matrix<double, 3, 4> ShapeGradients(const Mat3& Dm_inv) {
  Eigen::Matrix<double, 3, 4> beta;
  beta.rightCols<3>() = Dm_inv.transpose();
  beta.col(0) = -beta.rightCols<3>().rowwise().sum();
  return beta;
}

/// The positions (m) of tet t's corners in x, 3 values per node (a local node array).
inline std::array<Vec3, 4> TetPositions(const double* x, const std::array<int, 4>& t) {
  std::array<Vec3, 4> xs;
  for (int a = 0; a < 4; ++a) xs[a] = Vec3(x[3 * t[a]], x[3 * t[a] + 1], x[3 * t[a] + 2]);
  return xs;
}

/// F = sum_a x_a beta_a^T.
inline Mat3 DeformationGradient(const std::array<Vec3, 4>& x,
                                const Eigen::Matrix<double, 3, 4>& beta) {
  Mat3 F = Mat3::Zero();
  for (int a = 0; a < 4; ++a) F += x[a] * beta.col(a).transpose();
  return F;
}

/// dF/dx as the 9x12 matrix B: vec(F) = B [x_0; x_1; x_2; x_3] (vec stacks columns).
inline Eigen::Matrix<double, 9, 12> DeformationGradientJacobian(
    const Eigen::Matrix<double, 3, 4>& beta) {
  Eigen::Matrix<double, 9, 12> B = Eigen::Matrix<double, 9, 12>::Zero();
  for (int a = 0; a < 4; ++a)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) B(i + 3 * j, 3 * a + i) = beta(j, a);
  return B;
}

/// Von Mises equivalent of the Cauchy stress sigma = P F^T / J (Pa).
inline double VonMisesStress(const Mat3& F, const Mat3& P) {
  const double J = F.determinant();
  const Mat3 sigma = P * F.transpose() / J;
  const Mat3 s = sigma - sigma.trace() / 3.0 * Mat3::Identity();
  return std::sqrt(1.5 * s.squaredNorm());
}

}  // namespace optistep
