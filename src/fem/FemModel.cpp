#include "fem/FemModel.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "core/Error.hpp"
#include "core/GhostedVector.hpp"
#include "fem/TetElement.hpp"

namespace optistep {

FemModel::FemModel(const SceneConfig& scene, DistributedTetMesh mesh)
    : scene_(scene), mesh_(std::move(mesh)) {
  for (const auto& body : scene_.bodies)
    materials_.push_back(MakeMaterial(
        body.material.model,
        LameParameters::FromYoungPoisson(body.material.E, body.material.nu)));
  for (const auto& c : scene_.collision_objects) collision_objects_.emplace_back(c);

  ghost_nodes_.assign(mesh_.local_to_global.begin() + mesh_.n_owned,
                      mesh_.local_to_global.end());
  OPTISTEP_PETSC(ISLocalToGlobalMappingCreate(mesh_.comm, 3, static_cast<PetscInt>(mesh_.n_local),
                                              mesh_.local_to_global.data(), PETSC_COPY_VALUES,
                                              &l2g_));
  SetUpElements();
  SetUpDirichlet();
}

FemModel::~FemModel() { ISLocalToGlobalMappingDestroy(&l2g_); }

Vec FemModel::CreateNodeVector() const {
  Vec v = nullptr;
  OPTISTEP_PETSC(VecCreateGhostBlock(mesh_.comm, 3, 3 * mesh_.n_owned, 3 * mesh_.n_global_nodes,
                                     static_cast<PetscInt>(ghost_nodes_.size()),
                                     ghost_nodes_.data(), &v));
  return v;
}

void FemModel::SetUpElements() {
  const size_t n_tets = mesh_.tets.size();
  beta_.resize(n_tets);
  V0_.resize(n_tets);
  mass_.assign(mesh_.n_owned, 0.0);
  std::string bad;
  for (size_t e = 0; e < n_tets; ++e) {
    const auto& t = mesh_.tets[e];
    Mat3 Dm;
    for (int a = 1; a < 4; ++a) Dm.col(a - 1) = mesh_.X[t[a]] - mesh_.X[t[0]];
    const double volume = Dm.determinant() / 6.0;
    if (!(volume > 0.0) && bad.empty())
      bad = "body '" + scene_.bodies[mesh_.tet_body[e]].name + "': tet " +
            std::to_string(mesh_.tet_original_id[e]) + " has non-positive volume " +
            std::to_string(volume) + " m^3 after the transform";
    V0_[e] = volume;
    beta_[e] = ShapeGradients(Dm.inverse());
    const double node_mass = scene_.bodies[mesh_.tet_body[e]].material.density * volume / 4.0;
    for (int a = 0; a < 4; ++a)
      if (t[a] < mesh_.n_owned) mass_[t[a]] += node_mass;
  }
  ThrowIfAnyRank(mesh_.comm, bad);
  double local = 0.0;
  for (double m : mass_) local += m;
  MPI_Allreduce(&local, &total_mass_, 1, MPI_DOUBLE, MPI_SUM, mesh_.comm);
}

void FemModel::SetUpDirichlet() {
  dirichlet_.assign(mesh_.n_owned, -1);
  const int n_bodies = static_cast<int>(scene_.bodies.size());
  for (size_t c = 0; c < scene_.boundary_conditions.size(); ++c) {
    const auto& bc = scene_.boundary_conditions[c];
    const auto& sel = bc.select;
    int body = -1;
    for (int b = 0; b < n_bodies; ++b)
      if (scene_.bodies[b].name == sel.body) body = b;
    auto in_body = [&](PetscInt l) { return body < 0 || mesh_.node_body[l] == body; };

    double lo = std::numeric_limits<double>::infinity();
    double hi = -lo;
    if (sel.kind == SelectionConfig::Kind::kAxisEnd) {
      for (PetscInt l = 0; l < mesh_.n_owned; ++l)
        if (in_body(l)) {
          lo = std::min(lo, mesh_.X[l][sel.axis]);
          hi = std::max(hi, mesh_.X[l][sel.axis]);
        }
      MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, mesh_.comm);
      MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, mesh_.comm);
    }
    auto selected = [&](PetscInt l) {
      if (!in_body(l)) return false;
      const Vec3& X = mesh_.X[l];
      if (sel.kind == SelectionConfig::Kind::kBox)
        return (X.array() >= sel.box_min.array()).all() && (X.array() <= sel.box_max.array()).all();
      const double reach = sel.within * (hi - lo);
      return sel.end_max ? X[sel.axis] >= hi - reach : X[sel.axis] <= lo + reach;
    };

    // Sum of selected positions and their count, for the default rotation center.
    double sums[4] = {0.0, 0.0, 0.0, 0.0};
    for (PetscInt l = 0; l < mesh_.n_owned; ++l)
      if (selected(l)) {
        dirichlet_[l] = static_cast<int>(c);
        for (int d = 0; d < 3; ++d) sums[d] += mesh_.X[l][d];
        sums[3] += 1.0;
      }
    MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_DOUBLE, MPI_SUM, mesh_.comm);
    if (sums[3] == 0.0)
      throw InputError(scene_.path + ": boundary_conditions[" + std::to_string(c) + "] ('" +
                       bc.name + "'): the selection holds no node");
    std::vector<MotionSegmentConfig> segments = bc.motion;
    for (auto& s : segments)
      if (s.kind == MotionSegmentConfig::Kind::kRotate && !s.has_center) {
        s.center = Vec3(sums[0], sums[1], sums[2]) / sums[3];
        s.has_center = true;
      }
    motions_.emplace_back(std::move(segments));
  }
  // Ghost nodes learn their owner's constraint through a ghost update of 0/1 flags.
  Vec flags = CreateNodeVector();
  PetscScalar* fa = nullptr;
  OPTISTEP_PETSC(VecGetArray(flags, &fa));
  for (PetscInt l = 0; l < mesh_.n_owned; ++l)
    for (int d = 0; d < 3; ++d) fa[3 * l + d] = dirichlet_[l] >= 0 ? 1.0 : 0.0;
  OPTISTEP_PETSC(VecRestoreArray(flags, &fa));
  {
    const GhostedLocalView local(flags);
    constrained_local_.resize(mesh_.n_local);
    for (PetscInt l = 0; l < mesh_.n_local; ++l) constrained_local_[l] = local.data()[3 * l] > 0.5;
  }
  VecDestroy(&flags);

  PetscInt local = 0;
  for (int d : dirichlet_) local += (d >= 0);
  MPI_Allreduce(&local, &n_constrained_global_, 1, MPIU_INT, MPI_SUM, mesh_.comm);
}

Vec3 FemModel::DirichletTarget(int l, double t) const {
  return motions_[dirichlet_[l]].Position(mesh_.X[l], t);
}

void FemModel::InitialState(Vec x, Vec v) const {
  PetscScalar *xa = nullptr, *va = nullptr;
  OPTISTEP_PETSC(VecGetArray(x, &xa));
  OPTISTEP_PETSC(VecGetArray(v, &va));
  for (PetscInt l = 0; l < mesh_.n_owned; ++l) {
    const Vec3& v0 = scene_.bodies[mesh_.node_body[l]].initial_velocity;
    for (int d = 0; d < 3; ++d) {
      xa[3 * l + d] = mesh_.X[l][d];
      va[3 * l + d] = IsConstrained(static_cast<int>(l)) ? 0.0 : v0[d];
    }
  }
  OPTISTEP_PETSC(VecRestoreArray(x, &xa));
  OPTISTEP_PETSC(VecRestoreArray(v, &va));
}

void FemModel::TetDiagnostics(Vec x, std::vector<double>* J, std::vector<double>* von_mises) const {
  const GhostedLocalView local(x);
  const PetscScalar* xl = local.data();
  J->clear();
  von_mises->clear();
  for (size_t e = 0; e < mesh_.tets.size(); ++e) {
    if (!mesh_.tet_counted[e]) continue;
    const Mat3 F = DeformationGradient(TetPositions(xl, mesh_.tets[e]), beta_[e]);
    Mat3 P;
    MaterialOf(static_cast<int>(e)).PsiAndP(F, &P);
    J->push_back(F.determinant());
    von_mises->push_back(VonMisesStress(F, P));
  }
}

}  // namespace optistep
