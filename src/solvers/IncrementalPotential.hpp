#pragma once
// One time step's problem: minimize E(u) over the distributed unknown u. This is the seam
// every minimizer meets (docs/dev/ARCHITECTURE.md). u is a PETSc Vec of block size 3: node
// positions (m) for FEM, grid velocity increments (m/s) for MPM.
//
// A discretization implements Evaluate, Hessian, CreateHessian, CharacteristicScales,
// GlobalNodeCount and Project; Grid(), Elements() and Nodes() expose optional structure
// that some preconditioners and L-BFGS initializers need (HOT's node embedding, DOT's
// subdomains, the embedded-grid multigrid of tet meshes).
#include <petscmat.h>
#include <petscvec.h>

#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/Phases.hpp"

namespace optistep {

/// The phases every potential times (-log_view OsEnergy ..., stats.csv t_Energy ...).
extern const Phase kEnergyPhase;    ///< E(u) alone
extern const Phase kGradientPhase;  ///< E(u) with dE/du
extern const Phase kHessianPhase;   ///< element/particle kernels of the projected Hessian
extern const Phase kAssemblyPhase;  ///< MatAssemblyBegin/End

/// MPM: the grid of a step, for node-embedding multigrid (HOT, Wang et al. 2020, Sec. 4).
struct GridInfo {
  double dx = 0.0;  ///< spacing (m)
  /// Integer coordinates (i, j, k) of every owned unknown node, in the PETSc order of u
  /// (node n is at (i, j, k) dx, with dofs 3 n .. 3 n + 2 of this rank's share).
  std::vector<std::array<int, 3>> owned_nodes;
  PetscInt first_global = 0;  ///< global node index of owned_nodes[0]
  PetscInt n_global = 0;      ///< unknown nodes on all ranks
};

/// FEM: this rank's element and node sets, for subdomain initializers (DOT, Li et al.
/// 2019). Local nodes are this rank's owned nodes (the first n_owned, in the PETSc order
/// of u) followed by its ghosts.
struct ElementSets {
  int n_owned = 0;
  std::vector<PetscInt> local_to_global;  ///< global node index of every local node
  std::vector<std::array<int, 4>> tets;   ///< every tet touching an owned node (local nodes)
  std::vector<char> counted;              ///< per tet: counted on this rank (each once globally)
  /// Rank-count-independent ids (the mesh files' order), for structure that must not
  /// depend on the partition (DOT's sized subdomains).
  std::vector<PetscInt> node_original_id;  ///< per local node
  std::vector<PetscInt> tet_original_id;   ///< per tet
};

/// FEM: the owned nodes in their rest configuration, for the embedded-grid multigrid of
/// tet meshes (solvers/TetGridEmbedding.hpp; Xian, Tong, Liu 2019).
struct RestNodes {
  /// Rest position (m) of every owned node, in the PETSc order of u (node n: dofs 3 n ..
  /// 3 n + 2 of this rank's share).
  std::vector<std::array<double, 3>> X;
  std::vector<int> body;   ///< per owned node: its body (0-based, the scene's order)
  std::vector<char> held;  ///< per owned node: 1 where a Dirichlet condition holds it
  PetscInt first_global = 0;  ///< global node index of X[0]
  PetscInt n_global = 0;      ///< nodes on all ranks
  double volume = 0.0;        ///< rest volume of all tets of all bodies (m^3), the same on every rank
  int n_bodies = 0;
};

class IncrementalPotential {
 public:
  virtual ~IncrementalPotential() = default;

  /// E(u). Collective. Units: J for FEM (positions), kg m^2/s^2 for MPM. Timed as Energy.
  PetscReal Energy(Vec u);
  /// g = dE/du, same layout as u. Collective. Constrained components are 0. Timed as
  /// Gradient.
  void Gradient(Vec u, Vec g);
  /// E(u) and dE/du in one pass (the line search asks for both). Collective.
  PetscReal EnergyAndGradient(Vec u, Vec g);

  /// Projected (SPD) Hessian into H, which comes from CreateHessian. Constrained rows and
  /// columns are decoupled (a positive multiple of the identity on the diagonal).
  /// Collective.
  virtual void Hessian(Vec u, Mat H) = 0;
  /// The Hessian matrix with the potential's layout and preallocation (a new reference to
  /// a matrix the potential keeps). Collective.
  virtual Mat CreateHessian() = 0;
  /// Rank-local: whether the assembled matrix H (from an earlier potential's CreateHessian)
  /// has, on this rank, exactly the nonzero pattern and row ownership this potential's
  /// Hessian has, so that Hessian() may refill it in place. False when unknown (the
  /// default) or the Hessian is matrix-free.
  virtual bool HessianPatternIs(Mat H) { (void)H; return false; }
  /// Node-wise characteristic-norm tolerances tol_i = epsilon s_i (units of the gradient),
  /// repeated for the 3 components of each node; constrained nodes get +inf. epsilon is
  /// the minimizer's (HOT Sec. 5.2; DOT Sec. 6). Collective.
  virtual void CharacteristicNormWeights(double epsilon, Vec w) = 0;
  /// Number of global nodes (for the CN test sum_i |g_i|^2 / tol_i^2 < n_nodes).
  virtual PetscInt GlobalNodeCount() const = 0;
  /// Zeroes the constrained components of a direction d in place (Dirichlet nodes, MPM
  /// sticky nodes, the normal component at slip nodes), so that u + alpha d keeps the
  /// constraints. Rank-local. A Newton direction from CG on the projected Hessian already
  /// satisfies this; an L-BFGS direction built from a general initializer may not.
  virtual void Project(Vec d) const = 0;
  /// Inequality constraints by gradient projection (Gast et al. 2015 Sec. 3.2), called by
  /// the minimizers at every iterate before its convergence test: projects u onto the
  /// constraints, registers the active set there (which Project, Hessian and the energy's
  /// projection use until the next call), and puts E(u) into *energy and the projected
  /// gradient into g. Collective. Returns false, touching nothing, when the potential has
  /// no such constraints (the default).
  virtual bool ProjectIterate(Vec u, Vec g, PetscReal* energy) {
    (void)u;
    (void)g;
    (void)energy;
    return false;
  }

  /// Collective. The rigid-motion residual of the iterate u with gradient g, relative to
  /// epsilon: for every body that no Dirichlet condition holds, the net force
  /// R_b = sum_i g_i and the net torque T_b = sum_i (x_i - c_b) x g_i of the residual over
  /// its nodes, over epsilon times the body's characteristic force M_b a_b and torque
  /// M_b a_b r_b (a_b = |gravity| + the mass-weighted mean speed at the step's start / dt,
  /// r_b its radius of gyration), or over the round-off floor of its elastic forces when
  /// that is larger; the largest ratio (< 1 meets the test). Elastic forces are internal:
  /// they add nothing to R_b and T_b, so this measures what the elastic characteristic
  /// norm cannot see for stiff bodies, the error in each body's rigid motion
  /// (src/solvers/ConvergenceTest.hpp). 0 when no body qualifies (every body held, or at
  /// rest without gravity). The default: 0, no rigid-motion test.
  virtual double RigidMotionResidual(double epsilon, Vec u, Vec g) {
    (void)epsilon;
    (void)u;
    (void)g;
    return 0.0;
  }

  /// Collective. The penalty contacts active at u, as sorted rank-local keys: two calls
  /// return equal keys on every rank exactly when the same contacts are active (FEM: a
  /// node inside a penalty collision object, a self-contact pair's node). What L-BFGS's
  /// refresh watches (solvers/LbfgsMinimizer.hpp): a contact that begins within a step
  /// has no stiffness in a Hessian taken before it (the cubic penalty's Hessian is 0 at
  /// phi = 0). The default: none.
  virtual std::vector<std::int64_t> PenaltyContacts(Vec u) {
    (void)u;
    return {};
  }

  /// The rest-shape matrix M / dt^2 + L of LBFGS-PD (Liu, Bouaziz, Kavan 2017, "Quasi-Newton
  /// Methods for Real-Time Simulation of Hyperelastic Materials", Sec. 4: Projective
  /// Dynamics' system matrix as the initial Hessian of L-BFGS) for the current step size:
  /// a new matrix with CreateHessian's layout (block size 3, units of the Hessian), which
  /// the caller destroys; constrained rows and columns decoupled as in Hessian. It depends
  /// on dt alone (StepSize), not on u. Collective. The default throws InputError: the
  /// potential has no rest shape (MPM's grid is rebuilt every step).
  virtual Mat RestShapeMatrix();
  /// The current step's dt (s), what RestShapeMatrix depends on; 0 when the potential does
  /// not say.
  virtual double StepSize() const { return 0.0; }

  /// The line search's guard (Gast et al. 2015, Sec. 3.3), set by LineSearch for the
  /// length of one search: while bound (units of E) is finite, an evaluation may leave out
  /// a term that costs detection work (FEM self-collisions, >= 0) when the other terms
  /// already sum to more than bound, since such a trial is rejected anyway; it then returns
  /// that partial energy (> bound) and its gradient. +inf (the default): every evaluation
  /// is complete. Rank-local; the caller passes the same bound on every rank.
  void SetEnergyGuard(double bound) { energy_guard_ = bound; }

  /// MPM grid structure, or null (FEM).
  virtual const GridInfo* Grid() const { return nullptr; }
  /// FEM element sets, or null (MPM).
  virtual const ElementSets* Elements() const { return nullptr; }
  /// FEM owned nodes at rest, or null (MPM).
  virtual const RestNodes* Nodes() const { return nullptr; }

 protected:
  /// E(u), and dE/du into g when g is non-null. Collective.
  virtual PetscReal Evaluate(Vec u, Vec g) = 0;
  /// SetEnergyGuard's bound, +inf when no search is under way.
  double energy_guard_ = std::numeric_limits<double>::infinity();
};

}  // namespace optistep
