#include "fem/ContactDistance.hpp"

#include <cmath>

namespace optistep {
namespace {

/// A value with its gradient and Hessian in the 12 coordinates (p, a, b, c): forward
/// second-order differentiation of the rational expressions of the squared distances.
struct Second {
  double v = 0.0;
  Vec12 g = Vec12::Zero();
  Mat12 h = Mat12::Zero();
};

Second operator+(const Second& x, const Second& y) { return {x.v + y.v, x.g + y.g, x.h + y.h}; }
Second operator-(const Second& x, const Second& y) { return {x.v - y.v, x.g - y.g, x.h - y.h}; }
Second operator*(const Second& x, const Second& y) {
  Second r;
  r.v = x.v * y.v;
  r.g = x.g * y.v + y.g * x.v;
  r.h = x.h * y.v + y.h * x.v + x.g * y.g.transpose() + y.g * x.g.transpose();
  return r;
}
Second operator/(const Second& x, const Second& y) {
  Second inv;  // 1/y
  inv.v = 1.0 / y.v;
  inv.g = -y.g * (inv.v * inv.v);
  inv.h = -y.h * (inv.v * inv.v) + (2.0 * inv.v * inv.v * inv.v) * (y.g * y.g.transpose());
  return x * inv;
}

using SecondVec = std::array<Second, 3>;

SecondVec Variable(const Vec3& x, int node) {
  SecondVec r;
  for (int d = 0; d < 3; ++d) {
    r[d].v = x[d];
    r[d].g[3 * node + d] = 1.0;
  }
  return r;
}
SecondVec Minus(const SecondVec& x, const SecondVec& y) { return {x[0] - y[0], x[1] - y[1], x[2] - y[2]}; }
Second Dot(const SecondVec& x, const SecondVec& y) { return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]; }
SecondVec Cross(const SecondVec& x, const SecondVec& y) {
  return {x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]};
}

}  // namespace

ClosestFeature ClosestTriangleFeature(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c,
                                      double* squared_distance) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  auto done = [&](ClosestFeature f, const Vec3& q) {
    *squared_distance = (p - q).squaredNorm();
    return f;
  };
  if (d1 <= 0.0 && d2 <= 0.0) return done({1, {0, 0, 0}}, a);
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return done({1, {1, 0, 0}}, b);
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return done({2, {0, 1, 0}}, a + d1 / (d1 - d3) * ab);
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return done({1, {2, 0, 0}}, c);
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return done({2, {0, 2, 0}}, a + d2 / (d2 - d6) * ac);
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0)
    return done({2, {1, 2, 0}}, b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b));
  const double denom = 1.0 / (va + vb + vc);
  return done({3, {0, 1, 2}}, a + ab * (vb * denom) + ac * (vc * denom));
}

double FeatureSquaredDistance(const ClosestFeature& f, const Vec3& p, const Vec3& a, const Vec3& b,
                              const Vec3& c, Vec12* gradient, Mat12* hessian) {
  const Vec3* corners[3] = {&a, &b, &c};
  const SecondVec P = Variable(p, 0);
  SecondVec X[3];
  for (int k = 0; k < f.count; ++k) X[k] = Variable(*corners[f.nodes[k]], 1 + f.nodes[k]);
  Second d;
  if (f.count == 1) {  // |p - x0|^2
    const SecondVec r = Minus(P, X[0]);
    d = Dot(r, r);
  } else if (f.count == 2) {  // |(p - x0) x e|^2 / |e|^2, e = x1 - x0
    const SecondVec e = Minus(X[1], X[0]);
    const SecondVec n = Cross(Minus(P, X[0]), e);
    d = Dot(n, n) / Dot(e, e);
  } else {  // ((p - x0) . u)^2 / |u|^2, u = (x1 - x0) x (x2 - x0)
    const SecondVec u = Cross(Minus(X[1], X[0]), Minus(X[2], X[0]));
    const Second s = Dot(Minus(P, X[0]), u);
    d = s * s / Dot(u, u);
  }
  if (gradient) *gradient = d.g;
  if (hessian) *hessian = d.h;
  return d.v;
}

double SelfContactPenalty(double k, double d, double* first, double* second) {
  const double r = std::sqrt(d + kSelfContactEpsilon);
  if (first) *first = k * (r + 0.5 * d / r);
  if (second) *second = k * (1.0 / r - 0.25 * d / (r * r * r));
  return k * d * r;
}

}  // namespace optistep
