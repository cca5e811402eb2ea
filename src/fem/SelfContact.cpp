#include "fem/SelfContact.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {
namespace {

const Phase kContactDetectionPhase("ContactDetection");
const Phase kContactTreePhase("ContactTree");


/// Every rank's values of `mine`, concatenated in rank order.
template <typename T>
std::vector<T> AllGather(MPI_Comm comm, const std::vector<T>& mine) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const int bytes = static_cast<int>(mine.size() * sizeof(T));
  std::vector<int> counts(size), offsets(size, 0);
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < size; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<T> all((offsets[size - 1] + counts[size - 1]) / sizeof(T));
  MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE,
                 comm);
  return all;
}

/// Barycentric coordinates of p in tet (x0..x3) all non-negative: p inside or on the tet's
/// boundary (on a face inside the part, p is inside the part: Phi stays continuous there).
bool InsideTet(const Vec3& p, const Vec3& x0, const Vec3& x1, const Vec3& x2, const Vec3& x3) {
  Mat3 D;
  D << x1 - x0, x2 - x0, x3 - x0;
  const Eigen::PartialPivLU<Mat3> lu(D);
  if (!(std::abs(D.determinant()) > 0.0)) return false;
  const Vec3 w = lu.solve(p - x0);
  return w[0] >= 0.0 && w[1] >= 0.0 && w[2] >= 0.0 && w.sum() <= 1.0;
}

}  // namespace

SelfContact::SelfContact(const FemModel& model, double k) : model_(model), k_(k) {
  const DistributedTetMesh& mesh = model.mesh();
  MPI_Comm_rank(mesh.comm, &rank_);
  struct NodeRecord {
    PetscInt original, petsc;
    double X[3], mass;
    int body, constrained;
  };
  std::vector<NodeRecord> mine;
  for (PetscInt l = 0; l < mesh.n_owned; ++l)
    mine.push_back({mesh.node_original_id[l], mesh.local_to_global[l],
                    {mesh.X[l][0], mesh.X[l][1], mesh.X[l][2]}, model.Mass(static_cast<int>(l)),
                    mesh.node_body[l],
                    model.IsConstrained(static_cast<int>(l)) ? 1 : 0});
  const std::vector<NodeRecord> nodes = AllGather(mesh.comm, mine);
  X_.resize(nodes.size());
  body_.resize(nodes.size());
  constrained_.resize(nodes.size());
  mass_.resize(nodes.size());
  petsc_id_.resize(nodes.size());
  for (const NodeRecord& n : nodes) {
    mass_[n.original] = n.mass;
    X_[n.original] = Vec3(n.X[0], n.X[1], n.X[2]);
    body_[n.original] = n.body;
    constrained_[n.original] = static_cast<char>(n.constrained);
    petsc_id_[n.original] = n.petsc;
  }
  struct TetRecord {
    PetscInt original;
    int nodes[4];
    int body;
  };
  std::vector<TetRecord> my_tets;
  for (std::size_t e = 0; e < mesh.tets.size(); ++e)
    if (mesh.tet_counted[e]) {
      TetRecord t{mesh.tet_original_id[e], {}, mesh.tet_body[e]};
      for (int a = 0; a < 4; ++a) t.nodes[a] = static_cast<int>(mesh.node_original_id[mesh.tets[e][a]]);
      my_tets.push_back(t);
    }
  std::vector<TetRecord> tets = AllGather(mesh.comm, my_tets);
  std::sort(tets.begin(), tets.end(),
            [](const TetRecord& a, const TetRecord& b) { return a.original < b.original; });
  // Surface triangles: the faces that belong to one tet only, in tet order.
  std::map<std::array<int, 3>, int> face_count;
  auto face_of = [](const TetRecord& t, int f) {
    std::array<int, 3> face;
    for (int a = 0, k = 0; a < 4; ++a)
      if (a != f) face[k++] = t.nodes[a];
    return face;
  };
  for (const TetRecord& t : tets) {
    tets_.push_back({t.nodes[0], t.nodes[1], t.nodes[2], t.nodes[3]});
    tet_body_.push_back(t.body);
    for (int f = 0; f < 4; ++f) {
      std::array<int, 3> key = face_of(t, f);
      std::sort(key.begin(), key.end());
      ++face_count[key];
    }
  }
  std::vector<char> on_surface(X_.size(), 0);
  for (const TetRecord& t : tets)
    for (int f = 0; f < 4; ++f) {
      const std::array<int, 3> face = face_of(t, f);
      std::array<int, 3> key = face;
      std::sort(key.begin(), key.end());
      if (face_count[key] != 1) continue;
      triangles_.push_back(face);
      triangle_body_.push_back(t.body);
      for (int n : face) on_surface[n] = 1;
    }
  std::vector<int> surface_index(X_.size(), -1);
  for (std::size_t n = 0; n < X_.size(); ++n)
    if (on_surface[n]) {
      surface_index[n] = static_cast<int>(surface_nodes_.size());
      surface_nodes_.push_back(static_cast<int>(n));
    }
  // The interior faces of each surface node's star: with the surface triangles not
  // incident to p they bound the rest of the body, the part p may enter.
  link_faces_.assign(surface_nodes_.size(), {});
  for (const TetRecord& t : tets)
    for (int f = 0; f < 4; ++f) {
      const int s = surface_index[t.nodes[f]];
      if (s < 0) continue;
      std::array<int, 3> key = face_of(t, f);
      std::sort(key.begin(), key.end());
      if (face_count[key] == 2) link_faces_[s].push_back(face_of(t, f));
    }
  double edge_sum = 0.0;
  for (const auto& tri : triangles_)
    for (int k = 0; k < 3; ++k) edge_sum += (X_[tri[k]] - X_[tri[(k + 1) % 3]]).norm();
  skin_ = triangles_.empty() ? 0.0 : edge_sum / (3.0 * static_cast<double>(triangles_.size()));
  x_ = X_;
  Vec x = model.CreateNodeVector();
  OPTISTEP_PETSC(VecScatterCreateToAll(x, &to_all_, &x_all_));
  VecDestroy(&x);
}

SelfContact::~SelfContact() {
  VecScatterDestroy(&to_all_);
  VecDestroy(&x_all_);
  VecDestroy(&v_all_);
}

PetscInt SelfContact::OwnedIndex(int n) const {
  const DistributedTetMesh& mesh = model_.mesh();
  const PetscInt id = petsc_id_[n];
  return id >= mesh.node_begin && id < mesh.node_end ? id - mesh.node_begin : -1;
}

void SelfContact::Update(Vec x) {
  OPTISTEP_PETSC(VecScatterBegin(to_all_, x, x_all_, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(to_all_, x, x_all_, INSERT_VALUES, SCATTER_FORWARD));
  const PetscScalar* xa = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x_all_, &xa));
  bool changed = !have_positions_;
  for (std::size_t n = 0; n < x_.size(); ++n) {
    const Vec3 xn(xa[3 * petsc_id_[n]], xa[3 * petsc_id_[n] + 1], xa[3 * petsc_id_[n] + 2]);
    changed |= xn != x_[n];
    x_[n] = xn;
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(x_all_, &xa));
  have_positions_ = true;
  if (!changed) return;
  ++detections_;
  std::vector<Pair> mine;
  {
    ScopedPhase timed(kContactDetectionPhase);
    mine = DetectOwned();
  }
  // Untimed, as the positions' gather: the time of these collectives is mostly the wait
  // for the slowest rank's other terms, which belongs to them.
  pairs_ = AllGather(model_.mesh().comm, mine);
  std::sort(pairs_.begin(), pairs_.end(), [](const Pair& a, const Pair& b) { return a.p < b.p; });
}

std::vector<SelfContact::Pair> SelfContact::DetectOwned() {
  // Broad phase, rebuilt only when some node has moved more than skin/2 from where it
  // was at the last build (x_ref_): then a tet that holds p now has its box at x_ref_,
  // grown by the skin, around p's position at x_ref_ (both moved at most skin/2), and a
  // triangle's box now lies in its box at x_ref_ grown by skin/2. The pairs found do not
  // depend on when the build happened (see the .hpp), so the cache holds no state.
  double moved2 = 0.0;
  for (std::size_t n = 0; n < x_.size() && have_tree_; ++n)
    moved2 = std::max(moved2, (x_[n] - x_ref_[n]).squaredNorm());
  if (!have_tree_ || moved2 > 0.25 * skin_ * skin_) Rebuild();

  // Each rank tests the surface nodes it owns; Update gathers every pair on every rank,
  // in ascending node id: the pairs are the same on any rank count.
  std::vector<Pair> mine;
  for (std::size_t s = 0; s < surface_nodes_.size(); ++s) {
    const int p = surface_nodes_[s];
    if (OwnedIndex(p) < 0) continue;
    const Vec3& xp = x_[p];
    // The part p has entered: the lowest-numbered candidate tet that holds p.
    int found = -1;
    for (int e : candidates_[s]) {
      const auto& t = tets_[e];
      Box box(x_[t[0]]);  // its box now first: most candidates end here
      for (int a = 1; a < 4; ++a) box.extend(x_[t[a]]);
      if (!box.contains(xp)) continue;
      if (InsideTet(xp, x_[t[0]], x_[t[1]], x_[t[2]], x_[t[3]])) {
        found = e;
        break;
      }
    }
    if (found < 0) continue;
    const int part_body = tet_body_[found];
    struct ClosestQuery {
      using Scalar = double;
      const SelfContact* self;
      const Vec3& xp;
      int p, body;
      int best = -1;
      double best_d = std::numeric_limits<double>::infinity();
      ClosestFeature feature = {};
      // A bound a little below the box's distance, so that every triangle at the best
      // distance is visited and ties go to the lowest triangle id whatever the tree.
      double minimumOnVolume(const Box& box) { return box.squaredExteriorDistance(xp) * (1.0 - 1e-12); }
      double minimumOnObject(int t) {
        const auto& tri = self->triangles_[t];
        if (self->triangle_body_[t] != body) return std::numeric_limits<double>::infinity();
        if (std::find(tri.begin(), tri.end(), p) != tri.end()) return std::numeric_limits<double>::infinity();
        double d = 0.0;
        const ClosestFeature f =
            ClosestTriangleFeature(xp, self->x_[tri[0]], self->x_[tri[1]], self->x_[tri[2]], &d);
        if (best < 0 || d < best_d || (d == best_d && t < best)) {
          best = t;
          best_d = d;
          feature = f;
        }
        return d;
      }
    } closest{this, xp, p, part_body};
    Eigen::BVMinimize(*triangle_tree_, closest);
    std::array<int, 3> triangle = {-1, -1, -1};
    if (closest.best >= 0) triangle = triangles_[closest.best];
    if (part_body == body_[p])  // p entered its own body: the star's inner faces bound it too
      for (const std::array<int, 3>& face : link_faces_[s]) {
        double d = 0.0;
        const ClosestFeature f =
            ClosestTriangleFeature(xp, x_[face[0]], x_[face[1]], x_[face[2]], &d);
        if (d < closest.best_d) {
          closest.best_d = d;
          closest.feature = f;
          triangle = face;
        }
      }
    if (triangle[0] < 0) continue;
    Pair pair;
    pair.p = p;
    pair.triangle = triangle;
    pair.feature = closest.feature;
    pair.d = FeatureSquaredDistance(pair.feature, xp, x_[pair.triangle[0]], x_[pair.triangle[1]],
                                    x_[pair.triangle[2]], nullptr, nullptr);
    mine.push_back(pair);
  }
  return mine;
}

void SelfContact::Rebuild() {
  ScopedPhase timed(kContactTreePhase);
  ++rebuilds_;
  x_ref_ = x_;
  have_tree_ = true;
  std::vector<int> tet_ids(tets_.size()), triangle_ids(triangles_.size());
  std::vector<Box> tet_boxes, triangle_boxes;
  const Vec3 grow = Vec3::Constant(skin_), half = Vec3::Constant(0.5 * skin_);
  for (std::size_t e = 0; e < tets_.size(); ++e) {
    tet_ids[e] = static_cast<int>(e);
    Box box;
    for (int n : tets_[e]) box.extend(x_[n]);
    tet_boxes.emplace_back(box.min() - grow, box.max() + grow);
  }
  for (std::size_t t = 0; t < triangles_.size(); ++t) {
    triangle_ids[t] = static_cast<int>(t);
    Box box;
    for (int n : triangles_[t]) box.extend(x_[n]);
    triangle_boxes.emplace_back(box.min() - half, box.max() + half);
  }
  const Tree tet_tree(tet_ids.begin(), tet_ids.end(), tet_boxes.begin(), tet_boxes.end());
  triangle_tree_ = std::make_unique<Tree>(triangle_ids.begin(), triangle_ids.end(),
                                          triangle_boxes.begin(), triangle_boxes.end());
  // Per surface node, the tets of another part whose grown box holds it (Verlet lists).
  candidates_.assign(surface_nodes_.size(), {});
  for (std::size_t s = 0; s < surface_nodes_.size(); ++s) {
    const int p = surface_nodes_[s];
    if (OwnedIndex(p) < 0) continue;  // tested by its owner
    struct CandidateQuery {
      const SelfContact* self;
      int p;
      std::vector<int>* out;
      bool intersectVolume(const Box& box) { return box.contains(self->x_[p]); }
      bool intersectObject(int e) {
        const auto& t = self->tets_[e];
        if (std::find(t.begin(), t.end(), p) != t.end()) return false;  // p's own star
        out->push_back(e);
        return false;
      }
    } query{this, p, &candidates_[s]};
    Eigen::BVIntersect(tet_tree, query);
    std::sort(candidates_[s].begin(), candidates_[s].end());
  }
}

void SelfContact::ApplyFriction(Vec x, Vec v, double mu, double dt) {
  Update(x);
  if (!v_all_) OPTISTEP_PETSC(VecDuplicate(x_all_, &v_all_));
  OPTISTEP_PETSC(VecScatterBegin(to_all_, v, v_all_, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(to_all_, v, v_all_, INSERT_VALUES, SCATTER_FORWARD));
  std::vector<Vec3> vel(x_.size());
  const PetscScalar* va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(v_all_, &va));
  for (std::size_t n = 0; n < vel.size(); ++n)
    vel[n] = Vec3(va[3 * petsc_id_[n]], va[3 * petsc_id_[n] + 1], va[3 * petsc_id_[n] + 2]);
  OPTISTEP_PETSC(VecRestoreArrayRead(v_all_, &va));
  auto inverse_mass = [&](int n) { return constrained_[n] ? 0.0 : 1.0 / mass_[n]; };
  for (const Pair& pair : pairs_) {
    Vec12 grad_d;
    FeatureSquaredDistance(pair.feature, x_[pair.p], x_[pair.triangle[0]], x_[pair.triangle[1]],
                           x_[pair.triangle[2]], &grad_d, nullptr);
    const Vec3 gp = grad_d.segment<3>(0);  // 2 (x_p - q)
    const double gp2 = gp.squaredNorm();
    if (!(gp2 > 0.0)) continue;
    // dd/dx_k = -w_k dd/dx_p (d is the squared distance to the nearest point of the
    // feature's plane, line or vertex), which gives q's weights.
    Vec3 w;
    for (int k = 0; k < 3; ++k) w[k] = -grad_d.segment<3>(3 + 3 * k).dot(gp) / gp2;
    w /= w.sum();
    double first = 0.0;
    SelfContactPenalty(k_, pair.d, &first, nullptr);
    const double normal_impulse = dt * first * std::sqrt(gp2);
    const Vec3 n = gp / std::sqrt(gp2);
    Vec3 v_rel = vel[pair.p];
    double K = inverse_mass(pair.p);
    for (int k = 0; k < 3; ++k) {
      v_rel -= w[k] * vel[pair.triangle[k]];
      K += w[k] * w[k] * inverse_mass(pair.triangle[k]);
    }
    const Vec3 v_t = v_rel - v_rel.dot(n) * n;
    if (!(K > 0.0) || !(v_t.squaredNorm() > 0.0)) continue;
    Vec3 j = -v_t / K;  // the kinetic-energy minimizer: the relative sliding stops
    const double bound = mu * normal_impulse;
    if (j.norm() > bound) j *= bound / j.norm();  // Coulomb's cone
    vel[pair.p] += inverse_mass(pair.p) * j;
    for (int k = 0; k < 3; ++k) vel[pair.triangle[k]] -= w[k] * inverse_mass(pair.triangle[k]) * j;
  }
  PetscScalar* vo = nullptr;
  OPTISTEP_PETSC(VecGetArray(v, &vo));
  for (std::size_t n = 0; n < vel.size(); ++n) {
    const PetscInt l = OwnedIndex(static_cast<int>(n));
    if (l >= 0)
      for (int d = 0; d < 3; ++d) vo[3 * l + d] = vel[n][d];
  }
  OPTISTEP_PETSC(VecRestoreArray(v, &vo));
}

double SelfContact::Energy() const {
  if (rank_ != 0) return 0.0;
  double energy = 0.0;
  for (const Pair& pair : pairs_) energy += SelfContactPenalty(k_, pair.d, nullptr, nullptr);
  return energy;
}

void SelfContact::PairDerivatives(const Pair& pair, Vec12* g, Mat12* H) const {
  Vec12 grad_d;
  Mat12 hess_d;
  FeatureSquaredDistance(pair.feature, x_[pair.p], x_[pair.triangle[0]], x_[pair.triangle[1]],
                         x_[pair.triangle[2]], &grad_d, H ? &hess_d : nullptr);
  double first = 0.0, second = 0.0;
  SelfContactPenalty(k_, pair.d, &first, &second);
  *g = first * grad_d;
  if (H) *H = second * grad_d * grad_d.transpose() + first * hess_d;
}

void SelfContact::AddGradient(PetscScalar* g) const {
  for (const Pair& pair : pairs_) {
    const int nodes[4] = {pair.p, pair.triangle[0], pair.triangle[1], pair.triangle[2]};
    Vec12 grad;
    PairDerivatives(pair, &grad, nullptr);
    for (int a = 0; a < 4; ++a) {
      const PetscInt l = OwnedIndex(nodes[a]);
      if (l < 0) continue;
      for (int d = 0; d < 3; ++d) g[3 * l + d] += grad[3 * a + d];
    }
  }
}

void SelfContact::AddHessian(Mat H, bool project) {
  OPTISTEP_PETSC(MatSetOption(H, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (const Pair& pair : pairs_) {
    const int nodes[4] = {pair.p, pair.triangle[0], pair.triangle[1], pair.triangle[2]};
    Vec12 grad;
    Mat12 hess;
    PairDerivatives(pair, &grad, &hess);
    if (project) {
      const Eigen::SelfAdjointEigenSolver<Mat12> eig(hess);
      hess = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() *
             eig.eigenvectors().transpose();
    }
    // p and the feature's nodes carry the energy; the triangle's other nodes do not.
    bool involved[4] = {true, false, false, false};
    for (int k = 0; k < pair.feature.count; ++k) involved[1 + pair.feature.nodes[k]] = true;
    for (int a = 0; a < 4; ++a) {
      if (!involved[a] || OwnedIndex(nodes[a]) < 0 || constrained_[nodes[a]]) continue;
      for (int b = 0; b < 4; ++b) {
        if (!involved[b] || constrained_[nodes[b]]) continue;
        const Mat3 block = hess.block<3, 3>(3 * a, 3 * b);
        const PetscInt row = petsc_id_[nodes[a]], col = petsc_id_[nodes[b]];
        OPTISTEP_PETSC(MatSetValuesBlocked(H, 1, &row, 1, &col, block.data(), ADD_VALUES));
      }
    }
  }
  ScopedPhase phase(kAssemblyPhase);
  OPTISTEP_PETSC(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
}

}  // namespace optistep
