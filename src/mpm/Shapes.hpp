#pragma once
// Solid shapes that MPM particles are sampled from (mpm/Sampling), and the bounding-box
// bins that make inside tests on meshes fast.
//
// A Shape answers one question, "is x inside?", and gives a box that holds it. The
// primitives here (box, sphere, capped cylinder, torus) also give their exact signed
// distance; ClosedSurface (mpm/ClosedSurface) and TetMeshShape (mpm/Sampling) are the
// mesh-bounded shapes. All coordinates are world coordinates in m: a scene places a
// shape by its parameters, not by a transform.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/Types.hpp"

namespace optistep::mpm {

/// An axis-aligned box {x : lo <= x <= hi} (m), lo <= hi componentwise.
struct Aabb {
  Vec3 lo = Vec3::Zero();
  Vec3 hi = Vec3::Zero();
};

/// A solid region of space.
class Shape {
 public:
  virtual ~Shape() = default;
  /// True when x (m) lies in the open interior. Points on the boundary may go either way
  /// (they have measure zero for sampling). Thread-safe, rank-local.
  virtual bool Inside(const Vec3& x) const = 0;
  /// A box that holds every inside point (m); tight for the primitives.
  virtual Aabb Bounds() const = 0;
  /// The volume of the inside (m^3): exact for the primitives, of the mesh for the
  /// mesh-bounded shapes. What sampling at ppc particles per cell of dx^3 fills with about
  /// ppc Volume() / dx^3 particles.
  virtual double Volume() const = 0;
  /// What error messages call the shape, e.g. "sphere" or the caller's label.
  virtual const std::string& Name() const = 0;
};

/// Common part of the primitives: the exact signed distance and the label errors use.
class Primitive : public Shape {
 public:
  const std::string& Name() const override { return name_; }
  /// Exact signed distance (m) to the boundary: negative inside, positive outside.
  virtual double SignedDistance(const Vec3& x) const = 0;
  /// SignedDistance(x) < 0.
  bool Inside(const Vec3& x) const override { return SignedDistance(x) < 0.0; }

 protected:
  explicit Primitive(std::string name) : name_(std::move(name)) {}
  /// Throws InputError "<name>: <parameter> = <value>, expected <expected>" unless ok.
  void Require(bool ok, const std::string& parameter, double value, const std::string& expected) const;
  /// Throws InputError naming parameter unless 0 < length < inf.
  void RequireLength(double length, const std::string& parameter) const;
  /// Throws InputError naming parameter unless every component of v is finite.
  void RequireFinite(const Vec3& v, const std::string& parameter) const;

 private:
  std::string name_;
};

/// The box [min, max] (m). Throws InputError naming min/max when min_d > max_d or
/// min_d == max_d for some axis d, or a coordinate is not finite. `name` labels errors
/// (e.g. the scene key); it defaults to the shape kind, here and for every primitive.
class Box : public Primitive {
 public:
  Box(const Vec3& min, const Vec3& max, std::string name = "box");
  /// Compares coordinates directly, so a box whose faces lie on grid planes has every
  /// particle of every cell inside it counted exactly (no distance rounding).
  bool Inside(const Vec3& x) const override;
  Aabb Bounds() const override { return {min_, max_}; }
  double Volume() const override { return (max_ - min_).prod(); }
  double SignedDistance(const Vec3& x) const override;

 private:
  Vec3 min_, max_;
};

/// The ball |x - center| < radius (m). Throws InputError naming radius unless
/// 0 < radius < inf, or center when it is not finite.
class Sphere : public Primitive {
 public:
  Sphere(const Vec3& center, double radius, std::string name = "sphere");
  bool Inside(const Vec3& x) const override;
  Aabb Bounds() const override;
  double Volume() const override { return 4.0 / 3.0 * M_PI * radius_ * radius_ * radius_; }
  double SignedDistance(const Vec3& x) const override;

 private:
  Vec3 center_;
  double radius_;
};

/// A solid of revolution about the line through center along axis (m); axis need not be
/// unit length. Throws InputError naming axis when it is zero or not finite, center when
/// it is not finite.
class RevolvedPrimitive : public Primitive {
 protected:
  RevolvedPrimitive(const Vec3& center, const Vec3& axis, std::string name);
  /// (distance from the axis line, signed offset along the axis from center) of x (m).
  Eigen::Vector2d RadialAxial(const Vec3& x) const;
  /// Per world axis e, sqrt(1 - a_e^2) for the unit axis a: the half extent of a unit
  /// circle about the axis.
  Vec3 CircleHalfExtent() const;

  Vec3 center_;
  Vec3 axis_;  // unit
};

/// The capped cylinder of points whose distance to the axis is < radius and whose axial
/// offset from center is < half_length (m). Throws InputError naming radius or
/// half_length unless positive and finite, and what RevolvedPrimitive throws.
class Cylinder : public RevolvedPrimitive {
 public:
  Cylinder(const Vec3& center, const Vec3& axis, double radius, double half_length,
           std::string name = "cylinder");
  Aabb Bounds() const override;
  double Volume() const override { return M_PI * radius_ * radius_ * 2.0 * half_length_; }
  double SignedDistance(const Vec3& x) const override;

 private:
  double radius_, half_length_;
};

/// The ring torus: points within minor_radius r of the circle of major radius R about
/// center in the plane normal to axis (m); volume 2 pi^2 R r^2. Throws InputError naming
/// major_radius or minor_radius unless 0 < r < R < inf (r >= R is a self-intersecting
/// horn or spindle torus, refused rather than silently reinterpreted), and what
/// RevolvedPrimitive throws.
class Torus : public RevolvedPrimitive {
 public:
  Torus(const Vec3& center, const Vec3& axis, double major_radius, double minor_radius,
        std::string name = "torus");
  Aabb Bounds() const override;
  double Volume() const override {
    return 2.0 * M_PI * M_PI * major_radius_ * minor_radius_ * minor_radius_;
  }
  double SignedDistance(const Vec3& x) const override;

 private:
  double major_radius_, minor_radius_;
};

/// The bounding box of each element (triangle, tet) whose N corners index nodes.
template <std::size_t N>
std::vector<Aabb> ElementBounds(const std::vector<Vec3>& nodes,
                                const std::vector<std::array<int, N>>& elements) {
  std::vector<Aabb> boxes;
  boxes.reserve(elements.size());
  for (const auto& element : elements) {
    Aabb box{nodes[element[0]], nodes[element[0]]};
    for (std::size_t c = 1; c < N; ++c) {
      box.lo = box.lo.cwiseMin(nodes[element[c]]);
      box.hi = box.hi.cwiseMax(nodes[element[c]]);
    }
    boxes.push_back(box);
  }
  return boxes;
}

/// A uniform grid of bins over the union of a set of boxes (one per triangle or tet);
/// each bin lists the items whose box, slightly enlarged, overlaps it. Built once,
/// read-only afterwards (thread-safe queries). Rank-local.
class AabbGrid {
 public:
  /// Bins items into about items.size() / items_per_bin roughly cubic bins (at most
  /// 1024 per axis). items must not be empty.
  AabbGrid(const std::vector<Aabb>& items, double items_per_bin);

  const Aabb& Bounds() const { return bounds_; }
  const Eigen::Vector3i& Resolution() const { return resolution_; }
  const Vec3& BinSize() const { return bin_size_; }
  /// The bin holding x, clamped to the grid (x outside Bounds() maps to a border bin).
  Eigen::Vector3i BinOf(const Vec3& x) const;
  /// Number of bins, and the index in [0, NumBins()) of bin b (x fastest).
  int NumBins() const { return static_cast<int>(start_.size()) - 1; }
  int Index(const Eigen::Vector3i& b) const {
    return b.x() + resolution_.x() * (b.y() + resolution_.y() * b.z());
  }
  /// The items listed in bin b (an Index): [Begin(b), End(b)).
  const int* Begin(int b) const { return items_.data() + start_[b]; }
  const int* End(int b) const { return items_.data() + start_[b + 1]; }

 private:

  Aabb bounds_;
  Eigen::Vector3i resolution_;
  Vec3 bin_size_;
  std::vector<int> start_;  // per bin, offset into items_ (compressed rows), size #bins + 1
  std::vector<int> items_;
};

}  // namespace optistep::mpm
