#pragma once
// Closed triangle surfaces as MPM shapes: a closedness check and an inside test by ray
// parity on a uniform grid of triangles. The OFF and STL readers are io/SurfaceMesh.
#include <string>
#include <vector>

#include "core/Types.hpp"
#include "io/SurfaceMesh.hpp"
#include "mpm/Shapes.hpp"

namespace optistep::mpm {

/// Throws InputError "<name>: surface is not closed (edge a-b used by k triangles)"
/// unless every undirected edge is shared by exactly two triangles; a, b are 0-based
/// vertex indices and the edge named is the first in (a, b) order. Rank-local.
void CheckClosed(const TriangleSurface& surface, const std::string& name);

/// Volume (m^3) enclosed by a closed surface, sum over triangles of
/// det[a, b, c] / 6 (divergence theorem), taken in absolute value so that either
/// consistent orientation gives a positive volume.
double EnclosedVolume(const TriangleSurface& surface);

/// The solid bounded by a closed triangle surface.
///
/// Inside test by ray parity. The triangles are binned on a uniform grid (about one per
/// bin). A bin that no triangle touches is wholly inside or wholly outside, and so is
/// every empty bin sharing a face with it: the constructor classifies each such
/// face-connected set of empty bins from one point and fills the rest in. A query in an
/// empty bin is then a look-up. A query in a bin with triangles walks a ray from x
/// through the bins (Amanatides and Woo 1987, "A fast voxel traversal algorithm for ray
/// tracing") to the first classified empty bin, or out of the grid, and flips that
/// bin's status once per triangle crossed on the way (Moller and Trumbore 1997, "Fast,
/// minimum storage ray-triangle intersection"); a crossing is counted in the bin whose
/// stretch of the ray holds it, so a triangle listed in several bins counts once. The
/// rays go in three fixed directions with irrational component ratios; two are cast and
/// the third decides only when they disagree, so a ray that grazes an edge or a vertex
/// (where the crossing count is unreliable) is outvoted. Parity needs neither a
/// consistent orientation nor manifold vertices; a self-intersecting surface gives the
/// points it encloses an odd number of times.
class ClosedSurface : public Shape {
 public:
  /// Checks closedness (CheckClosed, errors name `name`: the file), bins the triangles
  /// and classifies the empty bins. Throws InputError also for a surface without
  /// triangles. Rank-local.
  ClosedSurface(TriangleSurface surface, std::string name);

  bool Inside(const Vec3& x) const override;
  /// The vertices' bounding box, padded by 1e-9 of its largest extent.
  Aabb Bounds() const override { return grid_.Bounds(); }
  /// EnclosedVolume of the surface.
  double Volume() const override { return volume_; }
  const std::string& Name() const override { return name_; }
  const TriangleSurface& Surface() const { return surface_; }

 private:
  /// Precomputed corner and edges of a triangle for the ray test.
  struct Triangle {
    Vec3 a, e1, e2;
  };
  /// Inside by the majority of the rays from x (x inside Bounds()).
  bool InsideByRays(const Vec3& x) const;
  /// Inside by the crossings of the ray x + t d, t > 0, up to the first classified bin.
  bool InsideAlongRay(const Vec3& x, const Vec3& d) const;

  TriangleSurface surface_;
  std::string name_;
  AabbGrid grid_;
  double volume_;  // after grid_: the checks of its construction come first
  std::vector<Triangle> triangles_;
  /// Per grid bin: 1 inside, 0 outside (empty bins), -1 (bins with triangles).
  std::vector<signed char> bin_inside_;
};

}  // namespace optistep::mpm
