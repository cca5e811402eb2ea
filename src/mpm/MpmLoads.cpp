#include "mpm/MpmLoads.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>

#include "core/Error.hpp"
#include "model/TimeFunction.hpp"

namespace optistep::mpm {

bool HasPointLoads(const ModelConfig& scene) {
  return std::any_of(scene.loads.begin(), scene.loads.end(),
                     [](const LoadConfig& l) { return l.kind == LoadConfig::Kind::kPoint; });
}

namespace {

/// Per local particle (owned and halo), whether the point load's selection holds it at
/// its current position; *n: how many owned ones on all ranks. Collective.
std::vector<char> SelectParticles(const ModelConfig& scene, const LoadConfig& load,
                                  const MpmDomain& domain, long long* n) {
  const Particles& particles = domain.particles();
  const SelectionConfig& sel = load.select;
  int body = -1;
  for (int b = 0; b < static_cast<int>(scene.bodies.size()); ++b)
    if (scene.bodies[b].name == sel.body) body = b;
  auto in_body = [&](std::size_t p) { return body < 0 || particles.material[p] == body; };
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  if (sel.kind == SelectionConfig::Kind::kAxisEnd) {
    for (std::size_t p = 0; p < domain.n_owned(); ++p)
      if (in_body(p)) {
        lo = std::min(lo, particles.x[p][sel.axis]);
        hi = std::max(hi, particles.x[p][sel.axis]);
      }
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, domain.comm());
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, domain.comm());
  }
  std::vector<char> selected(particles.size(), 0);
  *n = 0;
  for (std::size_t p = 0; p < particles.size(); ++p) {
    if (!in_body(p)) continue;
    const Vec3& x = particles.x[p];
    const double reach = sel.within * (hi - lo);
    selected[p] = sel.kind == SelectionConfig::Kind::kBox
                      ? (x.array() >= sel.box_min.array()).all() && (x.array() <= sel.box_max.array()).all()
                      : (sel.end_max ? x[sel.axis] >= hi - reach : x[sel.axis] <= lo + reach);
    if (p < domain.n_owned()) *n += selected[p];
  }
  MPI_Allreduce(MPI_IN_PLACE, n, 1, MPI_LONG_LONG, MPI_SUM, domain.comm());
  if (*n == 0)
    throw InputError(scene.path + ": loads[" + std::to_string(&load - scene.loads.data()) + "] ('" +
                     load.name + "').select: the selection holds no particle");
  return selected;
}

}  // namespace

void CheckPointLoads(const ModelConfig& scene, const MpmDomain& domain) {
  long long n = 0;
  for (const LoadConfig& load : scene.loads)
    if (load.kind == LoadConfig::Kind::kPoint) SelectParticles(scene, load, domain, &n);
}

std::vector<double> NodalPointLoads(const ModelConfig& scene, const MpmDomain& domain,
                                    const StepGrid& step, double t) {
  std::vector<double> f(3 * static_cast<std::size_t>(step.grid.NodeCount()), 0.0);
  for (const LoadConfig& load : scene.loads) {
    if (load.kind != LoadConfig::Kind::kPoint) continue;
    long long n = 0;
    const std::vector<char> selected = SelectParticles(scene, load, domain, &n);
    const Vec3 f_p = TimeFunction(load.time_function)(t) / static_cast<double>(n) * load.force;
    for (std::size_t p = 0; p < selected.size(); ++p) {
      if (!selected[p]) continue;
      const Stencil& s = step.cache.stencil[p];
      ForEachStencilNode([&](int k, int a, int b, int c) {
        const std::size_t node = static_cast<std::size_t>(step.cache.node[p][k]);
        for (int d = 0; d < 3; ++d) f[3 * node + d] += s.w_ip(a, b, c) * f_p[d];
      });
    }
  }
  return f;
}

bool HasTractionLoads(const ModelConfig& scene) {
  return std::any_of(scene.loads.begin(), scene.loads.end(), [](const LoadConfig& l) {
    return l.kind == LoadConfig::Kind::kTraction || l.kind == LoadConfig::Kind::kPressure;
  });
}

namespace {

/// The point of triangle abc closest to p (Ericson, "Real-Time Collision Detection",
/// Sec. 5.1.5: the Voronoi regions of the corners, edges and face).
Vec3 ClosestPointOnTriangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0.0 && d2 <= 0.0) return a;
  const Vec3 bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0.0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) return a + d1 / (d1 - d3) * ab;
  const Vec3 cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0.0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) return a + d2 / (d2 - d6) * ac;
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0)
    return b + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (c - b);
  const double denom = 1.0 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

/// Particles binned by cells of size h, for the searches around a triangle.
class ParticleBins {
 public:
  ParticleBins(const std::vector<Vec3>& X, double h) : X_(X), h_(h) {
    for (std::size_t p = 0; p < X.size(); ++p) bins_[Cell(X[p])].push_back(static_cast<int>(p));
  }
  /// The particles within r of triangle T (increasing index), and their distances.
  void Within(const std::array<Vec3, 3>& T, double r, std::vector<int>* found,
              std::vector<double>* distance) const {
    found->clear();
    distance->clear();
    const Vec3 lo = T[0].cwiseMin(T[1]).cwiseMin(T[2]) - Vec3::Constant(r);
    const Vec3 hi = T[0].cwiseMax(T[1]).cwiseMax(T[2]) + Vec3::Constant(r);
    const std::array<long, 3> a = Cell(lo), b = Cell(hi);
    for (long i = a[0]; i <= b[0]; ++i)
      for (long j = a[1]; j <= b[1]; ++j)
        for (long k = a[2]; k <= b[2]; ++k) {
          const auto bin = bins_.find({i, j, k});
          if (bin == bins_.end()) continue;
          for (const int p : bin->second) {
            const double d = (ClosestPointOnTriangle(X_[p], T[0], T[1], T[2]) - X_[p]).norm();
            if (d < r) {
              found->push_back(p);
              distance->push_back(d);
            }
          }
        }
  }

 private:
  std::array<long, 3> Cell(const Vec3& x) const {
    return {std::lround(std::floor(x[0] / h_)), std::lround(std::floor(x[1] / h_)),
            std::lround(std::floor(x[2] / h_))};
  }
  const std::vector<Vec3>& X_;
  double h_;
  std::map<std::array<long, 3>, std::vector<int>> bins_;
};

}  // namespace

std::vector<ParticleForce> TractionParticleForces(const ModelConfig& scene,
                                                  const std::vector<BoundaryTriangles>& boundary,
                                                  const std::vector<std::vector<Vec3>>& X,
                                                  const std::vector<std::vector<std::int64_t>>& id,
                                                  double h) {
  using Kind = LoadConfig::Kind;
  const int bodies = static_cast<int>(scene.bodies.size());
  std::vector<std::unique_ptr<ParticleBins>> bins(bodies);
  std::map<std::pair<std::int64_t, int>, Vec3> forces;  // (id, load) -> F per unit tau
  for (std::size_t i = 0; i < scene.loads.size(); ++i) {
    const LoadConfig& load = scene.loads[i];
    if (load.kind != Kind::kTraction && load.kind != Kind::kPressure) continue;
    const std::string label = scene.path + ": loads[" + std::to_string(i) + "] ('" + load.name + "')";
    const SelectionConfig& sel = load.select;
    auto chosen = [&](int b) { return sel.body.empty() || scene.bodies[b].name == sel.body; };
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int b = 0; b < bodies; ++b) {
      if (!chosen(b)) continue;
      if (boundary[b].empty())
        throw InputError(label + ": an MPM traction or pressure needs a body of a box, a mesh or a "
                         "surface; bodies[" + std::to_string(b) + "] ('" + scene.bodies[b].name +
                         "') is a shape without boundary triangles");
      for (const auto& T : boundary[b])
        for (const Vec3& x : T) {
          lo = std::min(lo, x[sel.axis]);
          hi = std::max(hi, x[sel.axis]);
        }
    }
    auto selected = [&](const Vec3& x) {
      if (sel.kind == SelectionConfig::Kind::kBox)
        return (x.array() >= sel.box_min.array()).all() && (x.array() <= sel.box_max.array()).all();
      const double reach = sel.within * (hi - lo);
      return sel.end_max ? x[sel.axis] >= hi - reach : x[sel.axis] <= lo + reach;
    };
    bool any = false;
    std::vector<int> near;
    std::vector<double> distance;
    for (int b = 0; b < bodies; ++b) {
      if (!chosen(b)) continue;
      for (const auto& T : boundary[b]) {
        if (!selected(T[0]) || !selected(T[1]) || !selected(T[2])) continue;
        any = true;
        if (!bins[b]) bins[b] = std::make_unique<ParticleBins>(X[b], h);
        const Vec3 area_normal = 0.5 * (T[1] - T[0]).cross(T[2] - T[0]);
        const Vec3 F_T = load.kind == Kind::kTraction ? Vec3(load.traction * area_normal.norm())
                                                      : Vec3(-load.pressure * area_normal);
        bins[b]->Within(T, h, &near, &distance);
        if (near.empty()) {
          // The nearest particle: search ever wider (the body holds particles).
          for (double r = 2.0 * h; near.empty(); r *= 2.0) bins[b]->Within(T, r, &near, &distance);
          std::size_t best = 0;
          for (std::size_t k = 1; k < near.size(); ++k)
            if (distance[k] < distance[best] || (distance[k] == distance[best] && near[k] < near[best]))
              best = k;
          near = {near[best]};
        }
        std::sort(near.begin(), near.end());
        for (const int p : near)
          forces.try_emplace({id[b][p], static_cast<int>(i)}, Vec3::Zero()).first->second +=
              F_T / static_cast<double>(near.size());
      }
    }
    if (!any)
      throw InputError(label + ".select: the selection holds no boundary triangle of an MPM body "
                       "(all three corners selected)");
  }
  std::vector<ParticleForce> result;
  for (const auto& [key, F] : forces) result.push_back({key.first, key.second, F});
  return result;
}

void AddNodalParticleForces(const ModelConfig& scene, const std::vector<ParticleForce>& forces,
                            const MpmDomain& domain, const StepGrid& step, double t,
                            std::vector<double>* f) {
  std::vector<double> tau(scene.loads.size(), 0.0);
  for (std::size_t i = 0; i < scene.loads.size(); ++i) tau[i] = TimeFunction(scene.loads[i].time_function)(t);
  const Particles& particles = domain.particles();
  for (std::size_t p = 0; p < particles.size(); ++p) {
    auto first = std::lower_bound(forces.begin(), forces.end(), particles.id[p],
                                  [](const ParticleForce& a, std::int64_t id) { return a.id < id; });
    if (first == forces.end() || first->id != particles.id[p]) continue;
    Vec3 f_p = Vec3::Zero();
    for (; first != forces.end() && first->id == particles.id[p]; ++first) f_p += tau[first->load] * first->force;
    const Stencil& s = step.cache.stencil[p];
    ForEachStencilNode([&](int k, int a, int b, int c) {
      const std::size_t node = static_cast<std::size_t>(step.cache.node[p][k]);
      for (int d = 0; d < 3; ++d) (*f)[3 * node + d] += s.w_ip(a, b, c) * f_p[d];
    });
  }
}

}  // namespace optistep::mpm
