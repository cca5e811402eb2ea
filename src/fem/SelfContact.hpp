#pragma once
// Penalty self-collisions and body-body collisions of a tetrahedral FEM model (Gast et al.
// 2015, Sec. 5.3): a surface node p inside a tet of another part (another body, or of its
// own body a tet not incident to p) is pushed out by Phi = k d sqrt(d + 1e-15 m^2), d the
// squared distance from p to the closest feature of that part's surface (p's own triangles
// left out, the faces of its star opposite p added, so that Phi is continuous in x).
// Detection: Eigen KdBVHs and Verlet lists over a skin, a cache that does not change the
// pairs. Distribution: each rank holds its local tets and surface triangles plus a halo of
// other ranks' geometry near its owned surface nodes, grown until every query is complete.
// Contract: the pairs (node, triangle, feature, d), the gradient rows and Hessian blocks are
// the same bits on any rank count (owner computes); the energy agrees across rank counts to
// round-off; momentum is conserved; no state crosses steps, so checkpoints need nothing.
// The rule, detection, the halo, the line-search guard and the limits:
// docs/methods/self-contact.md.
#include <petscmat.h>
#include <petscvec.h>

#include <unsupported/Eigen/BVH>
#include <array>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/PetscHandles.hpp"
#include "core/Types.hpp"
#include "fem/ContactDistance.hpp"
#include "fem/FemModel.hpp"

namespace optistep {

class SelfContact {
 public:
  /// One penetrating surface node: p, the triangle whose closest feature it is pushed
  /// to, that feature, and d (m^2). Node ids are original ids.
  struct Pair {
    int p = -1;
    std::array<int, 3> triangle = {-1, -1, -1};
    ClosestFeature feature;
    double d = 0.0;
  };
  /// What a rank holds for detection (counts on this rank).
  struct Holdings {
    std::size_t tets = 0, triangles = 0, nodes = 0;  ///< local and halo together
    std::size_t halo_tets = 0, halo_triangles = 0, halo_nodes = 0;
    std::size_t bytes = 0;  ///< of the geometry, positions, trees' inputs and Verlet lists
  };

  /// Collective. k: penalty stiffness (J/m^3, > 0). Finds the surface triangles among the
  /// rank's local tets, flags their owned nodes and sets up the positions' scatter.
  SelfContact(const FemModel& model, double k);
  ~SelfContact();
  SelfContact(const SelfContact&) = delete;
  SelfContact& operator=(const SelfContact&) = delete;

  /// Collective. Fetches the positions x (owned values of a node vector, m) of the held
  /// nodes and finds the contact pairs at them (rebuilding the halo when some node has
  /// moved skin/2). Cached: a second call with unchanged values of x on every rank does
  /// no detection.
  void Update(Vec x);
  /// Rank-local, after Update: the contact energy (J) of this rank's pairs (those of
  /// the surface nodes it owns); the sum over ranks is the total.
  double Energy() const;
  /// Rank-local, after Update: adds dPhi/dx of the owned nodes to g (the owned array of
  /// a node vector, 3 per node, N), from every pair that touches them.
  void AddGradient(PetscScalar* g) const;
  /// Collective, after Update: adds the 3x3 blocks (N/m) of the owned rows, columns of
  /// any rank, to H (global block indices, ADD_VALUES; new nonzeros allowed) and
  /// assembles H. Rows and columns of Dirichlet nodes are left out. project: per pair,
  /// the 12x12 Hessian's negative eigenvalues are clamped to zero (SPD projection).
  void AddHessian(Mat H, bool project);
  /// Collective. Friction after the solve (Gast et al. 2015, Sec. 5.3) on the velocities
  /// v (owned values of a node vector, m/s) at positions x (m): for every pair in turn
  /// (ascending node id; Gauss-Seidel on a copy of the pairs and of their nodes'
  /// velocities that every rank gathers, so the result is the same bits on any rank
  /// count), the tangential impulse j (N s) between p and the point
  /// q = sum_k w_k x_k of the closest feature (w the barycentric weights of q) that
  /// minimizes the kinetic energy, j* = -v_t / (1/m_p + sum_k w_k^2 / m_k) with v_t the
  /// tangential part of v_p - sum_k w_k v_k, shortened to mu J_n, J_n = dt |dPhi/dx_p| the
  /// normal impulse; p gains j / m_p, node k loses w_k j / m_k (Dirichlet nodes: infinite
  /// mass). sum_k w_k = 1, so the impulses conserve momentum. mu >= 0, dt in s.
  void ApplyFriction(Vec x, Vec v, double mu, double dt);
  /// Rank-local, after Update: the pairs of the surface nodes this rank owns, ascending p.
  const std::vector<Pair>& pairs() const { return own_pairs_; }
  /// After Update: the number of pairs on all ranks.
  std::size_t PairCount() const { return pair_count_; }
  /// Collective, after Update: every rank's pairs, ascending p, on every rank.
  std::vector<Pair> GatherPairs() const;
  /// How many times Update has run the detection (positions changed), since construction.
  std::size_t detections() const { return detections_; }
  /// How many of those rebuilt the trees and the halo (some node moved more than half
  /// the skin since the last build, or a query needed a larger halo).
  std::size_t rebuilds() const { return rebuilds_; }
  /// How many rebuilds were for a larger halo (on any rank).
  std::size_t halo_growths() const { return halo_growths_; }
  /// The skin (m): the trees' boxes are grown by it (tets) and by half of it (triangles)
  /// so that they serve until a node has moved skin/2; the mean rest length of the
  /// surface triangles' edges (our choice).
  double skin() const { return skin_; }
  /// Rank-local: the contact distance h (m) of this rank's halo at the last rebuild.
  double halo_distance() const { return h_; }
  /// Rank-local: the surface nodes this rank owns (the nodes it tests).
  std::size_t SurfaceNodeCount() const { return surface_nodes_.size(); }
  /// Rank-local: what this rank holds now.
  Holdings held() const;

 private:
  using Box = Eigen::AlignedBox<double, 3>;
  using Tree = Eigen::KdBVH<double, 3, int>;
  /// A pair with what the owners of its other nodes need to add their rows.
  struct Routed {
    Pair pair;
    PetscInt petsc[4];    ///< PETSc node ids of p, a, b, c
    int constrained[4];   ///< Dirichlet flags
    double x[12];         ///< positions of p, a, b, c (m)
  };
  /// Collective: the halo (received from the ranks whose boxes meet this rank's),
  /// the positions' scatter, the triangle tree and every owned surface node's candidate
  /// tets at x_ (x_ref_ = x_).
  void Rebuild();
  /// Collective, in Rebuild (more than one rank): appends to the held nodes, tets and
  /// triangles those of the other ranks near this rank's owned surface nodes.
  void ReceiveHalo();
  /// Rank-local: the pairs of the surface nodes this rank owns, at x_; false when some
  /// query's nearest triangle was not within h (the halo may miss a nearer one).
  bool DetectOwned(std::vector<Routed>* mine) const;
  /// Collective: sends every pair to the owners of its triangle's nodes; touching_ gets
  /// the pairs that touch an owned node, ascending p. complete: this rank's queries
  /// ended within its halo; returns false, sending nothing, when some rank's did not.
  bool RoutePairs(std::vector<Routed> mine, bool complete);
  /// Phi's gradient (12) and Hessian (12 x 12) of a pair, in (p, a, b, c) order.
  void PairDerivatives(const Routed& pair, Vec12* g, Mat12* H) const;
  /// Collective: every rank's own pairs with their routing data, ascending p.
  std::vector<Routed> GatherRouted() const;
  /// Rank-local: the owned index of PETSc node id, or -1 when another rank owns it.
  PetscInt OwnedIndex(PetscInt petsc) const;
  /// Collective: x into x_ (the local nodes by a VecScatter, the halo's from the ranks
  /// that sent it); true when some value changed here.
  bool FetchPositions(Vec x);

  const FemModel& model_;
  double k_;
  int rank_ = 0, size_ = 1;
  std::vector<PetscInt> node_begin_;          ///< first PETSc node id of every rank, and the end
  // Held nodes: the local nodes (index l, as in the mesh) then the halo's.
  std::vector<PetscInt> original_, petsc_id_;
  std::vector<Vec3> X_;                       ///< rest positions
  std::vector<int> body_;
  std::vector<char> constrained_;             ///< Dirichlet node
  std::unordered_map<PetscInt, int> held_node_;  ///< original id -> held index
  // Held tets and surface triangles: the local ones, then the halo's.
  std::vector<std::array<int, 4>> tets_;      ///< held node indices
  std::vector<PetscInt> tet_id_;              ///< original tet ids
  std::vector<int> tet_body_;
  std::vector<std::array<int, 3>> triangles_; ///< held node indices
  std::vector<PetscInt> triangle_id_;         ///< 4 original tet id + omitted corner
  std::vector<int> triangle_body_;
  std::size_t local_tets_ = 0, local_triangles_ = 0;
  std::vector<PetscInt> sorted_local_tet_ids_, sorted_local_triangle_ids_;
  std::vector<char> exported_tet_, exported_triangle_;  ///< this rank sends them (local ones)
  std::vector<int> surface_nodes_;            ///< owned surface nodes (held = local index), ascending original id
  std::vector<std::vector<std::array<int, 3>>> link_faces_;  ///< per owned surface node: its star's faces opposite it (held indices)
  std::vector<Vec3> x_;                       ///< current positions of the held nodes
  std::vector<Pair> own_pairs_;
  std::vector<Routed> own_routed_, touching_;
  std::size_t pair_count_ = 0;
  OwnedVecScatter scatter_;                   ///< x -> x_held_ (the local nodes)
  OwnedVec x_held_;
  std::vector<std::vector<int>> halo_to_;     ///< per rank: local nodes whose positions it gets
  std::vector<std::vector<int>> halo_from_;   ///< per rank: held index of each node it sends, -1: held already
  bool have_positions_ = false;
  std::size_t detections_ = 0;
  double skin_ = 0.0, h_ = 0.0;
  bool halo_complete_ = false;                ///< h_ spans the scene: every triangle is held
  std::vector<Vec3> x_ref_;                   ///< positions of the local nodes at the last Rebuild
  bool have_tree_ = false;
  std::unique_ptr<Tree> triangle_tree_;       ///< held triangles' boxes at x_ref_, grown by skin/2
  std::vector<std::vector<int>> candidates_;  ///< per owned surface node: tets of another part, ascending id
  std::vector<int> candidate_tets_;           ///< every tet in some list of candidates_, ascending held index
  mutable std::vector<Box> tet_box_now_;      ///< per held tet: its box at x_ (all at a build; candidate_tets_ at each DetectOwned)
  std::size_t rebuilds_ = 0, halo_growths_ = 0;
};

}  // namespace optistep
