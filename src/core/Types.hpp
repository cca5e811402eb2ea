#pragma once
// Small dense types used across optistep (Eigen, column-major).
#include <Eigen/Core>
#include <Eigen/Geometry>  // cross, unitOrthogonal, AngleAxis
#include <Eigen/LU>        // determinant, inverse

namespace optistep {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
/// dP/dF as a 9x9 matrix acting on vec(F), vec() stacking columns (Eigen's storage):
/// entry (i + 3 j, k + 3 l) is dP_ij / dF_kl.
using Mat9 = Eigen::Matrix<double, 9, 9>;
using Vec9 = Eigen::Matrix<double, 9, 1>;
using Mat12 = Eigen::Matrix<double, 12, 12>;
using Vec12 = Eigen::Matrix<double, 12, 1>;

}  // namespace optistep
