#pragma once
// Implicit MPM time step as a minimization over grid velocity increments dv
// (Gast et al. 2015 Sec. 6; HOT, Wang et al. 2020, Sec. 3.1 eq. 1):
//   E(dv) = 1/2 sum_i m_i |dv_i|^2 + sum_p V0_p Psi(F_p(dv)) - dt sum_i m_i g . dv_i
//           [- dt sum_i f_i . dv_i, the scene's point loads],
//   F_p(dv) = (I + dt sum_i (v_i + dv_i) grad_w_ip^T) F_p^n.
// Units: dv in m/s, E in J (kg m^2/s^2). Grid nodes inside collision objects are
// constrained by projection (HOT's --bcproject): sticky nodes take the object's velocity
// (their rows and columns become m_i I), slip nodes lose the normal component of their
// relative velocity when approaching (P_i = I - n n^T; the caller decides which nodes
// approach). Snow hardening scales each particle's energy by exp(xi (1 - J_P))
// (Stomakhin et al. 2013).
#include <petscmat.h>

#include <vector>

#include "core/PetscHandles.hpp"
#include "materials/Material.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/Plasticity.hpp"
#include "solvers/BlockRows.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep::mpm {

/// The constraint of one grid node for a step.
struct NodeConstraint {
  enum class Kind { kFree, kSticky, kSlip };
  Kind kind = Kind::kFree;
  Vec3 normal = Vec3::Zero();     ///< kSlip: unit normal of the object
  Vec3 velocity = Vec3::Zero();   ///< the object's velocity at the node (m/s)
  double friction = 0.0;          ///< kSlip: Coulomb coefficient
};

class MpmIncrementalPotential : public IncrementalPotential {
 public:
  /// Collective. Takes the step grid (P2G done, numbering set), this rank's particles
  /// (owned first, then halo), the per-material tables, the constraints of every local
  /// grid node (owned and ghost: they must agree with the owners'), dt (s) and gravity
  /// (m/s^2). matrix_free: Hessian() fills a MatShell (PN-PCG(MF)) instead of assembling.
  /// hessian_type: the assembled Hessian's storage (block size 3) unless -hessian_mat_type
  /// says otherwise; null for BAIJ (the 5^3 block stencil of HOT's grid). The minimizer
  /// may ask for another (Minimizer::HessianType).
  MpmIncrementalPotential(const MpmDomain& domain, StepGrid& step, const MaterialTable& materials,
                          const std::vector<PlasticityParameters>& plasticity,
                          std::vector<NodeConstraint> constraints, double dt, const Vec3& gravity,
                          bool matrix_free, const char* hessian_type = nullptr);
  ~MpmIncrementalPotential() override;

  void Hessian(Vec dv, Mat H) override;
  Mat CreateHessian() override;
  /// Compares H's rows (MatGetRow) with this step's row layout (BuildRowLayout).
  bool HessianPatternIs(Mat H) override;
  /// HOT Sec. 5.2: tol_i = epsilon 24 dx^2 dt (sum_p w_ip m_p |dP/dF(I)|_F) / m_i.
  void CharacteristicNormWeights(double epsilon, Vec w) override;
  PetscInt GlobalNodeCount() const override { return step_.n_global; }
  /// Zeroes d on sticky nodes and its normal component on slip nodes.
  void Project(Vec d) const override;
  const GridInfo* Grid() const override { return &grid_info_; }

  /// A Vec with the step's layout (ghosted, block size 3). Collective.
  Vec CreateVector() const { return domain_.CreateNodeVector(step_); }
  /// Sets dv to satisfy the constraints (the prescribed components) and zero elsewhere,
  /// or to dt g on the free components when with_gravity. Rank-local.
  void InitialGuess(Vec dv, bool with_gravity) const;
  /// Collective: fills v_new (3 per local grid node, m/s) with v_i + dv_i (ghosts too)
  /// and applies Coulomb friction on slip nodes (Gast Sec. 5.2 applied on the grid): the
  /// tangential relative velocity falls by at most mu dv_n, dv_n = (n . g_i) / m_i the
  /// normal impulse per unit mass the constraint absorbs (g_i the unprojected gradient of
  /// E at dv; one more gradient evaluation when some slip node has friction).
  void NewGridVelocities(Vec dv, std::vector<double>* v_new);
  /// Collective: whether some rank's grid has a slip node with friction this step (the
  /// friction term, or the bound after the solve, has a node to act on).
  bool HasSlipFriction() const;
  /// Collective: per local grid node, the normal impulse per unit mass dv_n (m/s) that its
  /// slip constraint with friction absorbs at dv, (n . g_i)^+ / m_i with g_i the unprojected
  /// gradient of E (0 elsewhere; ghosts from their owners).
  std::vector<double> NormalImpulses(Vec dv);
  /// Rank-local. Friction as IPC's smoothed potential on the slip nodes (Li et al. 2020,
  /// Sec. 5; model/SmoothedFriction.hpp) instead of after the solve: adds to E, per owned
  /// slip node with friction mu, mu m_i dv_n,i f_0(|T (v_i + dv_i - v_obj)|) (J) with the
  /// lagged normal impulse per unit mass dv_n (NormalImpulses, m/s) and f_0's width
  /// epsilon_v (m/s); NewGridVelocities then applies no friction.
  void SetFrictionPotential(const std::vector<double>& normal_impulse, double epsilon_v);
  /// Rank-local: applies to dv (the step's unknowns, m/s) on the owned slip nodes with
  /// friction the Coulomb bound that NewGridVelocities applies after the solve, with the
  /// normal impulses per unit mass `normal_impulse` (NormalImpulses): a start for the
  /// friction potential's solve whose stopped nodes lie in f_0's static zone.
  void ApplyCoulombBound(const std::vector<double>& normal_impulse, Vec dv) const;

  /// External nodal forces f_i (N, 3 per local grid node; mpm/MpmLoads.hpp): E gains
  /// -dt sum_i f_i . dv_i over owned nodes. Rank-local; none by default.
  void SetNodalForces(std::vector<double> f) { nodal_forces_ = std::move(f); }

  /// y = H x for the matrix-free Hessian (public for the MatShell callback).
  void HessianMultiply(Vec x, Vec y);
  void HessianDiagonal(Vec d);
  /// Inverses of the matrix-free Hessian's 3x3 diagonal blocks, 9 per owned node
  /// (column-major), for PCPBJACOBI; valid until the next call. Rank-local.
  const double* InverseHessianDiagonalBlocks();

 private:
  /// Copies dv's owned values into the ghosted work vector, updates ghosts and forms
  /// v_work_ = v_i + dv_i per local grid node.
  void LoadVelocities(Vec dv);
  PetscReal Evaluate(Vec dv, Vec g) override;
  /// E(dv) and, if g, its gradient on the owned nodes, projected on the constraints when
  /// project (Evaluate) and whole when not (the constraint impulses, NewGridVelocities).
  PetscReal Assemble(Vec dv, Vec g, bool project);
  /// Particle p's hardening factor (1 unless its material is snow).
  double Hardening(std::size_t p) const;
  /// Applies node's constraint projector to the 3 values at g3 (local grid node).
  void ProjectNode(int node, double* g3) const;
  /// out[3 k .. 3 k + 2] += M grad_w_ip for the owned nodes i = owned_nodes[k] of particle
  /// p's stencil: the scatter of the gradient (M = dt V0 P F_n^T) and of the matrix-free
  /// Hessian product (M = dt V0 dP F_n^T).
  void AddToOwnedNodes(std::size_t p, const Mat3& M, double* out) const;
  Mat NewMatrix();
  /// The assembled Hessian's rows: neighbour lists and the buffers they are summed in.
  void BuildRowLayout();
  /// The matrix-free Hessian's 3x3 diagonal blocks, 9 per owned node (column-major).
  void HessianDiagonalBlocks(std::vector<double>* blocks) const;

  const MpmDomain& domain_;
  StepGrid& step_;
  const MaterialTable& materials_;
  const std::vector<PlasticityParameters>& plasticity_;
  std::vector<NodeConstraint> constraints_;
  std::vector<double> nodal_forces_;  // 3 per local grid node, or empty
  double dt_;
  Vec3 gravity_;
  bool matrix_free_;
  const char* hessian_type_;
  GridInfo grid_info_;
  OwnedVec dv_local_;             // ghosted work vector
  std::vector<double> v_work_;    // 3 per local grid node
  std::vector<double> dv_work_;   // 3 per local grid node (matrix-free products)
  std::vector<Mat9> stiffness_;   // per local particle, dP/dF (projected), for MF
  OwnedMat hessian_;
  BlockRows rows_;                    // the assembled Hessian's owned rows and their blocks
  std::vector<int> row_node_;         // local grid node of each column
  std::vector<int> slot_of_offset_;   // 125 per owned node (box code), -1: no column
  std::vector<int> diagonal_slot_;    // per owned node
  std::vector<double> inverse_blocks_;  // MF: inverse diagonal blocks for PCPBJACOBI
  /// Friction as a potential: per local grid node mu m_i dv_n (kg m/s; empty: friction
  /// after the solve), f_0's width (m/s), and (MF) the friction Hessian's 3x3 blocks per
  /// owned node at the last Hessian() point.
  std::vector<double> friction_scale_;
  double friction_eps_ = 0.0;
  std::vector<Mat3> friction_blocks_;
  /// Rank-local: the friction term of local grid node i at v_work_ (energy; gradient and
  /// Hessian added when non-null), 0 without friction there.
  double FrictionTerm(int i, Vec3* gradient, Mat3* hessian) const;
  /// Coulomb friction after the solve on the velocity v (m/s) of a node with constraint c
  /// and normal impulse per unit mass dv_n (m/s; Gast Sec. 5.2): the tangential velocity
  /// relative to the object falls by at most mu dv_n and stops rather than reverses; v
  /// unchanged unless c is a slip constraint with friction.
  static Vec3 CoulombBound(const NodeConstraint& c, double normal_impulse, const Vec3& v);
};

}  // namespace optistep::mpm
