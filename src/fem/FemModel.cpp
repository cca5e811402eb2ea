#include "fem/FemModel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/Error.hpp"
#include "core/GhostedVector.hpp"
#include "fem/TetElement.hpp"
#include "model/InitialConditions.hpp"
#include "model/NodeSelection.hpp"

namespace optistep {

FemModel::FemModel(const ModelConfig& scene, const FrictionConfig& friction,
                   const SelfContactConfig& self_contact, DistributedTetMesh mesh)
    : scene_(scene), friction_(friction), self_contact_(self_contact), gravity_tau_(scene.gravity_time_function), mesh_(std::move(mesh)) {
  for (const auto& body : scene_.bodies)
    materials_.push_back(MakeMaterial(
        body.material.model,
        LameParameters::FromYoungPoisson(body.material.E, body.material.nu)));
  for (const auto& c : scene_.collision_objects) collision_objects_.emplace_back(c);

  ghost_nodes_.assign(mesh_.local_to_global.begin() + mesh_.n_owned,
                      mesh_.local_to_global.end());
  OPTISTEP_PETSC(ISLocalToGlobalMappingCreate(mesh_.comm, 3, static_cast<PetscInt>(mesh_.n_local),
                                              mesh_.local_to_global.data(), PETSC_COPY_VALUES,
                                              l2g_.out()));
  SetUpElements();
  SetUpDirichlet();
}

FemModel::~FemModel() = default;

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
  for (size_t c = 0; c < scene_.boundary_conditions.size(); ++c) {
    const auto& bc = scene_.boundary_conditions[c];
    const std::vector<char> is_selected = SelectNodes(bc.select, mesh_, scene_.bodies);
    auto selected = [&](PetscInt l) { return is_selected[l] != 0; };

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
  {
    const OwnedVec flags(CreateNodeVector());
    {
      VecArray fa(flags);
      for (PetscInt l = 0; l < mesh_.n_owned; ++l)
        for (int d = 0; d < 3; ++d) fa[3 * l + d] = dirichlet_[l] >= 0 ? 1.0 : 0.0;
    }
    const GhostedLocalView local(flags);
    constrained_local_.resize(mesh_.n_local);
    for (PetscInt l = 0; l < mesh_.n_local; ++l) constrained_local_[l] = local.data()[3 * l] > 0.5;
  }

  PetscInt local = 0;
  for (int d : dirichlet_) local += (d >= 0);
  MPI_Allreduce(&local, &n_constrained_global_, 1, MPIU_INT, MPI_SUM, mesh_.comm);
}

Vec3 FemModel::DirichletTarget(int l, double t) const {
  return motions_[dirichlet_[l]].Position(mesh_.X[l], t);
}

void FemModel::InitialState(Vec x, Vec v) const {
  // Per body: the center of mass at rest (the default center of the prestrain and of the
  // angular velocity), and for velocity tables the node count and first original node id.
  const std::size_t n_bodies = scene_.bodies.size();
  std::vector<double> sums(5 * n_bodies, 0.0);  // m, m X, nodes
  std::vector<long long> first(n_bodies, std::numeric_limits<long long>::max());
  for (PetscInt l = 0; l < mesh_.n_owned; ++l) {
    const int b = mesh_.node_body[l];
    sums[5 * b] += mass_[l];
    for (int d = 0; d < 3; ++d) sums[5 * b + 1 + d] += mass_[l] * mesh_.X[l][d];
    sums[5 * b + 4] += 1.0;
    first[b] = std::min(first[b], static_cast<long long>(mesh_.node_original_id[l]));
  }
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, mesh_.comm);
  MPI_Allreduce(MPI_IN_PLACE, first.data(), static_cast<int>(n_bodies), MPI_LONG_LONG, MPI_MIN, mesh_.comm);
  std::vector<Vec3> center(n_bodies);
  std::vector<std::unique_ptr<InitialVelocity>> velocity;
  std::vector<std::vector<Vec3>> table(n_bodies);
  std::string bad_table;
  for (std::size_t b = 0; b < n_bodies; ++b) {
    center[b] = Vec3(sums[5 * b + 1], sums[5 * b + 2], sums[5 * b + 3]) / sums[5 * b];
    velocity.push_back(std::make_unique<InitialVelocity>(
        scene_.bodies[b], center[b], scene_.path + ": bodies[" + std::to_string(b) + "]"));
    const std::string& path = scene_.bodies[b].initial_conditions.velocity_table;
    if (path.empty()) continue;
    try {
      table[b] = ReadVelocityTable(path, static_cast<long long>(sums[5 * b + 4]));
    } catch (const InputError& e) {
      bad_table = scene_.path + ": bodies[" + std::to_string(b) +
                  "].initial_conditions.velocity_table: " + e.what();
    }
  }
  ThrowIfAnyRank(mesh_.comm, bad_table);
  PetscScalar *xa = nullptr, *va = nullptr;
  OPTISTEP_PETSC(VecGetArray(x, &xa));
  OPTISTEP_PETSC(VecGetArray(v, &va));
  std::string bad_velocity;
  for (PetscInt l = 0; l < mesh_.n_owned; ++l) {
    const int b = mesh_.node_body[l];
    const Vec3 x0 = PrestrainedPosition(scene_.bodies[b].initial_conditions, center[b], mesh_.X[l]);
    Vec3 v0 = Vec3::Zero();
    try {
      v0 = (*velocity[b])(x0);
    } catch (const InputError& e) {
      if (bad_velocity.empty()) bad_velocity = e.what();
    }
    if (!table[b].empty()) {
      const Vec3& row = table[b][mesh_.node_original_id[l] - first[b]];
      if (!std::isnan(row[0])) v0 += row;
    }
    for (int d = 0; d < 3; ++d) {
      xa[3 * l + d] = x0[d];
      va[3 * l + d] = IsConstrained(static_cast<int>(l)) ? 0.0 : v0[d];
    }
  }
  OPTISTEP_PETSC(VecRestoreArray(x, &xa));
  OPTISTEP_PETSC(VecRestoreArray(v, &va));
  ThrowIfAnyRank(mesh_.comm, bad_velocity);
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
