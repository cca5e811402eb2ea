#pragma once
// Penalty self-collisions and body-body collisions of a tetrahedral FEM model (Gast et
// al. 2015, Sec. 5.3). A surface node p found inside a tet of another part of the mesh
// (point-in-tetrahedron tests, accelerated by Eigen's KdBVH over the tets' bounding
// boxes) is pushed out by the energy
//   Phi = k d sqrt(d + epsilon),  epsilon = 1e-15 m^2,
// d the squared distance from p to the closest primitive (triangle, edge or vertex) of
// the surface of that part, found with a second KdBVH over the surface triangles.
// "Another part": a tet of another body, or of p's own body a tet not incident to p (the
// body beyond p's star). On p's own body the surface searched leaves out the triangles
// incident to p (p always lies on them) and adds the inner faces of p's star: then every
// face through which p can enter the part is searched, d = 0 where p enters, and Phi is
// continuous in x while p's star is not inverted (our rule; the line search of Sec. 3.3
// needs E continuous along its ray). "Inside" counts the tet's boundary too, so that p on
// a face between two tets of the part is not let off.
//
// Detection: the tets' and the triangles' boxes go into Eigen KdBVHs at a reference x_ref,
// grown by a skin, and every surface node keeps the tets of another part whose grown box
// holds it (a Verlet list); both serve until some node has moved skin/2 from x_ref. p's
// part is that of the lowest-numbered candidate tet that holds p, and its closest
// feature is the nearest triangle of that part, ties to the lowest triangle id: neither
// depends on x_ref, so the pairs are a function of x alone.
//
// Distribution (not the paper's): the surface geometry, the tets and the positions are
// replicated on every rank (one VecScatter to all per evaluation); each rank tests the
// surface nodes it owns, every rank gathers all pairs (one MPI_Allgatherv) and sorts them
// by original node id, and adds the gradient rows and Hessian blocks of the nodes it owns. The contact
// terms are thus the same bits on any rank count; no state crosses steps (the closest
// primitive is searched anew at every evaluation; the trees are a cache whose age does
// not change the pairs), so a checkpoint needs nothing from here. Memory and detection time grow with the whole mesh on every rank.
#include <petscmat.h>
#include <petscvec.h>

#include <unsupported/Eigen/BVH>
#include <array>
#include <memory>
#include <vector>

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

  /// Collective. k: penalty stiffness (J/m^3, > 0). Gathers the mesh's tets, finds its
  /// surface triangles and flags their nodes.
  SelfContact(const FemModel& model, double k);
  ~SelfContact();
  SelfContact(const SelfContact&) = delete;
  SelfContact& operator=(const SelfContact&) = delete;

  /// Collective. Gathers the positions x (owned values of a node vector, m) and finds
  /// the contact pairs at them. Cached: a second call with unchanged values of x does
  /// no detection.
  void Update(Vec x);
  /// Rank-local, after Update: the total contact energy (J) on rank 0 and 0 on the other
  /// ranks (every rank finds every pair), so that a sum over ranks counts it once.
  double Energy() const;
  /// Rank-local, after Update: adds dPhi/dx of the owned nodes to g (the owned array of
  /// a node vector, 3 per node, N).
  void AddGradient(PetscScalar* g) const;
  /// Collective, after Update: adds the 3x3 blocks (N/m) of the owned rows, columns of
  /// any rank, to H (global block indices, ADD_VALUES; new nonzeros allowed) and
  /// assembles H. Rows and columns of Dirichlet nodes are left out. project: per pair,
  /// the 12x12 Hessian's negative eigenvalues are clamped to zero (SPD projection).
  void AddHessian(Mat H, bool project);
  /// Collective. Friction after the solve (Gast et al. 2015, Sec. 5.3) on the velocities
  /// v (owned values of a node vector, m/s) at positions x (m): for every pair in turn
  /// (ascending node id; Gauss-Seidel on a copy every rank holds, so the result is the
  /// same bits on any rank count), the tangential impulse j (N s) between p and the point
  /// q = sum_k w_k x_k of the closest feature (w the barycentric weights of q) that
  /// minimizes the kinetic energy, j* = -v_t / (1/m_p + sum_k w_k^2 / m_k) with v_t the
  /// tangential part of v_p - sum_k w_k v_k, shortened to mu J_n, J_n = dt |dPhi/dx_p| the
  /// normal impulse; p gains j / m_p, node k loses w_k j / m_k (Dirichlet nodes: infinite
  /// mass). sum_k w_k = 1, so the impulses conserve momentum. mu >= 0, dt in s.
  void ApplyFriction(Vec x, Vec v, double mu, double dt);
  const std::vector<Pair>& pairs() const { return pairs_; }
  /// How many times Update has run the detection (positions changed), since construction.
  std::size_t detections() const { return detections_; }
  /// How many of those rebuilt the bounding-volume trees (some node moved more than half
  /// the skin since the last build).
  std::size_t rebuilds() const { return rebuilds_; }
  /// The skin (m): the trees' boxes are grown by it (tets) and by half of it (triangles)
  /// so that they serve until a node has moved skin/2; the mean rest length of the
  /// surface triangles' edges (our choice).
  double skin() const { return skin_; }
  /// Number of surface nodes (the flagged nodes tested for penetration).
  std::size_t SurfaceNodeCount() const { return surface_nodes_.size(); }

 private:
  using Box = Eigen::AlignedBox<double, 3>;
  using Tree = Eigen::KdBVH<double, 3, int>;
  /// The triangle tree and every owned surface node's candidate tets at x_ (x_ref_ = x_).
  void Rebuild();
  /// Rank-local: the pairs of the surface nodes this rank owns, at x_ (rebuilding first
  /// when some node has moved more than skin/2 since the last build).
  std::vector<Pair> DetectOwned();
  /// Phi's gradient (12) and Hessian (12 x 12) of a pair, in (p, a, b, c) order.
  void PairDerivatives(const Pair& pair, Vec12* g, Mat12* H) const;
  /// The PETSc-local owned index of original node n, or -1 when another rank owns it.
  PetscInt OwnedIndex(int n) const;

  const FemModel& model_;
  double k_;
  int rank_ = 0;
  std::vector<Vec3> X_;                       ///< rest positions by original id
  std::vector<int> body_;                     ///< body by original id
  std::vector<char> constrained_;             ///< Dirichlet node, by original id
  std::vector<double> mass_;                  ///< lumped mass (kg) by original id
  std::vector<PetscInt> petsc_id_;            ///< PETSc global node id by original id
  std::vector<std::array<int, 4>> tets_;      ///< original ids, by original tet id
  std::vector<int> tet_body_;
  std::vector<std::array<int, 3>> triangles_; ///< surface triangles
  std::vector<int> triangle_body_;
  std::vector<int> surface_nodes_;            ///< original ids, ascending
  std::vector<std::vector<std::array<int, 3>>> link_faces_;  ///< per surface node: its star's interior faces
  std::vector<Vec3> x_;                       ///< current positions by original id
  std::vector<Pair> pairs_;
  VecScatter to_all_ = nullptr;
  Vec x_all_ = nullptr;
  Vec v_all_ = nullptr;  ///< velocities gathered for ApplyFriction
  bool have_positions_ = false;
  std::size_t detections_ = 0;
  double skin_ = 0.0;
  std::vector<Vec3> x_ref_;                   ///< positions at the last Rebuild
  bool have_tree_ = false;
  std::unique_ptr<Tree> triangle_tree_;       ///< surface triangles' boxes at x_ref_, grown by skin/2
  std::vector<std::vector<int>> candidates_;  ///< per surface node: tets of another part, ascending
  std::size_t rebuilds_ = 0;
};

}  // namespace optistep
