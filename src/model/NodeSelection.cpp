#include "model/NodeSelection.hpp"

#include <algorithm>
#include <limits>

namespace optistep {

std::vector<char> SelectNodes(const SelectionConfig& sel, const DistributedTetMesh& mesh,
                              const std::vector<BodyConfig>& bodies) {
  int body = -1;
  for (int b = 0; b < static_cast<int>(bodies.size()); ++b)
    if (bodies[b].name == sel.body) body = b;
  auto in_body = [&](PetscInt l) { return body < 0 || mesh.node_body[l] == body; };

  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  if (sel.kind == SelectionConfig::Kind::kAxisEnd) {
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      if (in_body(l)) {
        lo = std::min(lo, mesh.X[l][sel.axis]);
        hi = std::max(hi, mesh.X[l][sel.axis]);
      }
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, mesh.comm);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, mesh.comm);
  }
  std::vector<char> selected(mesh.n_local, 0);
  for (PetscInt l = 0; l < mesh.n_local; ++l) {
    if (!in_body(l)) continue;
    const Vec3& X = mesh.X[l];
    if (sel.kind == SelectionConfig::Kind::kBox) {
      selected[l] = (X.array() >= sel.box_min.array()).all() && (X.array() <= sel.box_max.array()).all();
    } else {
      const double reach = sel.within * (hi - lo);
      selected[l] = sel.end_max ? X[sel.axis] >= hi - reach : X[sel.axis] <= lo + reach;
    }
  }
  return selected;
}

}  // namespace optistep
