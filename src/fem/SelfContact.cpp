#include "fem/SelfContact.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>
#include <unordered_set>

#include "core/Error.hpp"
#include "core/Exchange.hpp"
#include "core/Phases.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {
namespace {

const Phase kContactDetectionPhase("ContactDetection");
const Phase kContactTreePhase("ContactTree");

/// Surface nodes per leaf box that a rank shows the others at a rebuild (our choice: a
/// few boxes per body and rank, each around a patch of about this many nodes).
constexpr std::size_t kNodesPerBox = 8;

/// Appends value's bytes to out (messages of plain records).
template <typename T>
void Put(std::vector<std::byte>* out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  const std::size_t at = out->size();
  out->resize(at + sizeof(T));
  std::memcpy(out->data() + at, &value, sizeof(T));
}

/// Reads a T at *at and advances *at past it.
template <typename T>
T Take(const std::vector<std::byte>& in, std::size_t* at) {
  T value;
  std::memcpy(&value, in.data() + *at, sizeof(T));
  *at += sizeof(T);
  return value;
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

using Box = Eigen::AlignedBox<double, 3>;

/// Boxes around the points x[i], i in ids[begin, end): split at the median of the
/// longest axis until a box holds at most kNodesPerBox points.
void LeafBoxes(const std::vector<Vec3>& x, std::vector<int>* ids, std::size_t begin, std::size_t end,
               std::vector<Box>* out) {
  Box box;
  for (std::size_t i = begin; i < end; ++i) box.extend(x[(*ids)[i]]);
  if (end - begin <= kNodesPerBox) {
    out->push_back(box);
    return;
  }
  int axis = 0;
  box.sizes().maxCoeff(&axis);
  const std::size_t mid = begin + (end - begin) / 2;
  std::nth_element(ids->begin() + begin, ids->begin() + mid, ids->begin() + end,
                   [&](int a, int b) { return x[a][axis] < x[b][axis] || (x[a][axis] == x[b][axis] && a < b); });
  LeafBoxes(x, ids, begin, mid, out);
  LeafBoxes(x, ids, mid, end, out);
}

// Halo messages: a node, a tet and a surface triangle, by original ids.
struct NodeRecord {
  PetscInt original, petsc;
  double X[3], x[3];
  int body, constrained;
};
struct TetRecord {
  PetscInt id, nodes[4];
  int body;
};
struct TriangleRecord {
  PetscInt id, nodes[3];
  int body;
};

}  // namespace

SelfContact::SelfContact(const FemModel& model, double k) : model_(model), k_(k) {
  const DistributedTetMesh& mesh = model.mesh();
  MPI_Comm_rank(mesh.comm, &rank_);
  MPI_Comm_size(mesh.comm, &size_);
  node_begin_.resize(size_ + 1);
  MPI_Allgather(&mesh.node_begin, 1, MPIU_INT, node_begin_.data(), 1, MPIU_INT, mesh.comm);
  node_begin_[size_] = mesh.n_global_nodes;
  halo_to_.assign(size_, {});
  halo_from_.assign(size_, {});
  // Held nodes: the local ones, in local order.
  const int n_local = static_cast<int>(mesh.n_local);
  for (int l = 0; l < n_local; ++l) {
    original_.push_back(mesh.node_original_id[l]);
    petsc_id_.push_back(mesh.local_to_global[l]);
    X_.push_back(mesh.X[l]);
    body_.push_back(mesh.node_body[l]);
    constrained_.push_back(static_cast<char>(model.IsConstrainedLocal(l)));
    held_node_[mesh.node_original_id[l]] = l;
  }
  for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
    tets_.push_back(mesh.tets[e]);
    tet_id_.push_back(mesh.tet_original_id[e]);
    tet_body_.push_back(mesh.tet_body[e]);
    exported_tet_.push_back(mesh.tet_counted[e]);
  }
  local_tets_ = tets_.size();
  // Surface triangles: faces of one tet only. The owner of a node holds every tet around
  // it, so a face with an owned node is counted completely here.
  auto face_of = [&](std::size_t e, int f) {
    std::array<int, 3> face;
    for (int a = 0, j = 0; a < 4; ++a)
      if (a != f) face[j++] = tets_[e][a];
    return face;
  };
  auto key_of = [&](const std::array<int, 3>& face) {
    std::array<PetscInt, 3> key = {original_[face[0]], original_[face[1]], original_[face[2]]};
    std::sort(key.begin(), key.end());
    return key;
  };
  auto has_owned = [&](const std::array<int, 3>& face) {
    return face[0] < mesh.n_owned || face[1] < mesh.n_owned || face[2] < mesh.n_owned;
  };
  std::map<std::array<PetscInt, 3>, int> face_count;
  for (std::size_t e = 0; e < local_tets_; ++e)
    for (int f = 0; f < 4; ++f)
      if (has_owned(face_of(e, f))) ++face_count[key_of(face_of(e, f))];
  std::vector<char> on_surface(n_local, 0);
  for (std::size_t e = 0; e < local_tets_; ++e)
    for (int f = 0; f < 4; ++f) {
      const std::array<int, 3> face = face_of(e, f);
      if (!has_owned(face) || face_count[key_of(face)] != 1) continue;
      triangles_.push_back(face);
      triangle_id_.push_back(4 * tet_id_[e] + f);
      triangle_body_.push_back(tet_body_[e]);
      // Sent by the owner of its lowest PETSc node, which holds every tet around it.
      const int lowest = *std::min_element(face.begin(), face.end(), [&](int a, int b) {
        return petsc_id_[a] < petsc_id_[b];
      });
      exported_triangle_.push_back(static_cast<char>(lowest < mesh.n_owned));
      for (int n : face) on_surface[n] = 1;
    }
  local_triangles_ = triangles_.size();
  sorted_local_tet_ids_ = tet_id_;
  std::sort(sorted_local_tet_ids_.begin(), sorted_local_tet_ids_.end());
  sorted_local_triangle_ids_ = triangle_id_;
  std::sort(sorted_local_triangle_ids_.begin(), sorted_local_triangle_ids_.end());
  for (int l = 0; l < mesh.n_owned; ++l)
    if (on_surface[l]) surface_nodes_.push_back(l);
  std::sort(surface_nodes_.begin(), surface_nodes_.end(),
            [&](int a, int b) { return original_[a] < original_[b]; });
  // The faces of each owned surface node's star opposite the node (its owner holds every
  // tet around it): with the surface triangles not incident to p they bound the rest of
  // p's body, the part p may enter. A face of them on the surface is also a searched
  // triangle; the minimum over both is the same. Ascending original ids, so that ties
  // fall the same way on any rank count.
  std::vector<int> surface_index(n_local, -1);
  for (std::size_t s = 0; s < surface_nodes_.size(); ++s) surface_index[surface_nodes_[s]] = static_cast<int>(s);
  link_faces_.assign(surface_nodes_.size(), {});
  for (std::size_t e = 0; e < local_tets_; ++e)
    for (int f = 0; f < 4; ++f) {
      const int n = tets_[e][f];
      if (n < n_local && surface_index[n] >= 0) link_faces_[surface_index[n]].push_back(face_of(e, f));
    }
  for (auto& faces : link_faces_)
    std::sort(faces.begin(), faces.end(), [&](const std::array<int, 3>& a, const std::array<int, 3>& b) {
      return key_of(a) < key_of(b);
    });
  // The skin: the mean edge of the surface triangles, each summed once (by its sender),
  // in triangle id order.
  std::vector<std::size_t> sent;
  for (std::size_t t = 0; t < local_triangles_; ++t)
    if (exported_triangle_[t]) sent.push_back(t);
  std::sort(sent.begin(), sent.end(), [&](std::size_t a, std::size_t b) { return triangle_id_[a] < triangle_id_[b]; });
  double sums[2] = {0.0, static_cast<double>(sent.size())};
  for (std::size_t t : sent)
    for (int j = 0; j < 3; ++j) sums[0] += (X_[triangles_[t][j]] - X_[triangles_[t][(j + 1) % 3]]).norm();
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, mesh.comm);
  skin_ = sums[1] > 0.0 ? sums[0] / (3.0 * sums[1]) : 0.0;
  h_ = 2.0 * skin_;
  x_ = X_;
  // The local nodes' positions: one VecScatter, built once.
  OwnedIS from;
  OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, mesh.n_local, petsc_id_.data(), PETSC_COPY_VALUES, from.out()));
  OPTISTEP_PETSC(VecCreateSeq(PETSC_COMM_SELF, 3 * mesh.n_local, x_held_.out()));
  const OwnedVec x(model.CreateNodeVector());
  OPTISTEP_PETSC(VecScatterCreate(x, from, x_held_, nullptr, scatter_.out()));
}

SelfContact::~SelfContact() = default;

PetscInt SelfContact::OwnedIndex(PetscInt petsc) const {
  const DistributedTetMesh& mesh = model_.mesh();
  return petsc >= mesh.node_begin && petsc < mesh.node_end ? petsc - mesh.node_begin : -1;
}

bool SelfContact::FetchPositions(Vec x) {
  OPTISTEP_PETSC(VecScatterBegin(scatter_, x, x_held_, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(scatter_, x, x_held_, INSERT_VALUES, SCATTER_FORWARD));
  bool changed = !have_positions_;
  auto set = [&](std::size_t n, const double* v) {
    const Vec3 xn(v[0], v[1], v[2]);
    changed |= xn != x_[n];
    x_[n] = xn;
  };
  const std::size_t n_local = static_cast<std::size_t>(model_.mesh().n_local);
  {
    const VecArrayRead xa(x_held_);
    for (std::size_t n = 0; n < n_local; ++n) set(n, xa.data() + 3 * n);
  }
  // The halo's positions, point to point from the ranks that sent it, which hold them
  // among their local nodes (the lists of nodes sent and received at the last rebuild).
  const MPI_Comm comm = model_.comm();
  std::vector<std::vector<double>> out(size_), in(size_);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    if (halo_from_[r].empty()) continue;
    in[r].resize(3 * halo_from_[r].size());
    requests.emplace_back();
    MPI_Irecv(in[r].data(), static_cast<int>(in[r].size()), MPI_DOUBLE, r, 1, comm, &requests.back());
  }
  for (int r = 0; r < size_; ++r) {
    if (halo_to_[r].empty()) continue;
    for (int n : halo_to_[r]) out[r].insert(out[r].end(), {x_[n][0], x_[n][1], x_[n][2]});
    requests.emplace_back();
    MPI_Isend(out[r].data(), static_cast<int>(out[r].size()), MPI_DOUBLE, r, 1, comm, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (int r = 0; r < size_; ++r)
    for (std::size_t i = 0; i < halo_from_[r].size(); ++i)
      if (halo_from_[r][i] >= 0) set(static_cast<std::size_t>(halo_from_[r][i]), &in[r][3 * i]);
  have_positions_ = true;
  return changed;
}

void SelfContact::Update(Vec x) {
  // One reduction decides for all ranks: did any position change, and has any node
  // moved more than skin/2 since the last build (then the trees and the halo are
  // rebuilt: a tet that holds p now has its box at x_ref_, grown by the skin, around p's
  // position at x_ref_, both having moved at most skin/2, and a triangle's box now lies
  // in its box at x_ref_ grown by skin/2).
  double flags[2] = {FetchPositions(x) ? 1.0 : 0.0, 0.0};
  for (std::size_t n = 0; n < x_ref_.size() && have_tree_; ++n)
    flags[1] = std::max(flags[1], (x_[n] - x_ref_[n]).squaredNorm());
  MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_DOUBLE, MPI_MAX, model_.comm());
  if (flags[0] == 0.0) return;
  ++detections_;
  bool rebuild = !have_tree_ || flags[1] > 0.25 * skin_ * skin_;
  if (rebuild) h_ = 2.0 * skin_;
  for (;;) {  // until every rank's queries found their triangle within its halo
    std::vector<Routed> mine;
    bool complete = true;
    {
      ScopedPhase timed(kContactDetectionPhase);
      if (rebuild) Rebuild();
      complete = DetectOwned(&mine);
    }
    // Untimed, as the positions' fetch and the reduction above: the time of these
    // collectives is mostly the wait for the other ranks.
    if (RoutePairs(std::move(mine), complete)) break;
    if (!complete) h_ *= 2.0;
    ++halo_growths_;
    rebuild = true;
  }
}

void SelfContact::Rebuild() {
  ScopedPhase timed(kContactTreePhase);
  const DistributedTetMesh& mesh = model_.mesh();
  ++rebuilds_;
  // Drop the old halo.
  const std::size_t n_local = static_cast<std::size_t>(mesh.n_local);
  for (std::size_t n = n_local; n < original_.size(); ++n) held_node_.erase(original_[n]);
  for (auto* v : {&original_, &petsc_id_}) v->resize(n_local);
  X_.resize(n_local);
  body_.resize(n_local);
  constrained_.resize(n_local);
  x_.resize(n_local);
  tets_.resize(local_tets_);
  tet_id_.resize(local_tets_);
  tet_body_.resize(local_tets_);
  triangles_.resize(local_triangles_);
  triangle_id_.resize(local_triangles_);
  triangle_body_.resize(local_triangles_);
  x_ref_ = x_;
  have_tree_ = true;

  halo_complete_ = size_ == 1;
  if (size_ > 1) {
    ReceiveHalo();
  }

  // The trees over what this rank holds.
  std::vector<int> tet_ids(tets_.size()), triangle_ids(triangles_.size());
  std::vector<Box> tet_boxes, triangle_boxes;
  const Vec3 grow = Vec3::Constant(skin_), half = Vec3::Constant(0.5 * skin_);
  tet_box_now_.resize(tets_.size());
  for (std::size_t e = 0; e < tets_.size(); ++e) {
    tet_ids[e] = static_cast<int>(e);
    Box box;
    for (int n : tets_[e]) box.extend(x_[n]);
    tet_box_now_[e] = box;
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
  // Per owned surface node, the tets of another part whose grown box holds it (Verlet
  // lists), ascending original id.
  candidates_.assign(surface_nodes_.size(), {});
  for (std::size_t s = 0; s < surface_nodes_.size() && !tets_.empty(); ++s) {
    const int p = surface_nodes_[s];
    struct CandidateQuery {
      const SelfContact* self;
      int p;
      std::vector<int>* out;
      bool intersectVolume(const Box& box) { return box.contains(self->x_[p]); }
      bool intersectObject(int e) {
        const auto& t = self->tets_[e];
        if (std::find(t.begin(), t.end(), p) != t.end()) return false;  // p's own star
        // Until the next build p and the tet's nodes move at most skin/2 each, so p can
        // enter the tet only if its distance to the tet's box now is at most the skin: a
        // ball, where the tree's grown box is a cube (a margin against round-off).
        const double d2 = self->tet_box_now_[e].squaredExteriorDistance(self->x_[p]);
        if (d2 > (1.0 + 1e-9) * self->skin_ * self->skin_) return false;
        out->push_back(e);
        return false;
      }
    } query{this, p, &candidates_[s]};
    Eigen::BVIntersect(tet_tree, query);
    std::sort(candidates_[s].begin(), candidates_[s].end(),
              [&](int a, int b) { return tet_id_[a] < tet_id_[b]; });
  }
  // A tet is a candidate of many nodes: DetectOwned takes its box once per detection.
  std::vector<char> is_candidate(tets_.size(), 0);
  for (const std::vector<int>& list : candidates_)
    for (int e : list) is_candidate[e] = 1;
  candidate_tets_.clear();
  for (std::size_t e = 0; e < tets_.size(); ++e)
    if (is_candidate[e]) candidate_tets_.push_back(static_cast<int>(e));
  const Holdings held_now = held();
  char line[256];
  std::snprintf(line, sizeof line,
                "rebuild %zu: h %.3g m, %zu tets (%zu halo), %zu triangles (%zu halo), %zu nodes (%zu halo), %zu bytes",
                rebuilds_, h_, held_now.tets, held_now.halo_tets, held_now.triangles, held_now.halo_triangles,
                held_now.nodes, held_now.halo_nodes, held_now.bytes);
  OPTISTEP_PETSC(PetscInfo(nullptr, "SelfContact %s\n", line));
}

void SelfContact::ReceiveHalo() {
  const DistributedTetMesh& mesh = model_.mesh();
  const MPI_Comm comm = mesh.comm;
  const std::size_t n_local = static_cast<std::size_t>(mesh.n_local);
  // Every rank's boxes around the surface nodes it owns (per body), its h, and the box of
  // its local nodes (for the scene's extent).
  std::vector<double> mine = {h_};
  Box local_box;
  for (const Vec3& x : x_) local_box.extend(x);
  std::vector<Box> boxes;
  if (x_.empty()) local_box = Box(Vec3::Zero());
  boxes.push_back(local_box);
  {
    std::map<int, std::vector<int>> by_body;
    for (int l : surface_nodes_) by_body[body_[l]].push_back(l);
    for (auto& [body, ids] : by_body) LeafBoxes(x_, &ids, 0, ids.size(), &boxes);
  }
  for (const Box& b : boxes) mine.insert(mine.end(), {b.min()[0], b.min()[1], b.min()[2], b.max()[0], b.max()[1], b.max()[2]});
  std::vector<int> counts;
  const std::vector<double> all = AllGatherLists(comm, mine, &counts);
  Box scene;
  std::vector<Box> others;        // leaf boxes of the other ranks
  std::vector<int> others_rank;
  std::vector<double> h_of(size_);
  for (int r = 0, at = 0; r < size_; at += counts[r], ++r) {
    h_of[r] = all[at];
    for (int i = at + 1; i + 6 <= at + counts[r]; i += 6) {
      const Box b(Vec3(all[i], all[i + 1], all[i + 2]), Vec3(all[i + 3], all[i + 4], all[i + 5]));
      if (i == at + 1) {
        scene.extend(b);
      } else if (r != rank_) {
        others.push_back(b);
        others_rank.push_back(r);
      }
    }
  }
  // h spanning the scene's extent: every triangle is held.
  halo_complete_ = h_ >= scene.diagonal().norm();

  // What to send where: a tet whose box (grown by the skin) meets a rank's box, a
  // triangle whose box grown by skin + h (that rank's h) does.
  std::vector<std::vector<std::byte>> send(size_);
  halo_to_.assign(size_, {});
  halo_from_.assign(size_, {});
  if (!others.empty()) {
    std::vector<int> ids(others.size());
    std::vector<Box> grown;
    for (std::size_t i = 0; i < others.size(); ++i) {
      ids[i] = static_cast<int>(i);
      const Vec3 g = Vec3::Constant(skin_ + h_of[others_rank[i]]);
      grown.emplace_back(others[i].min() - g, others[i].max() + g);
    }
    const Tree tree(ids.begin(), ids.end(), grown.begin(), grown.end());
    std::vector<std::vector<int>> tets_to(size_), triangles_to(size_);
    auto destinations = [&](const Box& box, double grow_by_h, std::vector<std::vector<int>>* to, int item) {
      struct Query {
        const Box& box;
        const std::vector<Box>& others;
        const std::vector<int>& rank;
        const std::vector<double>& h_of;
        double skin, with_h;
        std::vector<int> hit;
        bool intersectVolume(const Box& b) { return b.intersects(box); }
        bool intersectObject(int i) {
          const Vec3 g = Vec3::Constant(skin + with_h * h_of[rank[i]]);
          if (Box(others[i].min() - g, others[i].max() + g).intersects(box)) hit.push_back(rank[i]);
          return false;
        }
      } query{box, others, others_rank, h_of, skin_, grow_by_h, {}};
      Eigen::BVIntersect(tree, query);
      std::sort(query.hit.begin(), query.hit.end());
      query.hit.erase(std::unique(query.hit.begin(), query.hit.end()), query.hit.end());
      for (int r : query.hit) (*to)[r].push_back(item);
    };
    for (std::size_t e = 0; e < local_tets_; ++e) {
      if (!exported_tet_[e]) continue;
      Box box;
      for (int n : tets_[e]) box.extend(x_[n]);
      destinations(box, 0.0, &tets_to, static_cast<int>(e));
    }
    for (std::size_t t = 0; t < local_triangles_; ++t) {
      if (!exported_triangle_[t]) continue;
      Box box;
      for (int n : triangles_[t]) box.extend(x_[n]);
      destinations(box, 1.0, &triangles_to, static_cast<int>(t));
    }
    std::vector<int> stamp(n_local, -1);
    for (int r = 0; r < size_; ++r) {
      if (tets_to[r].empty() && triangles_to[r].empty()) continue;
      std::vector<int> nodes;
      auto add = [&](int n) {
        if (stamp[n] != r) nodes.push_back(n);
        stamp[n] = r;
      };
      for (int e : tets_to[r])
        for (int n : tets_[e]) add(n);
      for (int t : triangles_to[r])
        for (int n : triangles_[t]) add(n);
      halo_to_[r] = nodes;
      std::vector<std::byte>& out = send[r];
      for (std::size_t c : {nodes.size(), tets_to[r].size(), triangles_to[r].size()}) Put(&out, static_cast<std::int64_t>(c));
      for (int n : nodes)
        Put(&out, NodeRecord{original_[n], petsc_id_[n], {X_[n][0], X_[n][1], X_[n][2]},
                             {x_[n][0], x_[n][1], x_[n][2]}, body_[n], constrained_[n]});
      for (int e : tets_to[r]) {
        const auto& t = tets_[e];
        Put(&out, TetRecord{tet_id_[e], {original_[t[0]], original_[t[1]], original_[t[2]], original_[t[3]]}, tet_body_[e]});
      }
      for (int t : triangles_to[r]) {
        const auto& tri = triangles_[t];
        Put(&out, TriangleRecord{triangle_id_[t], {original_[tri[0]], original_[tri[1]], original_[tri[2]]}, triangle_body_[t]});
      }
    }
  }
  // The halo, in source rank order: what this rank holds already is skipped.
  const std::vector<std::vector<std::byte>> received = AllToAll(comm, send);
  std::unordered_set<PetscInt> held_tets, held_triangles;  // received ones
  auto is_new = [](const std::vector<PetscInt>& local, std::unordered_set<PetscInt>* received, PetscInt id) {
    return !std::binary_search(local.begin(), local.end(), id) && received->insert(id).second;
  };
  for (int source = 0; source < size_; ++source) {
    const std::vector<std::byte>& in = received[source];
    if (in.empty()) continue;
    std::size_t at = 0;
    const auto n_nodes = Take<std::int64_t>(in, &at), n_tets = Take<std::int64_t>(in, &at),
               n_triangles = Take<std::int64_t>(in, &at);
    for (std::int64_t i = 0; i < n_nodes; ++i) {
      const NodeRecord n = Take<NodeRecord>(in, &at);
      const bool held = held_node_.count(n.original) > 0;
      halo_from_[source].push_back(held ? -1 : static_cast<int>(original_.size()));
      if (held) continue;
      held_node_[n.original] = static_cast<int>(original_.size());
      original_.push_back(n.original);
      petsc_id_.push_back(n.petsc);
      X_.emplace_back(n.X[0], n.X[1], n.X[2]);
      x_.emplace_back(n.x[0], n.x[1], n.x[2]);
      body_.push_back(n.body);
      constrained_.push_back(static_cast<char>(n.constrained));
    }
    for (std::int64_t i = 0; i < n_tets; ++i) {
      const TetRecord t = Take<TetRecord>(in, &at);
      if (!is_new(sorted_local_tet_ids_, &held_tets, t.id)) continue;
      tets_.push_back({held_node_.at(t.nodes[0]), held_node_.at(t.nodes[1]), held_node_.at(t.nodes[2]),
                       held_node_.at(t.nodes[3])});
      tet_id_.push_back(t.id);
      tet_body_.push_back(t.body);
    }
    for (std::int64_t i = 0; i < n_triangles; ++i) {
      const TriangleRecord t = Take<TriangleRecord>(in, &at);
      if (!is_new(sorted_local_triangle_ids_, &held_triangles, t.id)) continue;
      triangles_.push_back({held_node_.at(t.nodes[0]), held_node_.at(t.nodes[1]), held_node_.at(t.nodes[2])});
      triangle_id_.push_back(t.id);
      triangle_body_.push_back(t.body);
    }
  }
}

bool SelfContact::DetectOwned(std::vector<Routed>* mine) const {
  // Each rank tests the surface nodes it owns, in ascending original id.
  mine->clear();
  bool complete = true;
  // Every triangle within h of p now is held (its box at x_ref_ lies within h + skin of
  // p's position at x_ref_); a little less, against round-off in the boxes.
  const double reach2 = 0.999 * h_ * 0.999 * h_;
  tet_box_now_.resize(tets_.size());
  for (int e : candidate_tets_) {
    const auto& t = tets_[e];
    Box box(x_[t[0]]);
    for (int a = 1; a < 4; ++a) box.extend(x_[t[a]]);
    tet_box_now_[e] = box;
  }
  for (std::size_t s = 0; s < surface_nodes_.size(); ++s) {
    const int p = surface_nodes_[s];
    const Vec3& xp = x_[p];
    // The part p has entered: the lowest-numbered candidate tet that holds p.
    int found = -1;
    for (int e : candidates_[s]) {
      const auto& t = tets_[e];
      if (!tet_box_now_[e].contains(xp)) continue;  // its box now first: most candidates end here
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
        if (best < 0 || d < best_d || (d == best_d && self->triangle_id_[t] < self->triangle_id_[best])) {
          best = t;
          best_d = d;
          feature = f;
        }
        return d;
      }
    } closest{this, xp, p, part_body};
    if (!triangles_.empty()) Eigen::BVMinimize(*triangle_tree_, closest);
    std::array<int, 3> tri = {-1, -1, -1};
    if (closest.best >= 0) tri = triangles_[closest.best];
    if (part_body == body_[p])  // p entered its own body: its star's inner faces bound it too
      for (const std::array<int, 3>& face : link_faces_[s]) {
        double d = 0.0;
        const ClosestFeature f = ClosestTriangleFeature(xp, x_[face[0]], x_[face[1]], x_[face[2]], &d);
        if (d < closest.best_d) {
          closest.best_d = d;
          closest.feature = f;
          tri = face;
        }
      }
    // Complete when the nearest feature lies within h: every triangle nearer is held.
    if (!halo_complete_ && (tri[0] < 0 || closest.best_d > reach2)) complete = false;
    if (tri[0] < 0) continue;
    Routed r;
    const int nodes[4] = {p, tri[0], tri[1], tri[2]};
    for (int a = 0; a < 4; ++a) {
      r.petsc[a] = petsc_id_[nodes[a]];
      r.constrained[a] = constrained_[nodes[a]];
      for (int c = 0; c < 3; ++c) r.x[3 * a + c] = x_[nodes[a]][c];
    }
    r.pair.p = static_cast<int>(original_[p]);
    for (int k = 0; k < 3; ++k) r.pair.triangle[k] = static_cast<int>(original_[tri[k]]);
    r.pair.feature = closest.feature;
    r.pair.d = FeatureSquaredDistance(r.pair.feature, xp, x_[tri[0]], x_[tri[1]], x_[tri[2]], nullptr, nullptr);
    mine->push_back(r);
  }
  return complete;
}

bool SelfContact::RoutePairs(std::vector<Routed> mine, bool complete) {
  // Each pair goes to the owners of its triangle's nodes (once per rank), which add
  // those nodes' rows. One MPI_Alltoall carries the message sizes, this rank's pair
  // count and whether its queries were complete; the pairs go point to point.
  std::vector<std::vector<std::byte>> send(size_);
  for (const Routed& r : mine) {
    int sent_to[3] = {-1, -1, -1};
    for (int a = 1; a < 4; ++a) {
      const int owner = static_cast<int>(
          std::upper_bound(node_begin_.begin(), node_begin_.end(), r.petsc[a]) - node_begin_.begin() - 1);
      if (owner == rank_ || std::find(sent_to, sent_to + 3, owner) != sent_to + 3) continue;
      sent_to[a - 1] = owner;
      Put(&send[owner], r);
    }
  }
  std::vector<long long> out(3 * size_), in(3 * size_);
  for (int r = 0; r < size_; ++r) {
    out[3 * r] = static_cast<long long>(send[r].size());
    out[3 * r + 1] = static_cast<long long>(mine.size());
    out[3 * r + 2] = complete ? 0 : 1;
  }
  const MPI_Comm comm = model_.comm();
  MPI_Alltoall(out.data(), 3, MPI_LONG_LONG, in.data(), 3, MPI_LONG_LONG, comm);
  long long count = 0, incomplete = 0;
  for (int r = 0; r < size_; ++r) {
    count += in[3 * r + 1];
    incomplete += in[3 * r + 2];
  }
  if (incomplete > 0) return false;
  std::vector<std::vector<std::byte>> received(size_);
  std::vector<MPI_Request> requests;
  requests.reserve(2 * static_cast<std::size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    if (in[3 * r] == 0) continue;
    received[r].resize(static_cast<std::size_t>(in[3 * r]));
    requests.emplace_back();
    MPI_Irecv(received[r].data(), static_cast<int>(in[3 * r]), MPI_BYTE, r, 0, comm, &requests.back());
  }
  for (int r = 0; r < size_; ++r) {
    if (send[r].empty()) continue;
    requests.emplace_back();
    MPI_Isend(send[r].data(), static_cast<int>(send[r].size()), MPI_BYTE, r, 0, comm, &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  own_routed_ = std::move(mine);
  touching_ = own_routed_;
  for (const std::vector<std::byte>& bytes : received)  // in rank order
    for (std::size_t at = 0; at < bytes.size();) touching_.push_back(Take<Routed>(bytes, &at));
  std::sort(touching_.begin(), touching_.end(), [](const Routed& a, const Routed& b) { return a.pair.p < b.pair.p; });
  own_pairs_.clear();
  for (const Routed& r : own_routed_) own_pairs_.push_back(r.pair);
  pair_count_ = static_cast<std::size_t>(count);
  return true;
}

std::vector<SelfContact::Routed> SelfContact::GatherRouted() const {
  std::vector<std::byte> mine;
  for (const Routed& r : own_routed_) Put(&mine, r);
  const std::vector<std::byte> all = AllGatherLists(model_.comm(), mine);
  std::vector<Routed> routed;
  for (std::size_t at = 0; at < all.size();) routed.push_back(Take<Routed>(all, &at));
  std::sort(routed.begin(), routed.end(), [](const Routed& a, const Routed& b) { return a.pair.p < b.pair.p; });
  return routed;
}

std::vector<SelfContact::Pair> SelfContact::GatherPairs() const {
  std::vector<Pair> pairs;
  for (const Routed& r : GatherRouted()) pairs.push_back(r.pair);
  return pairs;
}

SelfContact::Holdings SelfContact::held() const {
  Holdings h;
  h.tets = tets_.size();
  h.triangles = triangles_.size();
  h.nodes = original_.size();
  h.halo_tets = tets_.size() - local_tets_;
  h.halo_triangles = triangles_.size() - local_triangles_;
  h.halo_nodes = original_.size() - static_cast<std::size_t>(model_.mesh().n_local);
  std::size_t candidates = 0;
  for (const auto& c : candidates_) candidates += c.size();
  // Per node: ids, rest and current positions, x_ref, body, flag, map entry, scatter
  // values; per tet and triangle: nodes, id, body, a box in the trees' inputs.
  h.bytes = h.nodes * (2 * sizeof(PetscInt) + 4 * sizeof(Vec3) + sizeof(int) + 1 + 32) +
            h.tets * (sizeof(std::array<int, 4>) + sizeof(PetscInt) + sizeof(int) + sizeof(Box)) +
            h.triangles * (sizeof(std::array<int, 3>) + sizeof(PetscInt) + sizeof(int) + sizeof(Box)) +
            candidates * sizeof(int);
  return h;
}

void SelfContact::ApplyFriction(Vec x, Vec v, double mu, double dt) {
  Update(x);
  // Every rank gets every pair and the velocities and inverse masses of their nodes.
  const std::vector<Routed> pairs = GatherRouted();
  struct NodeState {
    PetscInt petsc;
    double v[3], inverse_mass;
  };
  std::vector<PetscInt> touched;
  for (const Routed& r : pairs) touched.insert(touched.end(), r.petsc, r.petsc + 4);
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  std::vector<std::byte> mine;
  {
    const VecArrayRead va(v);
    for (PetscInt n : touched) {
      const PetscInt l = OwnedIndex(n);
      if (l < 0) continue;
      const int li = static_cast<int>(l);
      Put(&mine, NodeState{n, {va[3 * l], va[3 * l + 1], va[3 * l + 2]},
                           model_.IsConstrained(li) ? 0.0 : 1.0 / model_.Mass(li)});
    }
  }
  const std::vector<std::byte> all = AllGatherLists(model_.comm(), mine);
  std::map<PetscInt, NodeState> state;
  for (std::size_t at = 0; at < all.size();) {
    const NodeState s = Take<NodeState>(all, &at);
    state[s.petsc] = s;
  }
  std::map<PetscInt, Vec3> vel;
  for (const auto& [n, s] : state) vel[n] = Vec3(s.v[0], s.v[1], s.v[2]);
  auto inverse_mass = [&](PetscInt n) { return state.at(n).inverse_mass; };
  for (const Routed& r : pairs) {
    const Vec3 xp(r.x[0], r.x[1], r.x[2]), xa(r.x[3], r.x[4], r.x[5]), xb(r.x[6], r.x[7], r.x[8]),
        xc(r.x[9], r.x[10], r.x[11]);
    Vec12 grad_d;
    FeatureSquaredDistance(r.pair.feature, xp, xa, xb, xc, &grad_d, nullptr);
    const Vec3 gp = grad_d.segment<3>(0);  // 2 (x_p - q)
    const double gp2 = gp.squaredNorm();
    if (!(gp2 > 0.0)) continue;
    // dd/dx_k = -w_k dd/dx_p (d is the squared distance to the nearest point of the
    // feature's plane, line or vertex), which gives q's weights.
    Vec3 w;
    for (int k = 0; k < 3; ++k) w[k] = -grad_d.segment<3>(3 + 3 * k).dot(gp) / gp2;
    w /= w.sum();
    double first = 0.0;
    SelfContactPenalty(k_, r.pair.d, &first, nullptr);
    const double normal_impulse = dt * first * std::sqrt(gp2);
    const Vec3 n = gp / std::sqrt(gp2);
    Vec3 v_rel = vel[r.petsc[0]];
    double K = inverse_mass(r.petsc[0]);
    for (int k = 0; k < 3; ++k) {
      v_rel -= w[k] * vel[r.petsc[1 + k]];
      K += w[k] * w[k] * inverse_mass(r.petsc[1 + k]);
    }
    const Vec3 v_t = v_rel - v_rel.dot(n) * n;
    if (!(K > 0.0) || !(v_t.squaredNorm() > 0.0)) continue;
    Vec3 j = -v_t / K;  // the kinetic-energy minimizer: the relative sliding stops
    const double bound = mu * normal_impulse;
    if (j.norm() > bound) j *= bound / j.norm();  // Coulomb's cone
    vel[r.petsc[0]] += inverse_mass(r.petsc[0]) * j;
    for (int k = 0; k < 3; ++k) vel[r.petsc[1 + k]] -= w[k] * inverse_mass(r.petsc[1 + k]) * j;
  }
  const VecArray vo(v);
  for (const auto& [n, vn] : vel) {
    const PetscInt l = OwnedIndex(n);
    if (l >= 0)
      for (int d = 0; d < 3; ++d) vo[3 * l + d] = vn[d];
  }
}

double SelfContact::Energy() const {
  double energy = 0.0;
  for (const Routed& r : own_routed_) energy += SelfContactPenalty(k_, r.pair.d, nullptr, nullptr);
  return energy;
}

void SelfContact::PairDerivatives(const Routed& r, Vec12* g, Mat12* H) const {
  const Vec3 xp(r.x[0], r.x[1], r.x[2]), xa(r.x[3], r.x[4], r.x[5]), xb(r.x[6], r.x[7], r.x[8]),
      xc(r.x[9], r.x[10], r.x[11]);
  Vec12 grad_d;
  Mat12 hess_d;
  FeatureSquaredDistance(r.pair.feature, xp, xa, xb, xc, &grad_d, H ? &hess_d : nullptr);
  double first = 0.0, second = 0.0;
  SelfContactPenalty(k_, r.pair.d, &first, &second);
  *g = first * grad_d;
  if (H) *H = second * grad_d * grad_d.transpose() + first * hess_d;
}

void SelfContact::AddGradient(PetscScalar* g) const {
  for (const Routed& r : touching_) {
    Vec12 grad;
    PairDerivatives(r, &grad, nullptr);
    for (int a = 0; a < 4; ++a) {
      const PetscInt l = OwnedIndex(r.petsc[a]);
      if (l < 0) continue;
      for (int d = 0; d < 3; ++d) g[3 * l + d] += grad[3 * a + d];
    }
  }
}

void SelfContact::AddHessian(Mat H, bool project) {
  OPTISTEP_PETSC(MatSetOption(H, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  for (const Routed& r : touching_) {
    Vec12 grad;
    Mat12 hess;
    PairDerivatives(r, &grad, &hess);
    if (project) {
      const Eigen::SelfAdjointEigenSolver<Mat12> eig(hess);
      hess = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() *
             eig.eigenvectors().transpose();
    }
    // p and the feature's nodes carry the energy; the triangle's other nodes do not.
    bool involved[4] = {true, false, false, false};
    for (int k = 0; k < r.pair.feature.count; ++k) involved[1 + r.pair.feature.nodes[k]] = true;
    for (int a = 0; a < 4; ++a) {
      if (!involved[a] || OwnedIndex(r.petsc[a]) < 0 || r.constrained[a]) continue;
      for (int b = 0; b < 4; ++b) {
        if (!involved[b] || r.constrained[b]) continue;
        const Mat3 block = hess.block<3, 3>(3 * a, 3 * b);
        OPTISTEP_PETSC(MatSetValuesBlocked(H, 1, &r.petsc[a], 1, &r.petsc[b], block.data(), ADD_VALUES));
      }
    }
  }
  ScopedPhase phase(kAssemblyPhase);
  OPTISTEP_PETSC(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
}

}  // namespace optistep
