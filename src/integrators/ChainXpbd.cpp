#include "integrators/ChainXpbd.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "core/Error.hpp"
#include "io/SurfaceMesh.hpp"

namespace optistep {

ChainXpbd::ChainXpbd(const SceneConfig& scene)
    : Xpbd(scene.xpbd), n_chains_(scene.chains.size()), n_cloths_(scene.cloths.size()) {
  std::vector<Vec3> x, v;
  std::vector<double> w;
  std::vector<XpbdParticles::Constraint> constraints;
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
    const std::string where = scene.path + ": cloths[" + std::to_string(c) + "] ('" + cloth.name + "', " + cloth.mesh + ")";
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
  particles_ = std::make_unique<XpbdParticles>(x, w, constraints, scene.gravity,
                                               scene.damping.stiffness_beta);
  particles_->v() = v;
}

std::string ChainXpbd::Describe() const {
  return DescribeSubsteps() + ", " + std::to_string(n_chains_) +
         (n_chains_ == 1 ? " chain, " : " chains, ") + std::to_string(n_cloths_) +
         (n_cloths_ == 1 ? " cloth, " : " cloths, ") + std::to_string(particles_->x().size()) +
         " particles, " + std::to_string(particles_->constraints().size()) +
         " distance constraints, Gauss-Seidel in scene order";
}

SolveReport ChainXpbd::TryStep(double dt) {
  const std::vector<Vec3> x_before = particles_->x(), v_before = particles_->v();
  const long long before = particles_->projections();
  particles_->Step(dt, substeps_, iterations_);
  SolveReport report;
  report.iterations = substeps_ * iterations_;
  for (size_t p = 0; p < particles_->x().size(); ++p)
    if (!particles_->x()[p].allFinite() || !particles_->v()[p].allFinite()) {
      particles_->x() = x_before;
      particles_->v() = v_before;
      report.reason = "NaN in the XPBD positions or velocities";
      return report;
    }
  projections_ = particles_->projections() - before;
  report.converged = true;
  report.reason = "substeps done";
  t_ += dt;
  ++steps_;
  return report;
}

void ChainXpbd::KeepState() {
  x_kept_ = particles_->x();
  v_kept_ = particles_->v();
  t_kept_ = t_;
  steps_kept_ = steps_;
}

void ChainXpbd::RestoreKeptState() {
  particles_->x() = x_kept_;
  particles_->v() = v_kept_;
  t_ = t_kept_;
  steps_ = steps_kept_;
}

std::vector<std::string> ChainXpbd::StatsColumns() const {
  return {"substeps", "projections", "max_strain", "force_0", "total_energy", "constraint_energy"};
}

std::vector<double> ChainXpbd::StatsValues() const {
  return {static_cast<double>(substeps_), static_cast<double>(projections_), particles_->MaxStrain(),
          particles_->constraints().empty() ? 0.0 : particles_->Force(0), particles_->Energy(),
          particles_->ConstraintEnergy()};
}

}  // namespace optistep
