#include "mpm/ClosedSurface.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "core/Error.hpp"

namespace optistep::mpm {

namespace {

/// Fixed ray directions with pairwise irrational component ratios: a ray from a sample
/// point passes exactly through a mesh edge or vertex with probability zero, and the
/// three are far apart, so two of them rarely graze the same feature.
const std::array<Vec3, 3>& RayDirections() {
  static const std::array<Vec3, 3> directions = {
      Vec3(1.0, std::sqrt(2.0), std::sqrt(3.0)).normalized(),
      Vec3(-std::sqrt(5.0), 1.0, -M_PI / 3.0).normalized(),
      Vec3(std::sqrt(7.0) / 3.0, -M_E, 0.5 * std::sqrt(11.0)).normalized()};
  return directions;
}

}  // namespace

void CheckClosed(const TriangleSurface& surface, const std::string& name) {
  std::vector<std::pair<int, int>> edges;
  edges.reserve(3 * surface.triangles.size());
  for (const auto& t : surface.triangles)
    for (int c = 0; c < 3; ++c) edges.emplace_back(std::minmax(t[c], t[(c + 1) % 3]));
  std::sort(edges.begin(), edges.end());
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i;
    while (j < edges.size() && edges[j] == edges[i]) ++j;
    if (j - i != 2)
      throw InputError(name + ": surface is not closed (edge " + std::to_string(edges[i].first) + "-" +
                       std::to_string(edges[i].second) + " used by " + std::to_string(j - i) +
                       (j - i == 1 ? " triangle)" : " triangles)"));
    i = j;
  }
}

double EnclosedVolume(const TriangleSurface& surface) {
  double six_volume = 0.0;
  for (const auto& t : surface.triangles) {
    const Vec3& a = surface.vertices[t[0]];
    six_volume += a.dot(surface.vertices[t[1]].cross(surface.vertices[t[2]]));
  }
  return std::abs(six_volume) / 6.0;
}

namespace {

/// The triangles' bounding boxes, after the checks the grid and the parity test rely on.
std::vector<Aabb> TriangleBoxes(const TriangleSurface& surface, const std::string& name) {
  if (surface.triangles.empty()) throw InputError(name + ": surface has no triangle");
  CheckClosed(surface, name);
  return ElementBounds(surface.vertices, surface.triangles);
}

}  // namespace

ClosedSurface::ClosedSurface(TriangleSurface surface, std::string name)
    : surface_(std::move(surface)),
      name_(std::move(name)),
      grid_(TriangleBoxes(surface_, name_), /*items_per_bin=*/1.0),
      volume_(EnclosedVolume(surface_)) {
  triangles_.reserve(surface_.triangles.size());
  for (const auto& t : surface_.triangles) {
    const Vec3& a = surface_.vertices[t[0]];
    triangles_.push_back({a, surface_.vertices[t[1]] - a, surface_.vertices[t[2]] - a});
  }
  // Classify each face-connected set of empty bins from its first bin's centre, then
  // flood the set. Rays from later seeds stop at the sets already classified.
  const Eigen::Vector3i& n = grid_.Resolution();
  bin_inside_.assign(grid_.NumBins(), -1);
  std::vector<Eigen::Vector3i> stack;
  Eigen::Vector3i seed;
  for (seed.z() = 0; seed.z() < n.z(); ++seed.z())
    for (seed.y() = 0; seed.y() < n.y(); ++seed.y())
      for (seed.x() = 0; seed.x() < n.x(); ++seed.x()) {
        const int s = grid_.Index(seed);
        if (bin_inside_[s] >= 0 || grid_.Begin(s) != grid_.End(s)) continue;
        const Vec3 centre = grid_.Bounds().lo + (seed.cast<double>().array() + 0.5).matrix().cwiseProduct(grid_.BinSize());
        const signed char status = InsideByRays(centre) ? 1 : 0;
        bin_inside_[s] = status;
        stack.push_back(seed);
        while (!stack.empty()) {
          const Eigen::Vector3i b = stack.back();
          stack.pop_back();
          for (int axis = 0; axis < 3; ++axis)
            for (int step : {-1, 1}) {
              Eigen::Vector3i c = b;
              c[axis] += step;
              if (c[axis] < 0 || c[axis] >= n[axis]) continue;
              const int i = grid_.Index(c);
              if (bin_inside_[i] >= 0 || grid_.Begin(i) != grid_.End(i)) continue;
              bin_inside_[i] = status;
              stack.push_back(c);
            }
        }
      }
}

bool ClosedSurface::Inside(const Vec3& x) const {
  const Aabb& box = grid_.Bounds();
  if ((x.array() <= box.lo.array()).any() || (x.array() >= box.hi.array()).any()) return false;
  const signed char status = bin_inside_[grid_.Index(grid_.BinOf(x))];
  return status >= 0 ? status == 1 : InsideByRays(x);
}

bool ClosedSurface::InsideByRays(const Vec3& x) const {
  const auto& d = RayDirections();
  const bool first = InsideAlongRay(x, d[0]);
  if (first == InsideAlongRay(x, d[1])) return first;
  return InsideAlongRay(x, d[2]);
}

bool ClosedSurface::InsideAlongRay(const Vec3& x, const Vec3& d) const {
  // Amanatides and Woo's traversal: bin b holds the ray parameters [t_enter, t_exit).
  Eigen::Vector3i b = grid_.BinOf(x);
  const Eigen::Vector3i& n = grid_.Resolution();
  const Vec3& h = grid_.BinSize();
  Eigen::Vector3i step;
  Vec3 t_next, t_delta;
  for (int k = 0; k < 3; ++k) {
    step[k] = d[k] > 0.0 ? 1 : -1;
    const double face = grid_.Bounds().lo[k] + (b[k] + (step[k] > 0 ? 1 : 0)) * h[k];
    t_next[k] = (face - x[k]) / d[k];
    t_delta[k] = h[k] / std::abs(d[k]);
  }
  bool odd = false;
  double t_enter = 0.0;
  while (true) {
    const int bin = grid_.Index(b);
    if (bin_inside_[bin] >= 0) return odd != (bin_inside_[bin] == 1);
    int axis = 0;
    t_next.minCoeff(&axis);
    const bool last = b[axis] + step[axis] < 0 || b[axis] + step[axis] >= n[axis];
    const double t_exit = last ? std::numeric_limits<double>::infinity() : t_next[axis];
    for (const int* it = grid_.Begin(bin); it != grid_.End(bin); ++it) {
      // Moller and Trumbore's ray-triangle test.
      const Triangle& tri = triangles_[*it];
      const Vec3 p = d.cross(tri.e2);
      const double det = tri.e1.dot(p);
      if (det == 0.0) continue;  // ray parallel to the triangle's plane
      const double inv = 1.0 / det;
      const Vec3 s = x - tri.a;
      const double u = s.dot(p) * inv;
      if (u < 0.0 || u > 1.0) continue;
      const Vec3 q = s.cross(tri.e1);
      const double v = d.dot(q) * inv;
      if (v < 0.0 || u + v > 1.0) continue;
      const double t = tri.e2.dot(q) * inv;
      if (t > 0.0 && t >= t_enter && t < t_exit) odd = !odd;
    }
    if (last) return odd;  // outside the grid is outside the surface
    b[axis] += step[axis];
    t_enter = t_exit;
    t_next[axis] += t_delta[axis];
  }
}

}  // namespace optistep::mpm
