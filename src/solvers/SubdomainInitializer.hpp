#pragma once
// DOT's initializer (Li, Gao, Langlois, Jiang, Kaufman 2019, "Decomposed Optimization Time
// Integrator for Large-Step Elastodynamics", Secs. 4-5, Alg. 1): the initial inverse
// Hessian of L-BFGS as independent back-solves on subdomains of the mesh, each with a
// sparse Cholesky factorization made once per time step, merged where subdomains share
// nodes. Here the subdomains are rank-local, so a back-solve never communicates.
//
//  - Subdomains: each rank's counted tets (IncrementalPotential::Elements()), split into
//    dot.subdomains_per_rank parts by METIS_PartMeshDual (ncommon = 3, fixed seed:
//    partition/TetPartition.hpp). A subdomain's node set S is its tets' nodes, owned and
//    ghost; nodes on an interface belong to every subdomain that touches them.
//  - Local matrix: H[S,S], the principal submatrix of the global SPD-projected Hessian H at
//    the step's start (mass, penalty contact and damping included, Dirichlet rows and
//    columns decoupled as in H), taken by MatCreateSubMatrices. This is what DOT's code
//    builds (DOTTimeStepper::fillInDecomposedHessians: the subdomain's own element blocks,
//    plus, at interface nodes, the mass and element blocks it lacks). PETSc's PCASM with
//    these node sets as its subdomains (PCASMSetLocalSubdomains) would factor the same
//    matrices, but its merges (basic, restrict, interpolate) sum the back-solves or keep
//    one of them: none averages them, which is DOT's merge; hence our own scatter.
//  - Factorization: KSPPREONLY + PCCHOLESKY per subdomain under the options prefix
//    "dot_sub_" (-dot_sub_pc_factor_mat_solver_type cholmod (default) | mumps | petsc),
//    numeric refactorization every step, symbolic once.
//  - Apply: r = merge_j(H[S_j,S_j]^-1 q|S_j), with m_i the number of subdomains holding
//    node i, w_i = 1 / m_i, R_j the restriction to S_j (block size 3):
//      average   (DOT's code, DOTTimeStepper::solve_oneStep): r = W sum_j R_j^T H_j^-1 R_j q,
//                each node the mean of its subdomains' values; W A is not symmetric;
//      symmetric r = sum_j R_j^T W_j^(1/2) H_j^-1 W_j^(1/2) R_j q, an additive Schwarz
//                preconditioner with a partition of unity on both sides: SPD.
//    Default: average. Measured on 2 ranks (a loaded 2-core machine), L-BFGS iterations per
//    step, average / symmetric: twisted bar (configs/twisted_bar.yaml, 40 steps) with 4
//    subdomains 3.25 / 3.28, with 8 3.95 / 3.75; bar17K twist (configs/dot_bar17k_twist.yaml,
//    10 steps) with 6 (the reference's count) 17.7 / 18.3. Neither is better beyond +-5%,
//    nor in time per step within the machine's noise, so the default is DOT's code's merge,
//    which also costs one weighting of the global vector instead of two of the concatenated
//    subdomain vectors. The symmetric one is kept for what needs an SPD H0 (tests check it).
//  - A factorization that fails (not SPD, a bug: the matrix is projected) is reported on
//    rank 0 as one warning line naming the rank and subdomain, and the step falls back to
//    LBFGS-H's solve (Jacobi-PCG on the lagged Hessian to relative tolerance 1/2, options
//    -lbfgsh_*: PN-PCG's linear solve).
//  - Overlap (ours, -dot_overlap N, default 0 = DOT's disjoint tets): N times, every local
//    tet (counted or not) touching S adds its nodes to S; a rank holds only the tets that
//    touch its owned nodes, so with one subdomain per rank more than one layer adds
//    nothing. With the average merge only a subdomain's core values (its nodes before the
//    overlap) are merged, m_i counting the cores holding node i: restricted additive
//    Schwarz (Cai, Sarkis 1999); the symmetric merge keeps all values. Measured on bar17K
//    (2 ranks, 1 subdomain each, 4 steps): 17 -> 12.5 L-BFGS iterations per step.
//  - Lagging across steps (ours, -dot_refactor_every N, default 1 = DOT: every step's
//    start): a factorization serves up to N steps; a new dt, a fallback, or a step that
//    took more than -dot_refactor_growth (1.5) times the iterations of the first step it
//    served or of the step before it refactors at once. Measured: bar17K keeps its
//    iterations over 4 steps (18/18/17/15); the elephant drop's impact steps do not (a
//    step on factors without the new contacts hits the iteration cap), README "DOT". With N > 1 the factors cross steps but are not checkpointed:
//    a restart refactors at its first step, so a resumed run matches an uninterrupted one to
//    the solver tolerance, not bitwise (with N = 1, bitwise).
// With the defaults nothing crosses steps but the subdomain structure (a function of the
// partition): the factorization is made afresh each step. Phases: SubdomainFactor (extraction of the local
// matrices and their factorization), SubdomainSolve (back-solves), SubdomainMerge
// (scatters and weights).
#include <petscksp.h>

#include <memory>
#include <vector>

#include "io/SceneConfig.hpp"
#include "solvers/Initializer.hpp"

namespace optistep {

extern const Phase kSubdomainFactorPhase;
extern const Phase kSubdomainSolvePhase;
extern const Phase kSubdomainMergePhase;

class SubdomainInitializer : public InverseHessianInitializer {
 public:
  /// Collective on comm: Create, with the scene's dot block as the defaults of
  /// -dot_subdomains_per_rank and -dot_merge.
  SubdomainInitializer(MPI_Comm comm, const DotConfig& config, const MinimizerDefaults& defaults);
  ~SubdomainInitializer() override;

  const char* Type() const override { return "subdomains"; }
  /// Collective: reads -dot_subdomains_per_rank, -dot_merge, -dot_overlap,
  /// -dot_refactor_every and -dot_refactor_growth (InputError naming the option for a bad
  /// value) and the fallback's options.
  void SetFromOptions() override;
  /// Collective: on the first call, the subdomains from potential.Elements() (InputError
  /// for a potential without elements, MPM, or for more subdomains than a rank has counted
  /// tets, naming dot.subdomains_per_rank); every call (unless the last factorization is
  /// lagged across steps, -dot_refactor_every), the Hessian at u0, the local matrices and
  /// their factorizations.
  void SetUp(IncrementalPotential& potential, Vec u0) override;
  /// Collective: r = H0^-1 q by the back-solves and the merge (block size 3, q and r of u's
  /// layout). Returns 0 (direct solves), or the fallback's CG iterations.
  int Apply(Vec q, Vec r) override;
  void View(PetscViewer viewer) const override;
  Mat LaggedHessian() const override { return H_; }

  // What a step set up, for tests and diagnostics (rank-local).
  /// Subdomains of this rank.
  int SubdomainCount() const { return static_cast<int>(nodes_.size()); }
  /// Global node ids (PETSc numbering) of subdomain j's node set S_j, ascending: the row
  /// order of SubdomainMatrix(j) (3 rows per node).
  const std::vector<PetscInt>& SubdomainNodes(int j) const { return nodes_[j]; }
  /// H[S_j, S_j] of the last SetUp (sequential AIJ, 3 |S_j| rows).
  Mat SubdomainMatrix(int j) const { return submatrices_[j]; }
  /// Whether the last SetUp fell back to LBFGS-H (a factorization failed on some rank).
  bool FellBack() const { return fell_back_; }

 private:
  /// Collective: the node sets of this rank's subdomains, the scatter to their
  /// concatenation, the multiplicities and the back-solve KSPs.
  void BuildSubdomains(const ElementSets& elements, Vec layout);
  /// Collective: factors every H[S_j,S_j]; returns false on every rank if one failed on
  /// some rank, after the warning line.
  bool Factor();
  void DestroySubdomains();

  MPI_Comm comm_;
  MinimizerDefaults defaults_;
  int subdomains_per_rank_;
  std::string merge_;
  bool built_ = false;
  bool fell_back_ = false;
  int overlap_ = 0;               ///< -dot_overlap: layers added to every subdomain
  std::vector<std::vector<char>> core_;  ///< per subdomain and node: in the core (overlap > 0)
  Vec core_all_ = nullptr;        ///< concatenated core mask (overlap > 0, average merge)
  int refactor_every_ = 1;        ///< -dot_refactor_every: steps one factorization serves
  double refactor_growth_ = 1.5;  ///< -dot_refactor_growth: iteration growth that refactors
  int steps_served_ = 0;          ///< steps the current factorization has served
  double factored_dt_ = 0.0;      ///< the potential's dt when it was made
  int applications_ = 0;          ///< Apply calls since the last SetUp
  int first_applications_ = 0;    ///< Apply calls of the first step it served
  int last_applications_ = 0;     ///< Apply calls of the step before the last
  Mat H_ = nullptr;
  std::vector<std::vector<PetscInt>> nodes_;  ///< per subdomain: global node ids, ascending
  std::vector<IS> index_sets_;                ///< per subdomain: its dofs (block IS, bs 3)
  Mat* submatrices_ = nullptr;                ///< MatCreateSubMatrices' array
  PetscObjectState pattern_state_ = 0;        ///< H_'s nonzero state when they were made
  std::vector<KSP> ksps_;                     ///< per subdomain: preonly + Cholesky
  std::vector<PetscInt> offsets_;             ///< per subdomain + 1: start in the buffers
  std::vector<PetscScalar> rhs_, solution_;   ///< the subdomains' values, concatenated
  Vec rhs_all_ = nullptr, solution_all_ = nullptr;  ///< sequential Vecs on rhs_, solution_
  std::vector<Vec> rhs_j_, solution_j_;       ///< per subdomain, views into the buffers
  VecScatter to_subdomains_ = nullptr;        ///< global -> concatenated node sets
  Vec weights_ = nullptr;                     ///< global: 1 / m_i (average merge)
  Vec sqrt_weights_all_ = nullptr;            ///< concatenated: (1 / m_i)^(1/2) (symmetric)
  std::unique_ptr<InverseHessianInitializer> fallback_;  ///< LBFGS-H, after a failed factorization
};

}  // namespace optistep
