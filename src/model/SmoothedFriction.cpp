#include "model/SmoothedFriction.hpp"

namespace optistep {

double SmoothedFriction(double scale, const Vec3& u, const Mat3& T, double e, Vec3* gradient,
                        Mat3* hessian) {
  const double y = u.norm();
  // IPC eq. 14-15: f_0, f_1 / y (finite at y = 0) and f_2 = f_0''.
  const bool smooth = y < e;
  const double f0 = smooth ? y * y * (1.0 - y / (3.0 * e)) / e + e / 3.0 : y;
  const double f1_over_y = smooth ? (2.0 - y / e) / e : 1.0 / y;
  if (gradient) *gradient += scale * f1_over_y * u;
  if (hessian) {
    Mat3 H = f1_over_y * T;
    if (y > 0.0) {
      const double f2 = smooth ? (2.0 - 2.0 * y / e) / e : 0.0;
      const Vec3 s = u / y;
      H += (f2 - f1_over_y) * s * s.transpose();
    }
    *hessian += scale * H;
  }
  return scale * f0;
}

}  // namespace optistep
