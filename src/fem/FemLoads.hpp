#pragma once
// External loads of a tet FEM model as terms of the incremental potential, each scaled by its
// time function tau at the end of the step (the scene's `loads`, io/SceneSections.hpp
// LoadConfig). Positions x in m, energies in J, forces in N.
//  - Dead loads (point forces, tractions, dead pressure, body forces): E = -sum_i f_i(t) . x_i
//    with nodal forces fixed in the rest configuration. Linear in x: no Hessian.
//  - Follower pressure: E = p tau V(x), V the volume the loaded faces enclose (Schweizerhof
//    and Ramm 1984, Computers & Structures 18(6), Sec. 3); conservative only for a closed
//    loaded surface or one whose rim is held, so a free rim node is an InputError. Its
//    Hessian blocks are indefinite and origin-dependent face by face, so the projected
//    Hessian leaves the load stiffness out and the true one (SetProjectHessian(false)) holds
//    it; the gradient stays exact.
// Contract: a face is loaded when its three nodes are selected and it is on the boundary; its
// energy is counted once, by the owner of its smallest global node.
// The terms, the follower pressure's stiffness and Newton's rate: docs/methods/loads.md.
#include <array>
#include <functional>
#include <vector>

#include "fem/FemModel.hpp"
#include "model/TimeFunction.hpp"

namespace optistep {

class FemLoads {
 public:
  /// Collective. Throws InputError (naming loads[i]) for a point load whose selection holds
  /// no node, a traction or pressure whose selection holds no boundary face, and a follower
  /// pressure with a free rim node.
  explicit FemLoads(const FemModel& model);

  bool empty() const { return loads_.empty(); }
  /// Rank-local: sets the loads to their values at time t (s).
  void SetTime(double t);
  /// Rank-local: the loads' energy (J) at the local positions xl (3 per local node, owned
  /// then ghost; this rank's share: its owned nodes and counted faces), and when ga is
  /// non-null adds the gradient (N) to the owned rows ga[3 l + d].
  double Energy(const double* xl, double* ga) const;
  /// Rank-local: sum over the loads of (peak |tau|)^2 sum_i |f_i|^2 (N^2) over the owned
  /// free nodes, f_i a load's nodal forces at tau = 1 in the rest shape (a follower
  /// pressure's p A0 n0 / 3 per face corner): this rank's share of the loads' reference
  /// magnitude for load-relative convergence (integrators/FemQuasiStatic).
  double PeakForceSquaredNorm() const;
  /// Receives a 3x3 Hessian block of tet `tet` at (row corner a, column corner b).
  using BlockSink = std::function<void(int tet, int a, int b, const Mat3& block)>;
  /// Rank-local: the follower pressures' Hessian blocks for the rows of owned nodes, at xl;
  /// none when project (the projected Hessian leaves the load stiffness out).
  void AddHessian(const double* xl, bool project, const BlockSink& add) const;

 private:
  struct Face {
    int tet = 0;                    ///< local tet holding the face
    std::array<int, 3> corner{};    ///< the face's corners in that tet, outward (right-handed)
    std::array<int, 3> node{};      ///< their local nodes
    bool counted = false;           ///< this rank counts its energy
    int load = 0;
  };
  /// Per local tet, its boundary faces whose nodes `selected` holds and that have an owned node.
  std::vector<Face> SelectedFaces(const std::vector<char>& selected, int load) const;

  const FemModel& model_;
  std::vector<LoadConfig> loads_;
  std::vector<TimeFunction> tau_;                         ///< per load
  std::vector<std::vector<std::pair<int, Vec3>>> dead_;   ///< per load: (owned node, f at tau 1)
  std::vector<Face> follower_faces_;
  std::vector<double> force_;     ///< 3 per owned node: the dead forces at the current time
  std::vector<double> pressure_;  ///< per load: p tau at the current time
  bool any_dead_ = false;
};

}  // namespace optistep
