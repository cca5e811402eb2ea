#include "mpm/MpmLoads.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/Error.hpp"
#include "model/TimeFunction.hpp"

namespace optistep::mpm {

bool HasPointLoads(const SceneConfig& scene) {
  return std::any_of(scene.loads.begin(), scene.loads.end(),
                     [](const LoadConfig& l) { return l.kind == LoadConfig::Kind::kPoint; });
}

namespace {

/// Per local particle (owned and halo), whether the point load's selection holds it at
/// its current position; *n: how many owned ones on all ranks. Collective.
std::vector<char> SelectParticles(const SceneConfig& scene, const LoadConfig& load,
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

void CheckPointLoads(const SceneConfig& scene, const MpmDomain& domain) {
  long long n = 0;
  for (const LoadConfig& load : scene.loads)
    if (load.kind == LoadConfig::Kind::kPoint) SelectParticles(scene, load, domain, &n);
}

std::vector<double> NodalPointLoads(const SceneConfig& scene, const MpmDomain& domain,
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

}  // namespace optistep::mpm
