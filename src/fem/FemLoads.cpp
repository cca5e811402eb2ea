#include "fem/FemLoads.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "core/Error.hpp"
#include "model/NodeSelection.hpp"

namespace optistep {
namespace {

/// The skew matrix [v]_x with [v]_x w = v x w.
Mat3 Cross(const Vec3& v) {
  Mat3 m;
  m << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
  return m;
}

std::string Label(const LoadConfig& load, std::size_t i) {
  return "loads[" + std::to_string(i) + "] ('" + load.name + "')";
}

}  // namespace

FemLoads::FemLoads(const FemModel& model) : model_(model), loads_(model.scene().loads) {
  const DistributedTetMesh& mesh = model_.mesh();
  const ModelConfig& scene = model_.scene();
  dead_.resize(loads_.size());
  pressure_.assign(loads_.size(), 0.0);
  force_.assign(3 * static_cast<std::size_t>(mesh.n_owned), 0.0);
  for (std::size_t i = 0; i < loads_.size(); ++i) {
    const LoadConfig& load = loads_[i];
    tau_.emplace_back(load.time_function);
    auto& dead = dead_[i];
    using Kind = LoadConfig::Kind;
    if (load.kind == Kind::kBodyForce) {
      int body = -1;
      for (int b = 0; b < static_cast<int>(scene.bodies.size()); ++b)
        if (scene.bodies[b].name == load.body) body = b;
      for (PetscInt l = 0; l < mesh.n_owned; ++l)
        if (body < 0 || mesh.node_body[l] == body)
          dead.emplace_back(static_cast<int>(l), model_.Mass(static_cast<int>(l)) * load.acceleration);
      continue;
    }
    const std::vector<char> selected = SelectNodes(load.select, mesh, scene.bodies);
    if (load.kind == Kind::kPoint) {
      long long n = 0;
      for (PetscInt l = 0; l < mesh.n_owned; ++l) n += selected[l];
      MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG_LONG, MPI_SUM, mesh.comm);
      if (n == 0)
        throw InputError(scene.path + ": " + Label(load, i) + ".select: the selection holds no node");
      for (PetscInt l = 0; l < mesh.n_owned; ++l)
        if (selected[l]) dead.emplace_back(static_cast<int>(l), load.force / static_cast<double>(n));
      continue;
    }
    const std::vector<Face> faces = SelectedFaces(selected, static_cast<int>(i));
    long long n = 0;
    for (const Face& f : faces) n += f.counted;
    MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_LONG_LONG, MPI_SUM, mesh.comm);
    if (n == 0)
      throw InputError(scene.path + ": " + Label(load, i) +
                       ".select: the selection holds no boundary face (all three nodes selected)");
    if (load.kind == Kind::kPressure && load.follower) {
      // The rim of the loaded surface: edges with an owned node that one loaded face holds.
      std::map<std::pair<PetscInt, PetscInt>, int> edges;
      for (const Face& f : faces)
        for (int k = 0; k < 3; ++k) {
          PetscInt a = f.node[k], b = f.node[(k + 1) % 3];
          if (a > b) std::swap(a, b);
          ++edges[{a, b}];
        }
      std::string free_rim;
      for (const auto& [edge, count] : edges) {
        if (count != 1 || !free_rim.empty()) continue;
        for (const PetscInt l : {edge.first, edge.second})
          if (l < mesh.n_owned && !model_.IsConstrained(static_cast<int>(l)) && free_rim.empty()) {
            const Vec3& X = mesh.X[l];
            free_rim = scene.path + ": " + Label(load, i) +
                       ": a follower pressure needs a closed loaded surface or a rim held by "
                       "boundary_conditions, but the rim node at [" + std::to_string(X.x()) + ", " +
                       std::to_string(X.y()) + ", " + std::to_string(X.z()) +
                       "] is free (use follower: false for a dead pressure)";
          }
      }
      ThrowIfAnyRank(mesh.comm, free_rim);
      follower_faces_.insert(follower_faces_.end(), faces.begin(), faces.end());
      continue;
    }
    // Dead traction, or dead pressure t = -p n0: t A0 / 3 per node, n0 A0 = (X_b - X_a) x (X_c - X_a) / 2.
    std::vector<Vec3> nodal(mesh.n_owned, Vec3::Zero());
    std::vector<char> loaded(mesh.n_owned, 0);
    for (const Face& f : faces) {
      const Vec3 area_normal = 0.5 * (mesh.X[f.node[1]] - mesh.X[f.node[0]])
                                         .cross(mesh.X[f.node[2]] - mesh.X[f.node[0]]);
      const Vec3 t_A0 = load.kind == Kind::kTraction ? Vec3(load.traction * area_normal.norm())
                                                     : Vec3(-load.pressure * area_normal);
      for (const int l : f.node)
        if (l < mesh.n_owned) {
          nodal[l] += t_A0 / 3.0;
          loaded[l] = 1;
        }
    }
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      if (loaded[l]) dead.emplace_back(static_cast<int>(l), nodal[l]);
  }
  for (const auto& dead : dead_) any_dead_ |= !dead.empty();
}

std::vector<FemLoads::Face> FemLoads::SelectedFaces(const std::vector<char>& selected, int load) const {
  const DistributedTetMesh& mesh = model_.mesh();
  // How many local tets hold each face (sorted global node ids).
  std::map<std::array<PetscInt, 3>, int> holders;
  auto key = [&](const std::array<int, 4>& t, int opposite) {
    std::array<PetscInt, 3> k;
    for (int j = 0, n = 0; j < 4; ++j)
      if (j != opposite) k[n++] = mesh.local_to_global[t[j]];
    std::sort(k.begin(), k.end());
    return k;
  };
  for (const auto& t : mesh.tets)
    for (int o = 0; o < 4; ++o) ++holders[key(t, o)];
  std::vector<Face> faces;
  for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
    const auto& t = mesh.tets[e];
    for (int o = 0; o < 4; ++o) {
      std::array<int, 3> c;
      for (int j = 0, n = 0; j < 4; ++j)
        if (j != o) c[n++] = j;
      bool all_selected = true, any_owned = false;
      for (const int j : c) {
        all_selected &= selected[t[j]] != 0;
        any_owned |= t[j] < mesh.n_owned;
      }
      if (!all_selected || !any_owned || holders[key(t, o)] != 1) continue;
      // Outward: the opposite corner lies behind the face's normal.
      const Vec3 n = (mesh.X[t[c[1]]] - mesh.X[t[c[0]]]).cross(mesh.X[t[c[2]]] - mesh.X[t[c[0]]]);
      if (n.dot(mesh.X[t[o]] - mesh.X[t[c[0]]]) > 0.0) std::swap(c[1], c[2]);
      Face f;
      f.tet = static_cast<int>(e);
      f.corner = c;
      for (int k = 0; k < 3; ++k) f.node[k] = t[c[k]];
      // The owner of the smallest global node counts the face (it sees all tets around it).
      const int first = *std::min_element(f.node.begin(), f.node.end(), [&](int a, int b) {
        return mesh.local_to_global[a] < mesh.local_to_global[b];
      });
      f.counted = first < mesh.n_owned;
      f.load = load;
      faces.push_back(f);
    }
  }
  return faces;
}

void FemLoads::SetTime(double t) {
  for (std::size_t i = 0; i < loads_.size(); ++i)
    pressure_[i] = loads_[i].pressure * tau_[i](t);
  std::fill(force_.begin(), force_.end(), 0.0);
  for (std::size_t i = 0; i < dead_.size(); ++i) {
    const double tau = tau_[i](t);
    for (const auto& [l, f] : dead_[i])
      for (int d = 0; d < 3; ++d) force_[3 * static_cast<std::size_t>(l) + d] += tau * f[d];
  }
}

double FemLoads::Energy(const double* xl, double* ga) const {
  const DistributedTetMesh& mesh = model_.mesh();
  double energy = 0.0;
  if (any_dead_)
    for (PetscInt l = 0; l < mesh.n_owned; ++l) {
      const double* f = &force_[3 * static_cast<std::size_t>(l)];
      for (int d = 0; d < 3; ++d) {
        energy -= f[d] * xl[3 * l + d];
        if (ga) ga[3 * l + d] -= f[d];
      }
    }
  for (const Face& face : follower_faces_) {
    const double p = pressure_[face.load];
    std::array<Vec3, 3> x;
    for (int k = 0; k < 3; ++k) x[k] = Vec3(xl + 3 * face.node[k]);
    if (face.counted) energy += p / 6.0 * x[0].dot(x[1].cross(x[2]));
    if (!ga) continue;
    for (int k = 0; k < 3; ++k) {
      const int l = face.node[k];
      if (l >= mesh.n_owned) continue;
      const Vec3 g = p / 6.0 * x[(k + 1) % 3].cross(x[(k + 2) % 3]);
      for (int d = 0; d < 3; ++d) ga[3 * l + d] += g[d];
    }
  }
  return energy;
}

double FemLoads::PeakForceSquaredNorm() const {
  const DistributedTetMesh& mesh = model_.mesh();
  double sum = 0.0;
  for (std::size_t i = 0; i < loads_.size(); ++i) {
    std::vector<Vec3> nodal(mesh.n_owned, Vec3::Zero());
    for (const auto& [l, f] : dead_[i]) nodal[l] += f;
    for (const Face& face : follower_faces_) {
      if (face.load != static_cast<int>(i)) continue;
      const Vec3 area_normal = 0.5 * (mesh.X[face.node[1]] - mesh.X[face.node[0]])
                                         .cross(mesh.X[face.node[2]] - mesh.X[face.node[0]]);
      for (const int l : face.node)
        if (l < mesh.n_owned) nodal[l] += loads_[i].pressure * area_normal / 3.0;
    }
    double load_sum = 0.0;
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      if (!model_.IsConstrained(static_cast<int>(l))) load_sum += nodal[l].squaredNorm();
    const double peak = tau_[i].Peak();
    sum += peak * peak * load_sum;
  }
  return sum;
}

void FemLoads::AddHessian(const double* xl, bool project, const BlockSink& add) const {
  // The projected Hessian leaves the load stiffness out (see the header).
  if (project) return;
  const DistributedTetMesh& mesh = model_.mesh();
  for (const Face& face : follower_faces_) {
    const double p = pressure_[face.load];
    std::array<Vec3, 3> x;
    for (int k = 0; k < 3; ++k) x[k] = Vec3(xl + 3 * face.node[k]);
    // d2E/dx_a dx_b = -p/6 [x_c]_x for (a, b, c) cyclic, its transpose for (b, a).
    for (int a = 0; a < 3; ++a) {
      if (face.node[a] >= mesh.n_owned) continue;
      const int b = (a + 1) % 3, c = (a + 2) % 3;
      add(face.tet, face.corner[a], face.corner[b], -p / 6.0 * Cross(x[c]));
      add(face.tet, face.corner[a], face.corner[c], p / 6.0 * Cross(x[b]));
    }
  }
}

}  // namespace optistep
