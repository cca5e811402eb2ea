#include "materials/RotationVariantSVD.hpp"

#include <cmath>
#include <limits>
#include <utility>

namespace optistep {

namespace {

// A pair of columns counts as orthogonal when |b_p . b_q| <= kTolerance |b_p| |b_q|.
constexpr double kTolerance = std::numeric_limits<double>::epsilon();
// The Jacobi sweeps converge quadratically and end after a few; the cap only bounds the
// work on a NaN or Inf.
constexpr int kMaxSweeps = 12;
// With entries within [2^-128, 2^128], the products of squared column norms in the
// orthogonality test cannot overflow, nor underflow for the largest column.
constexpr int kMaxExponent = 128;

// The rotation of columns p and q by (c, s): (x_p, x_q) <- (c x_p - s x_q, s x_p + c x_q).
inline void RotateColumns(Mat3* X, int p, int q, double c, double s) {
  double* x_p = X->col(p).data();
  double* x_q = X->col(q).data();
  const double x0 = x_p[0], x1 = x_p[1], x2 = x_p[2];
  const double y0 = x_q[0], y1 = x_q[1], y2 = x_q[2];
  x_p[0] = c * x0 - s * y0;
  x_p[1] = c * x1 - s * y1;
  x_p[2] = c * x2 - s * y2;
  x_q[0] = s * x0 + c * y0;
  x_q[1] = s * x1 + c * y1;
  x_q[2] = s * x2 + c * y2;
}

// The Jacobi rotation of columns p and q of B (and V with kWithV) that makes them
// orthogonal, unless they are already; returns whether it rotated. n holds the squared
// column norms of B and is updated.
template <int p, int q, bool kWithV>
inline bool JacobiRotation(Mat3* B, Mat3* V, Vec3* n) {
  const double gamma = B->col(p).dot(B->col(q));
  if (gamma * gamma <= kTolerance * kTolerance * (*n)(p) * (*n)(q)) return false;
  // t = tan(theta) is the root of smaller magnitude of t^2 + 2 zeta t - 1 = 0 with
  // zeta = (n_q - n_p) / (2 gamma), written without the quotient zeta so that n_q = n_p
  // needs no special case.
  const double d = (*n)(q) - (*n)(p);
  const double two_gamma = 2.0 * gamma;
  const double t =
      std::copysign(1.0, d) * two_gamma / (std::abs(d) + std::sqrt(d * d + two_gamma * two_gamma));
  const double c = 1.0 / std::sqrt(1.0 + t * t);
  const double s = c * t;
  RotateColumns(B, p, q, c, s);
  if (kWithV) RotateColumns(V, p, q, c, s);
  (*n)(p) = B->col(p).squaredNorm();
  (*n)(q) = B->col(q).squaredNorm();
  return true;
}

// One-sided Jacobi: cyclic sweeps over the column pairs of B until a sweep finds them all
// orthogonal; n receives the squared column norms.
template <bool kWithV>
void OrthogonalizeColumns(Mat3* B, Mat3* V, Vec3* n) {
  for (int j = 0; j < 3; ++j) (*n)(j) = B->col(j).squaredNorm();
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    const bool rotated01 = JacobiRotation<0, 1, kWithV>(B, V, n);
    const bool rotated02 = JacobiRotation<0, 2, kWithV>(B, V, n);
    const bool rotated12 = JacobiRotation<1, 2, kWithV>(B, V, n);
    if (!(rotated01 || rotated02 || rotated12)) break;
  }
}

// Swaps columns i and j of B and V and negates the new column j of both: B = F V still
// holds and det V is unchanged.
void SwapColumns(Mat3* B, Mat3* V, Vec3* n, int i, int j) {
  B->col(i).swap(B->col(j));
  V->col(i).swap(V->col(j));
  B->col(j) = -B->col(j);
  V->col(j) = -V->col(j);
  std::swap((*n)(i), (*n)(j));
}

// The Givens rotation in rows (p, q) of R that zeroes R(q, p), applied to R and
// accumulated into the columns of U; an identity when both entries are zero.
void GivensStep(Mat3* R, Mat3* U, int p, int q) {
  const double a = (*R)(p, p), b = (*R)(q, p);
  const double r = std::sqrt(a * a + b * b);
  if (r == 0.0) return;
  const double c = a / r, s = b / r;
  for (int j = 0; j < 3; ++j) {
    const double x = (*R)(p, j), y = (*R)(q, j);
    (*R)(p, j) = c * x + s * y;
    (*R)(q, j) = c * y - s * x;
  }
  RotateColumns(U, p, q, c, -s);
}

// 2^-e with e the binary exponent of F's largest entry when that lies outside
// [2^-kMaxExponent, 2^kMaxExponent], else 1 (so ordinary F are not touched); 0 for F = 0.
int ScalingExponent(const Mat3& F) {
  const double m = F.cwiseAbs().maxCoeff();
  if (m == 0.0 || !std::isfinite(m)) return 0;
  const int e = std::ilogb(m);
  return (e > kMaxExponent || e < -kMaxExponent) ? -e : 0;
}

}  // namespace

RotationVariantSVD ComputeRotationVariantSVD(const Mat3& F) {
  const int e = ScalingExponent(F);
  Mat3 B = e == 0 ? F : Mat3(F * std::ldexp(1.0, e));
  RotationVariantSVD r{Mat3::Identity(), Vec3::Zero(), Mat3::Identity()};
  Vec3 n;
  OrthogonalizeColumns<true>(&B, &r.V, &n);
  if (n(0) < n(1)) SwapColumns(&B, &r.V, &n, 0, 1);
  if (n(0) < n(2)) SwapColumns(&B, &r.V, &n, 0, 2);
  if (n(1) < n(2)) SwapColumns(&B, &r.V, &n, 1, 2);
  GivensStep(&B, &r.U, 0, 1);
  GivensStep(&B, &r.U, 0, 2);
  GivensStep(&B, &r.U, 1, 2);
  r.sigma = n.cwiseSqrt();
  // det U = det V = 1, so det F = R_00 R_11 R_22 with R_00, R_11 >= 0.
  if (B(2, 2) < 0.0) r.sigma(2) = -r.sigma(2);
  if (e != 0) r.sigma *= std::ldexp(1.0, -e);
  return r;
}

Vec3 RotationVariantSingularValues(const Mat3& F) {
  const int e = ScalingExponent(F);
  Mat3 B = e == 0 ? F : Mat3(F * std::ldexp(1.0, e));
  // The sign from the determinant of the scaled F, which cannot over- or underflow.
  const bool inverted = B.determinant() < 0.0;
  Vec3 n;
  OrthogonalizeColumns<false>(&B, nullptr, &n);
  // The order of ComputeRotationVariantSVD's swaps, on the norms alone.
  if (n(0) < n(1)) std::swap(n(0), n(1));
  if (n(0) < n(2)) std::swap(n(0), n(2));
  if (n(1) < n(2)) std::swap(n(1), n(2));
  Vec3 sigma = n.cwiseSqrt();
  if (inverted) sigma(2) = -sigma(2);
  if (e != 0) sigma *= std::ldexp(1.0, -e);
  return sigma;
}

}  // namespace optistep
