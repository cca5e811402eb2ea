#pragma once
// The 3x3 singular value decomposition of a deformation gradient, in the rotation-variant
// convention of the isotropic hyperelastic materials (FEM tets, MPM particles).
#include "core/Types.hpp"

namespace optistep {

/// F = U diag(sigma) V^T with U, V proper rotations (det +1): the rotation-variant SVD of
/// Irving, Teran, Fedkiw 2004, "Invertible finite elements", Sec. 5.
/// sigma_0 >= sigma_1 >= |sigma_2| (exactly, not only to round-off), sigma_0, sigma_1 >= 0,
/// and sigma_2 < 0 when det F < 0: a reflection is carried by the smallest singular value,
/// so that R = U V^T is the rotation of F's polar decomposition wherever det F > 0.
struct RotationVariantSVD {
  Mat3 U;
  Vec3 sigma;
  Mat3 V;
};

/// The rotation-variant SVD of F (dimensionless, any scale, any rank), the method of
/// McAdams, Selle, Tamstorf, Teran, Sifakis 2011, "Computing the Singular Value
/// Decomposition of 3x3 matrices with minimal branching and elementary floating point
/// operations" (UW-Madison TR1690), adapted to double precision:
///  - V from the Jacobi eigenanalysis of F^T F (their Sec. 2), run one-sided (Hestenes
///    1958): each rotation acts on the columns of B = F V and is computed from their
///    inner products, so the columns of B end up orthogonal to a relative 1e-16 even
///    when singular values are tiny or clustered, which the two-sided form on F^T F
///    cannot give (its small singular values are only known to eps sigma_0^2 / sigma_i);
///    exact rotation angles (the 2-by-2 symmetric Schur decomposition, Golub & Van Loan,
///    Matrix Computations, 4th ed., Sec. 8.5.2) instead of the paper's approximate
///    single-precision ones, and sweeps until every pair is orthogonal;
///  - the columns of B sorted by norm, swapped with a sign flip so that det V stays +1
///    (Sec. 3);
///  - U from the Givens QR factorization B = U R (Sec. 4), which keeps U a rotation for
///    rank-deficient F; sigma_i = |b_i|, and sigma_2 takes the sign of R_22, which is the
///    sign of det F.
/// Accuracy (tests/test_serial_rotation_variant_svd.cpp asserts 1e-14): U diag(sigma) V^T
/// = F to 2e-15 relative to |F|, U and V orthonormal to 3e-15, sigma within 3e-15 sigma_0
/// of Eigen::JacobiSVD's, also for repeated, nearly equal, tiny and zero singular values.
/// F with entries beyond 2^+-128 is scaled by a power of two first, so the squares cannot
/// over- or underflow. Rank-local, pure and thread-safe.
RotationVariantSVD ComputeRotationVariantSVD(const Mat3& F);

/// The sigma of ComputeRotationVariantSVD without U and V, for energy-only evaluations:
/// the same magnitudes to the last bit; sigma_2 < 0 exactly when det F < 0 as Eigen's
/// determinant() computes it (of F scaled by a power of two where F's entries are extreme).
Vec3 RotationVariantSingularValues(const Mat3& F);

}  // namespace optistep
