#include "mpm/Shapes.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/Error.hpp"

namespace optistep::mpm {

namespace {

std::string Text(const Vec3& v) {
  std::ostringstream out;
  out.precision(17);
  out << "(" << v.x() << ", " << v.y() << ", " << v.z() << ")";
  return out.str();
}

std::string Text(double x) {
  std::ostringstream out;
  out.precision(17);
  out << x;
  return out.str();
}

}  // namespace

void Primitive::Require(bool ok, const std::string& parameter, double value,
                        const std::string& expected) const {
  if (!ok) throw InputError(name_ + ": " + parameter + " = " + Text(value) + ", expected " + expected);
}

void Primitive::RequireLength(double length, const std::string& parameter) const {
  Require(length > 0.0 && std::isfinite(length), parameter, length, "a positive finite length (m)");
}

void Primitive::RequireFinite(const Vec3& v, const std::string& parameter) const {
  if (!v.allFinite())
    throw InputError(name_ + ": " + parameter + " = " + Text(v) + ", expected finite coordinates");
}

// ---- Box ---------------------------------------------------------------------------

Box::Box(const Vec3& min, const Vec3& max, std::string name)
    : Primitive(std::move(name)), min_(min), max_(max) {
  RequireFinite(min, "min");
  RequireFinite(max, "max");
  for (int d = 0; d < 3; ++d) {
    if (!(min[d] < max[d]))
      throw InputError(Name() + ": min = " + Text(min) + ", max = " + Text(max) + ", expected min < max in " +
                       "xyz"[d] + " (a box of positive volume)");
  }
}

bool Box::Inside(const Vec3& x) const {
  return (x.array() > min_.array()).all() && (x.array() < max_.array()).all();
}

double Box::SignedDistance(const Vec3& x) const {
  const Vec3 q = (x - 0.5 * (min_ + max_)).cwiseAbs() - 0.5 * (max_ - min_);
  return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
}

// ---- Sphere ------------------------------------------------------------------------

Sphere::Sphere(const Vec3& center, double radius, std::string name)
    : Primitive(std::move(name)), center_(center), radius_(radius) {
  RequireFinite(center, "center");
  RequireLength(radius, "radius");
}

bool Sphere::Inside(const Vec3& x) const { return (x - center_).squaredNorm() < radius_ * radius_; }

Aabb Sphere::Bounds() const {
  return {center_.array() - radius_, center_.array() + radius_};
}

double Sphere::SignedDistance(const Vec3& x) const { return (x - center_).norm() - radius_; }

// ---- Solids of revolution -----------------------------------------------------------

RevolvedPrimitive::RevolvedPrimitive(const Vec3& center, const Vec3& axis, std::string name)
    : Primitive(std::move(name)), center_(center) {
  RequireFinite(center, "center");
  const double length = axis.norm();
  if (!(length > 0.0) || !std::isfinite(length))
    throw InputError(Name() + ": axis = " + Text(axis) + ", expected a non-zero finite vector");
  axis_ = axis / length;
}

Eigen::Vector2d RevolvedPrimitive::RadialAxial(const Vec3& x) const {
  const Vec3 p = x - center_;
  const double h = p.dot(axis_);
  return {(p - h * axis_).norm(), h};
}

Vec3 RevolvedPrimitive::CircleHalfExtent() const {
  return (Vec3::Ones() - axis_.cwiseAbs2()).cwiseMax(0.0).cwiseSqrt();
}

Cylinder::Cylinder(const Vec3& center, const Vec3& axis, double radius, double half_length,
                   std::string name)
    : RevolvedPrimitive(center, axis, std::move(name)), radius_(radius), half_length_(half_length) {
  RequireLength(radius, "radius");
  RequireLength(half_length, "half_length");
}

Aabb Cylinder::Bounds() const {
  const Vec3 half = half_length_ * axis_.cwiseAbs() + radius_ * CircleHalfExtent();
  return {center_ - half, center_ + half};
}

double Cylinder::SignedDistance(const Vec3& x) const {
  // Distance to the rectangle |rho| < radius, |h| < half_length in the (radial, axial)
  // half plane: the cylinder is that rectangle swept about the axis.
  const Eigen::Vector2d rh = RadialAxial(x);
  const Eigen::Vector2d q(rh[0] - radius_, std::abs(rh[1]) - half_length_);
  return q.cwiseMax(0.0).norm() + std::min(q.maxCoeff(), 0.0);
}

Torus::Torus(const Vec3& center, const Vec3& axis, double major_radius, double minor_radius,
             std::string name)
    : RevolvedPrimitive(center, axis, std::move(name)),
      major_radius_(major_radius),
      minor_radius_(minor_radius) {
  RequireLength(major_radius, "major_radius");
  Require(minor_radius > 0.0 && minor_radius < major_radius, "minor_radius", minor_radius,
          "0 < minor_radius < major_radius = " + Text(major_radius) + " (a ring torus)");
}

Aabb Torus::Bounds() const {
  const Vec3 half = (major_radius_ * CircleHalfExtent()).array() + minor_radius_;
  return {center_ - half, center_ + half};
}

double Torus::SignedDistance(const Vec3& x) const {
  const Eigen::Vector2d rh = RadialAxial(x);
  return std::hypot(rh[0] - major_radius_, rh[1]) - minor_radius_;
}

// ---- AabbGrid ----------------------------------------------------------------------

AabbGrid::AabbGrid(const std::vector<Aabb>& items, double items_per_bin) {
  bounds_ = items.front();
  for (const Aabb& box : items) {
    bounds_.lo = bounds_.lo.cwiseMin(box.lo);
    bounds_.hi = bounds_.hi.cwiseMax(box.hi);
  }
  // Items are listed in every bin their box enlarged by `pad` overlaps, so a query point
  // rounded into a neighbouring bin still finds an item it touches.
  const double scale = std::max((bounds_.hi - bounds_.lo).maxCoeff(), 1e-300);
  const double pad = 1e-9 * scale;
  bounds_.lo.array() -= pad;
  bounds_.hi.array() += pad;
  const Vec3 extent = bounds_.hi - bounds_.lo;

  const double bins = std::max(1.0, static_cast<double>(items.size()) / items_per_bin);
  const double volume = extent.cwiseMax(1e-3 * scale).prod();
  const double h = std::cbrt(volume / bins);
  for (int d = 0; d < 3; ++d)
    resolution_[d] = static_cast<int>(std::clamp(std::ceil(extent[d] / h), 1.0, 1024.0));
  bin_size_ = extent.cwiseQuotient(resolution_.cast<double>());

  // Compressed rows: count the items per bin, then fill each row in item order.
  const auto for_each_bin = [&](const Aabb& box, auto&& visit) {
    const Eigen::Vector3i first = BinOf(box.lo.array() - pad);
    const Eigen::Vector3i last = BinOf(box.hi.array() + pad);
    Eigen::Vector3i b;
    for (b.z() = first.z(); b.z() <= last.z(); ++b.z())
      for (b.y() = first.y(); b.y() <= last.y(); ++b.y())
        for (b.x() = first.x(); b.x() <= last.x(); ++b.x()) visit(Index(b));
  };
  start_.assign(static_cast<std::size_t>(resolution_.prod()) + 1, 0);
  for (const Aabb& box : items) for_each_bin(box, [&](int bin) { ++start_[bin + 1]; });
  for (std::size_t b = 1; b < start_.size(); ++b) start_[b] += start_[b - 1];
  items_.resize(start_.back());
  std::vector<int> next(start_.begin(), start_.end() - 1);
  for (int i = 0; i < static_cast<int>(items.size()); ++i)
    for_each_bin(items[i], [&](int bin) { items_[next[bin]++] = i; });
}

Eigen::Vector3i AabbGrid::BinOf(const Vec3& x) const {
  Eigen::Vector3i b;
  for (int d = 0; d < 3; ++d) {
    const double t = std::floor((x[d] - bounds_.lo[d]) / bin_size_[d]);
    b[d] = static_cast<int>(std::clamp(t, 0.0, static_cast<double>(resolution_[d] - 1)));
  }
  return b;
}

}  // namespace optistep::mpm
