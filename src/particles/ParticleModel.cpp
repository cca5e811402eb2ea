#include "particles/ParticleModel.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/Error.hpp"
#include "io/SurfaceMesh.hpp"

namespace optistep {

ParticleModel BuildParticleModel(const ParticlesConfig& scene, const std::string& scene_path) {
  ParticleModel model;
  std::vector<Vec3>& x = model.x;
  std::vector<Vec3>& v = model.v;
  std::vector<double>& w = model.inverse_mass;
  std::vector<XpbdParticles::Constraint>& constraints = model.constraints;
  for (const ChainConfig& chain : scene.chains) {
    const int first = static_cast<int>(x.size());
    const int n = static_cast<int>(chain.points.size());
    std::vector<double> mass(n, chain.mass);
    for (const auto& [particle, m] : chain.masses) mass[particle] = m;
    std::vector<char> pinned(n, 0);
    for (int particle : chain.pinned) pinned[particle] = 1;
    for (int k = 0; k < n; ++k) {
      x.push_back(chain.points[k]);
      v.push_back(pinned[k] ? Vec3::Zero() : chain.initial_velocity);
      w.push_back(pinned[k] ? 0.0 : 1.0 / mass[k]);
      if (k > 0)
        constraints.push_back({first + k - 1, first + k, (chain.points[k] - chain.points[k - 1]).norm(),
                               chain.compliance});
    }
  }
  for (size_t c = 0; c < scene.cloths.size(); ++c) {
    const ClothConfig& cloth = scene.cloths[c];
    const std::string where = scene_path + ": cloths[" + std::to_string(c) + "] ('" + cloth.name + "', " + cloth.mesh + ")";
    const TriangleSurface surface = ReadSurfaceMesh(cloth.mesh);
    const int first = static_cast<int>(x.size());
    const int n = static_cast<int>(surface.vertices.size());
    std::vector<char> pinned(n, 0);
    for (int vertex : cloth.pinned) {
      if (vertex >= n)
        throw InputError(where + ": pinned: vertex " + std::to_string(vertex) + " of " +
                         std::to_string(n));
      pinned[vertex] = 1;
    }
    for (int k = 0; k < n; ++k) {
      x.push_back(cloth.transform.Apply(surface.vertices[k]));
      v.push_back(pinned[k] ? Vec3::Zero() : cloth.initial_velocity);
      w.push_back(pinned[k] ? 0.0 : 1.0 / cloth.mass);
    }
    // Each edge once, in (lower, higher) vertex order: the Gauss-Seidel order.
    std::vector<std::pair<int, int>> edges;
    for (const auto& t : surface.triangles)
      for (int a = 0; a < 3; ++a)
        edges.emplace_back(std::min(t[a], t[(a + 1) % 3]), std::max(t[a], t[(a + 1) % 3]));
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    for (const auto& t : surface.triangles)
      model.triangles.push_back({first + t[0], first + t[1], first + t[2]});
    for (const auto& [i, j] : edges) {
      const double rest = (x[first + i] - x[first + j]).norm();
      if (!(rest > 0.0))
        throw InputError(where + ": edge " + std::to_string(i) + "-" + std::to_string(j) +
                         " has zero length");
      constraints.push_back({first + i, first + j, rest, cloth.compliance});
    }
    if (!cloth.bending) continue;
    // Bending: across each edge two triangles share, a distance constraint between their
    // opposite vertices (the cross-edge simplification of the dihedral-angle bending
    // constraint of Mueller, Heidelberger, Hennix, Ratcliff 2007, "Position Based Dynamics",
    // Sec. 4.2), by (edge, opposite pair) order after all of the cloth's edges.
    std::vector<std::array<int, 3>> sides;  // (lower, higher, opposite vertex) per triangle edge
    for (const auto& t : surface.triangles)
      for (int a = 0; a < 3; ++a)
        sides.push_back({std::min(t[a], t[(a + 1) % 3]), std::max(t[a], t[(a + 1) % 3]), t[(a + 2) % 3]});
    std::sort(sides.begin(), sides.end());
    for (size_t a = 0; a + 1 < sides.size(); ++a) {
      if (sides[a][0] != sides[a + 1][0] || sides[a][1] != sides[a + 1][1]) continue;
      const int k = sides[a][2], l = sides[a + 1][2];
      const double rest = (x[first + k] - x[first + l]).norm();
      if (!(rest > 0.0))
        throw InputError(where + ": bending across edge " + std::to_string(sides[a][0]) + "-" +
                         std::to_string(sides[a][1]) + ": its opposite vertices coincide");
      constraints.push_back({first + std::min(k, l), first + std::max(k, l), rest, cloth.bending_compliance});
    }
  }
  return model;
}

}  // namespace optistep
