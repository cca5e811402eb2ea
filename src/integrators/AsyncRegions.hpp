#pragma once
// The two regions of asynchronous evolution and the force distribution between them
// (Schroeder, Kwatra, Zheng, Fedkiw 2010, "Asynchronous Evolution for Fully-Implicit and
// Semi-Implicit Time Integration", Secs. 4 and 5):
//  - SurfaceLayerTets: the semi-implicit region, the tets within async.surface_layers
//    layers of the boundary surface; the rest is the fully implicit region;
//  - RigidForceDistribution: for the fully implicit region's nodes of each body, the
//    rank-6 mass-symmetric projection onto rigid motions
//        P f = M Phi (Phi^T M Phi)^+ Phi^T f,
//    Phi the 3n x 6 rigid velocity modes (translations e_k, rotations e_k x (x_i - c), c the
//    region's center of mass): (P f)_i = m_i (a + alpha x r_i) with a = F / M and
//    alpha = I^+ T from the net force F, the net torque T about c and the inertia tensor I.
//    P keeps F and T, P^2 = P, and M^-1 P = Phi (Phi^T M Phi)^+ Phi^T is symmetric; the
//    distributed forces are epsilon P f + (1 - epsilon) f (Sec. 5, async.epsilon).
// Sums run over owned nodes in local order and then MPI_Allreduce: the same rank count
// gives the same bits.
#include <petscvec.h>

#include <vector>

#include "core/Types.hpp"
#include "fem/FemModel.hpp"

namespace optistep {

/// Collective. Per local tet of model.mesh(): 1 when the tet is in the semi-implicit
/// region, i.e. within `layers` (>= 1) layers of the boundary surface. The surface is the
/// set of tet faces that belong to one tet only; layer 1 is the tets with a face of three
/// surface nodes (one element thick), layer k + 1 the tets with a node of a layer-k tet.
/// Node flags cross ranks by ghost scatters (reverse add, then forward).
std::vector<char> SurfaceLayerTets(const FemModel& model, int layers);

/// Per owned node: 1 when a tet of the fully implicit region (region[e] == 0) holds it and
/// it is not a Dirichlet node. Collective (a ghost scatter).
std::vector<char> ImplicitRegionNodes(const FemModel& model, const std::vector<char>& region);

class RigidForceDistribution {
 public:
  /// implicit_nodes: per owned node, 1 for the nodes whose forces are distributed (each
  /// body's nodes among them form one rigid group). epsilon in [0, 1].
  RigidForceDistribution(const FemModel& model, std::vector<char> implicit_nodes, double epsilon);

  /// Collective. f (N, owned values of a node vector) <- epsilon P f + (1 - epsilon) f on
  /// the implicit nodes, P built at positions x (m, owned values); other rows unchanged.
  /// epsilon 0 leaves f bitwise unchanged without communication.
  void Apply(Vec x, Vec f) const { Apply(x, f, epsilon_); }
  /// The same with another blend (1: P f alone).
  void Apply(Vec x, Vec f, double epsilon) const;

  double epsilon() const { return epsilon_; }
  const std::vector<char>& implicit_nodes() const { return implicit_nodes_; }

 private:
  const FemModel& model_;
  std::vector<char> implicit_nodes_;
  double epsilon_;
  int n_bodies_;
  /// Per-body sums F (3), T (3), I (xx, yy, zz, xy, xz, yz).
  static constexpr int kSums = 12;
  // Apply's work arrays (per body), kept so that a substep allocates nothing.
  mutable std::vector<double> mass_, sums_;
  mutable std::vector<Vec3> center_, accel_, alpha_;
};

}  // namespace optistep
