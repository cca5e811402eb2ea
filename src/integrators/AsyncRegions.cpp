#include "integrators/AsyncRegions.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <map>

#include "core/Error.hpp"
#include "core/PetscHandles.hpp"

namespace optistep {
namespace {

/// Collective. Per local node (owned, then ghosts): whether any rank flagged it in its local
/// form. Owners gather the ghosts' flags (reverse scatter, add), then send them back out.
std::vector<char> ShareNodeFlags(const FemModel& model, const std::vector<char>& flags) {
  const DistributedTetMesh& mesh = model.mesh();
  const OwnedVec v(model.CreateNodeVector());
  Vec local = nullptr;
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGhostGetLocalForm(v, &local));
  OPTISTEP_PETSC(VecGetArray(local, &a));
  for (PetscInt l = 0; l < mesh.n_local; ++l)
    for (int d = 0; d < 3; ++d) a[3 * l + d] = flags[l] ? 1.0 : 0.0;
  OPTISTEP_PETSC(VecRestoreArray(local, &a));
  OPTISTEP_PETSC(VecGhostRestoreLocalForm(v, &local));
  OPTISTEP_PETSC(VecGhostUpdateBegin(v, ADD_VALUES, SCATTER_REVERSE));
  OPTISTEP_PETSC(VecGhostUpdateEnd(v, ADD_VALUES, SCATTER_REVERSE));
  OPTISTEP_PETSC(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
  std::vector<char> shared(mesh.n_local, 0);
  OPTISTEP_PETSC(VecGhostGetLocalForm(v, &local));
  OPTISTEP_PETSC(VecGetArray(local, &a));
  for (PetscInt l = 0; l < mesh.n_local; ++l) shared[l] = a[3 * l] > 0.5;
  OPTISTEP_PETSC(VecRestoreArray(local, &a));
  OPTISTEP_PETSC(VecGhostRestoreLocalForm(v, &local));
  return shared;
}

}  // namespace

std::vector<char> SurfaceLayerTets(const FemModel& model, int layers) {
  const DistributedTetMesh& mesh = model.mesh();
  // Every tet holding a face with an owned node is local (a rank holds the tets around its
  // owned nodes), so such a face's tet count is complete here. visit(face, tet, skipped
  // corner) for each such face, the face as its sorted global node ids.
  auto each_face = [&](auto&& visit) {
    for (const auto& t : mesh.tets)
      for (int skip = 0; skip < 4; ++skip) {
        std::array<PetscInt, 3> f;
        bool owned = false;
        for (int a = 0, k = 0; a < 4; ++a) {
          if (a == skip) continue;
          f[k++] = mesh.local_to_global[t[a]];
          owned |= t[a] < mesh.n_owned;
        }
        if (!owned) continue;
        std::sort(f.begin(), f.end());
        visit(f, t, skip);
      }
  };
  std::map<std::array<PetscInt, 3>, int> faces;
  each_face([&](const std::array<PetscInt, 3>& f, const std::array<int, 4>&, int) { ++faces[f]; });
  std::vector<char> node(mesh.n_local, 0);
  each_face([&](const std::array<PetscInt, 3>& f, const std::array<int, 4>& t, int skip) {
    if (faces[f] == 1)
      for (int a = 0; a < 4; ++a)
        if (a != skip) node[t[a]] = 1;
  });
  node = ShareNodeFlags(model, node);
  std::vector<char> region(mesh.tets.size(), 0);
  for (int layer = 1; layer <= layers; ++layer) {
    // Layer 1: the tets with a face on the surface (three surface nodes; a node flag is the
    // same on every rank, a face's tet count is not), one element thick where a tet touching
    // the surface only at an edge or a corner would make it several (TetGen's refined
    // surfaces); layer k + 1: the tets with a node of layer k.
    for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
      int on = 0;
      for (int a = 0; a < 4; ++a) on += node[mesh.tets[e][a]];
      region[e] |= layer == 1 ? on >= 3 : on >= 1;
    }
    if (layer == layers) break;
    for (std::size_t e = 0; e < mesh.tets.size(); ++e)
      if (region[e])
        for (int a = 0; a < 4; ++a) node[mesh.tets[e][a]] = 1;
    node = ShareNodeFlags(model, node);
  }
  return region;
}

std::vector<char> ImplicitRegionNodes(const FemModel& model, const std::vector<char>& region) {
  const DistributedTetMesh& mesh = model.mesh();
  std::vector<char> node(mesh.n_local, 0);
  for (std::size_t e = 0; e < mesh.tets.size(); ++e)
    if (!region[e])
      for (int a = 0; a < 4; ++a) node[mesh.tets[e][a]] = 1;
  node = ShareNodeFlags(model, node);
  std::vector<char> owned(node.begin(), node.begin() + mesh.n_owned);
  for (PetscInt l = 0; l < mesh.n_owned; ++l)
    if (model.IsConstrained(static_cast<int>(l))) owned[l] = 0;
  return owned;
}

RigidForceDistribution::RigidForceDistribution(const FemModel& model,
                                               std::vector<char> implicit_nodes, double epsilon)
    : model_(model),
      implicit_nodes_(std::move(implicit_nodes)),
      epsilon_(epsilon),
      n_bodies_(static_cast<int>(model.scene().bodies.size())),
      mass_(4 * n_bodies_),
      sums_(kSums * n_bodies_),
      center_(n_bodies_),
      accel_(n_bodies_),
      alpha_(n_bodies_) {}

void RigidForceDistribution::Apply(Vec x, Vec f, double epsilon) const {
  if (epsilon == 0.0) return;
  const DistributedTetMesh& mesh = model_.mesh();
  const PetscScalar* xa = nullptr;
  PetscScalar* fa = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x, &xa));
  OPTISTEP_PETSC(VecGetArray(f, &fa));
  auto position = [&](PetscInt l) { return Vec3(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]); };
  // Pass 1, per body: M and sum m x (center of mass c).
  // Work arrays kept between calls (two per substep): no allocation per call.
  std::vector<double>& mass = mass_;
  std::vector<double>& sums = sums_;
  std::vector<Vec3>&center = center_, &accel = accel_, &alpha = alpha_;
  std::fill(mass.begin(), mass.end(), 0.0);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    if (!implicit_nodes_[l]) continue;
    const double m = model_.Mass(static_cast<int>(l));
    double* s = &mass[4 * mesh.node_body[l]];
    s[0] += m;
    for (int d = 0; d < 3; ++d) s[1 + d] += m * xa[3 * l + d];
  }
  MPI_Allreduce(MPI_IN_PLACE, mass.data(), 4 * n_bodies_, MPI_DOUBLE, MPI_SUM, model_.comm());
  std::fill(center.begin(), center.end(), Vec3::Zero());
  for (int b = 0; b < n_bodies_; ++b)
    if (mass[4 * b] > 0.0) center[b] = Vec3(mass[4 * b + 1], mass[4 * b + 2], mass[4 * b + 3]) / mass[4 * b];
  // Pass 2, per body: net force F, torque T about c, inertia I = sum m (|r|^2 1 - r r^T).
  std::fill(sums.begin(), sums.end(), 0.0);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    if (!implicit_nodes_[l]) continue;
    const int b = mesh.node_body[l];
    const double m = model_.Mass(static_cast<int>(l));
    const Vec3 r = position(l) - center[b];
    const Vec3 fi(fa[3 * l], fa[3 * l + 1], fa[3 * l + 2]);
    const Vec3 torque = r.cross(fi);
    double* s = &sums[kSums * b];
    for (int d = 0; d < 3; ++d) {
      s[d] += fi[d];
      s[3 + d] += torque[d];
    }
    const double r2 = r.squaredNorm();
    s[6] += m * (r2 - r[0] * r[0]);
    s[7] += m * (r2 - r[1] * r[1]);
    s[8] += m * (r2 - r[2] * r[2]);
    s[9] -= m * r[0] * r[1];
    s[10] -= m * r[0] * r[2];
    s[11] -= m * r[1] * r[2];
  }
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), kSums * n_bodies_, MPI_DOUBLE, MPI_SUM, model_.comm());
  // Per body: a = F / M and alpha = I^+ T (the pseudo-inverse keeps P a projection for a
  // region whose nodes lie on a line or at one point).
  std::fill(accel.begin(), accel.end(), Vec3::Zero());
  std::fill(alpha.begin(), alpha.end(), Vec3::Zero());
  for (int b = 0; b < n_bodies_; ++b) {
    const double M = mass[4 * b];
    if (!(M > 0.0)) continue;
    const double* s = &sums[kSums * b];
    accel[b] = Vec3(s[0], s[1], s[2]) / M;
    Mat3 I;
    I << s[6], s[9], s[10], s[9], s[7], s[11], s[10], s[11], s[8];
    const Eigen::SelfAdjointEigenSolver<Mat3> eigen(I);
    const double floor = 1e-12 * std::max(eigen.eigenvalues().maxCoeff(), 0.0);
    Vec3 inverse = Vec3::Zero();
    for (int k = 0; k < 3; ++k)
      if (eigen.eigenvalues()[k] > floor) inverse[k] = 1.0 / eigen.eigenvalues()[k];
    alpha[b] = eigen.eigenvectors() * inverse.asDiagonal() * eigen.eigenvectors().transpose() *
               Vec3(s[3], s[4], s[5]);
  }
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    if (!implicit_nodes_[l]) continue;
    const int b = mesh.node_body[l];
    const double m = model_.Mass(static_cast<int>(l));
    const Vec3 rigid = m * (accel[b] + alpha[b].cross(position(l) - center[b]));
    for (int d = 0; d < 3; ++d) fa[3 * l + d] = epsilon * rigid[d] + (1.0 - epsilon) * fa[3 * l + d];
  }
  OPTISTEP_PETSC(VecRestoreArray(f, &fa));
  OPTISTEP_PETSC(VecRestoreArrayRead(x, &xa));
}

}  // namespace optistep
