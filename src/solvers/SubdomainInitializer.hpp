#pragma once
// DOT's initializer (Li, Gao, Langlois, Jiang, Kaufman 2019, "Decomposed Optimization Time
// Integrator for Large-Step Elastodynamics", Secs. 4-5, Alg. 1): the initial inverse
// Hessian of L-BFGS as independent back-solves on subdomains of the mesh, each with a
// sparse Cholesky factorization made once per time step, merged where subdomains share
// nodes; ours on top: subdomains sized by work, a coarse space, overlap, lagging and a
// Krylov acceleration. The subdomains are rank-local, so a back-solve never communicates.
//
//  - Subdomains, sized (default): the whole mesh (every rank's counted tets, in the mesh
//    files' order, IncrementalPotential::Elements() original ids) is split by
//    METIS_PartMeshDual (ncommon = 3, fixed seed: partition/TetPartition.hpp) into
//    K = max(1, round(N / dot.subdomain_nodes)) parts, N the mesh's nodes, gathered on
//    rank 0 once per run; a rank's share of a part is one of its subdomains. K and the
//    parts depend on the mesh alone, so a part that no rank boundary cuts is the same set
//    of tets on any rank count, and a subdomain's factorization stays bounded as the mesh
//    grows (sparse Cholesky of a 3D subdomain of n nodes: memory ~ n^(4/3), work ~ n^2):
//    a rank's factorization work and memory grow linearly with its share of the mesh.
//    dot.subdomain_nodes 3000 (measured on bar17K and the twisted bars: docs/pending/dot.md).
//    Per rank (dot.subdomains_per_rank N >= 1, DOT's code's split): each rank's counted
//    tets split into N parts by the same METIS call. A subdomain's node set S is its tets'
//    nodes, owned and ghost; nodes on an interface belong to every subdomain that touches
//    them.
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
//  - One level, M1 q = merge_j(H[S_j,S_j]^-1 q|S_j), with m_i the number of subdomains
//    holding node i, w_i = 1 / m_i, R_j the restriction to S_j (block size 3):
//      average   (DOT's code, DOTTimeStepper::solve_oneStep): M1 = W sum_j R_j^T H_j^-1 R_j,
//                each node the mean of its subdomains' values; not symmetric;
//      symmetric M1 = sum_j R_j^T W_j^(1/2) H_j^-1 W_j^(1/2) R_j, an additive Schwarz
//                preconditioner with a partition of unity on both sides: SPD.
//  - Coarse space (ours, dot.coarse rigid, default; none: DOT's one level): Z, the six
//    rigid-body modes (translations; rotations about the centroid, over the RMS radius) of
//    every subdomain at the iterate the Hessian is taken at, each weighted by the partition
//    of unity 1 / c_i (c_i the subdomains holding node i, cores with overlap) and zero at
//    constrained components (IncrementalPotential::Project); a mode that vanishes there
//    (a subdomain held entirely) is left out. Since the weights sum to 1, Z reproduces the
//    rigid-body modes of the whole body exactly. A0 = Z^T H Z is formed at every
//    factorization (MatMatMult: H Z, then Z^T (H Z) with Z^T stored, so that every entry is
//    summed by one rank in a fixed order; the products' symbolic phase is kept while Z's
//    and H's patterns are) and factored redundantly on every rank (prefix "dot_coarse_",
//    CHOLMOD). With Q = Z A0^-1 Z^T the initializer is the balanced two-level form (Mandel
//    1993; Tang, Nabben, Vuik, Erlangga 2009, "Comparison of two-level preconditioners
//    derived from deflation, domain decomposition and multigrid methods", BNN)
//      H0^-1 = Q + (I - Q H) M1 (I - H Q),
//    applied with H Z stored: y = A0^-1 Z^T q, w = M1 (q - (H Z) y),
//    H0^-1 q = w + Z (y - A0^-1 (H Z)^T w). It is symmetric positive definite when M1 is
//    (the default merge with a coarse space is symmetric), and H^-1 exactly when M1 = H^-1
//    (one subdomain in all); an application costs, besides the back-solves, products with
//    Z^T, H Z, (H Z)^T and Z (a few entries per row each) and two coarse solves.
//  - A factorization that fails (not SPD, a bug: the matrix is projected) is reported on
//    rank 0 as one warning line naming the rank and subdomain, and the step falls back to
//    LBFGS-H's solve (Jacobi-PCG on the lagged Hessian to relative tolerance 1/2, options
//    -lbfgsh_*: PN-PCG's linear solve). A coarse matrix that fails is reported alike and
//    that factorization goes on with one level.
//  - Overlap (ours, -dot_overlap N, default 0 = DOT's disjoint tets): N times, every local
//    tet (counted or not) touching S adds its nodes to S; a rank holds only the tets that
//    touch its owned nodes, so with one subdomain per rank more than one layer adds
//    nothing. With the average merge only a subdomain's core values (its nodes before the
//    overlap) are merged, m_i counting the cores holding node i: restricted additive
//    Schwarz (Cai, Sarkis 1999); the symmetric merge keeps all values.
//  - Krylov acceleration (ours, -dot_krylov_its k, default 0: off): H0^-1 q is k iterations
//    of CG on the lagged Hessian preconditioned by the above (options prefix "dot_krylov_").
//  - Lagging across steps (ours, -dot_refactor_every N, default 1 = DOT: every step's
//    start): a factorization serves up to N steps; a new dt, a fallback, or a step that
//    took more than -dot_refactor_growth (1.5) times the iterations of the first step it
//    served or of the step before it refactors at once; L-BFGS's refresh
//    (solvers/LbfgsMinimizer.hpp) refactors within a step (Refresh) and when the contacts
//    at the lagged point (LaggedPoint) differ from the step's start's. The lagged state
//    (the Hessian the factors were made from, the point it was taken at, the counters) is
//    checkpointed (SaveState: datasets /dot/*, keyed by the PETSc numbering), so a run
//    resumed on the same rank count factors the same matrices again and is bitwise the
//    uninterrupted one; on another rank count the first step refactors.
// With the defaults nothing crosses steps but the subdomain structure (a function of the
// mesh): the factorization is made afresh each step. Phases: SubdomainFactor (extraction
// of the local matrices and their factorization), CoarseFactor (Z, Z^T H Z and its
// factorization), SubdomainSolve (back-solves), SubdomainMerge (scatters and weights),
// CoarseSolve (coarse corrections, products with H).
#include <petscksp.h>

#include <memory>
#include <vector>

#include "io/SceneConfig.hpp"
#include "solvers/Initializer.hpp"

namespace optistep {

extern const Phase kSubdomainFactorPhase;
extern const Phase kSubdomainSolvePhase;
extern const Phase kSubdomainMergePhase;
extern const Phase kCoarseFactorPhase;
extern const Phase kCoarseSolvePhase;

class SubdomainInitializer : public InverseHessianInitializer {
 public:
  /// Collective on comm: Create, with the scene's dot block as the defaults of
  /// -dot_subdomains_per_rank, -dot_subdomain_nodes, -dot_merge and -dot_coarse.
  SubdomainInitializer(MPI_Comm comm, const DotConfig& config, const MinimizerDefaults& defaults);
  ~SubdomainInitializer() override;

  const char* Type() const override { return "subdomains"; }
  /// Collective: reads -dot_subdomains_per_rank, -dot_subdomain_nodes, -dot_merge,
  /// -dot_coarse, -dot_overlap, -dot_krylov_its, -dot_refactor_every and
  /// -dot_refactor_growth (InputError naming the option for a bad value) and the
  /// fallback's options.
  void SetFromOptions() override;
  /// Collective: on the first call, the subdomains from potential.Elements() (InputError
  /// for a potential without elements, MPM, or for more subdomains than a rank has counted
  /// tets, naming dot.subdomains_per_rank); every call (unless the last factorization is
  /// lagged across steps, -dot_refactor_every), the Hessian at u0, the local matrices,
  /// their factorizations and the coarse space.
  void SetUp(IncrementalPotential& potential, Vec u0) override;
  /// Collective: the Hessian at u, the local matrices, their factorizations and the coarse
  /// space again, whatever the lagging.
  void Refresh(IncrementalPotential& potential, Vec u) override;
  /// Collective: r = H0^-1 q (block size 3, q and r of u's layout). Returns 0 (direct
  /// solves), the Krylov iterations (-dot_krylov_its), or the fallback's CG iterations.
  int Apply(Vec q, Vec r) override;
  void View(PetscViewer viewer) const override;
  Mat LaggedHessian() const override { return H_; }
  Vec LaggedPoint() const override { return steps_served_ > 1 ? lagged_point_ : nullptr; }
  void SaveState(CheckpointWriter& out) override;
  void LoadState(const CheckpointReader& in, bool same_ranks) override;

  // What a step set up, for tests and diagnostics (rank-local unless said otherwise).
  /// Subdomains of this rank.
  int SubdomainCount() const { return static_cast<int>(nodes_.size()); }
  /// Global node ids (PETSc numbering) of subdomain j's node set S_j, ascending: the row
  /// order of SubdomainMatrix(j) (3 rows per node).
  const std::vector<PetscInt>& SubdomainNodes(int j) const { return nodes_[j]; }
  /// Sized subdomains: the mesh part (0..K-1) subdomain j is this rank's share of; per rank:
  /// -1.
  int SubdomainPart(int j) const { return parts_[j]; }
  /// The original ids of subdomain j's tets (the mesh files' numbering), ascending.
  const std::vector<PetscInt>& SubdomainTets(int j) const { return tet_ids_[j]; }
  /// H[S_j, S_j] of the last SetUp (sequential AIJ, 3 |S_j| rows).
  Mat SubdomainMatrix(int j) const { return submatrices_[j]; }
  /// Whether the last SetUp fell back to LBFGS-H (a factorization failed on some rank).
  bool FellBack() const { return fell_back_; }
  /// The coarse basis Z (n x K6: u's rows, one column per kept rigid-body mode; MPIAIJ),
  /// null without a coarse space or when its factorization failed.
  Mat CoarseBasis() const { return coarse_ready_ ? Z_ : nullptr; }
  /// Collective: r = M1 q, the one-level back-solves and merge alone.
  void ApplyOneLevel(Vec q, Vec r);

 private:
  /// Collective: the node sets of this rank's subdomains, the scatter to their
  /// concatenation, the multiplicities and the back-solve KSPs.
  void BuildSubdomains(const ElementSets& elements, Vec layout);
  /// Collective: the mesh part of each of this rank's counted tets (`counted`, indices
  /// into elements.tets), K parts by METIS on rank 0 (sized subdomains).
  std::vector<int> SizedParts(const ElementSets& elements, const std::vector<int>& counted, int* parts) const;
  /// Collective: the Hessian at u, the constraints' mask there, and FactorLagged.
  void Factorize(IncrementalPotential& potential, Vec u);
  /// Collective: from H_, lagged_point_ and lagged_mask_ (taken at u, or restored from a
  /// checkpoint): the local matrices, their factorizations, the coarse space; fell_back_
  /// (and the fallback set up at lagged_point_) on a failed factorization.
  void FactorLagged(IncrementalPotential& potential);
  /// Collective: H_, lagged_point_, lagged_mask_ and the counters from restored_, factored.
  void RestoreLagged(IncrementalPotential& potential, Vec layout);
  /// Collective: factors every H[S_j,S_j]; returns false on every rank if one failed on
  /// some rank, after the warning line.
  bool Factor();
  /// Collective: Z at lagged_point_ with lagged_mask_, A0 = Z^T H Z and its
  /// factorization; coarse_ready_ false (after a warning line) if that failed.
  void BuildCoarseSpace();
  /// Collective: solution = A0^-1 (rows q), rows Z^T or (H Z)^T (coarse layout).
  void CoarseSolve(Mat rows, Vec q, Vec solution);
  /// Collective: the one- or two-level H0^-1 (no Krylov).
  void ApplyPreconditioner(Vec q, Vec r);
  static PetscErrorCode ShellApply(PC pc, Vec q, Vec r);
  void DestroySubdomains();
  void DestroyCoarseSpace();

  MPI_Comm comm_;
  MinimizerDefaults defaults_;
  int subdomains_per_rank_;       ///< 0: sized by subdomain_nodes_
  int subdomain_nodes_;
  std::string merge_;             ///< "average" | "symmetric" (empty until SetFromOptions)
  std::string coarse_space_;      ///< "rigid" | "none"
  bool built_ = false;
  bool fell_back_ = false;
  int overlap_ = 0;               ///< -dot_overlap: layers added to every subdomain
  int krylov_its_ = 0;            ///< -dot_krylov_its: CG iterations (0: none)
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
  Vec lagged_point_ = nullptr;    ///< where H_ was taken
  Vec lagged_mask_ = nullptr;     ///< 1, 0 at components constrained there (Project)
  std::vector<std::vector<PetscInt>> nodes_;  ///< per subdomain: global node ids, ascending
  std::vector<int> parts_;                    ///< per subdomain: its mesh part (sized), or -1
  std::vector<std::vector<PetscInt>> tet_ids_;  ///< per subdomain: original tet ids, ascending
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
  Vec unity_all_ = nullptr;                   ///< concatenated: the coarse space's 1 / c_i
  // Coarse space (coarse_ == "rigid").
  bool coarse_ready_ = false;
  Mat Z_ = nullptr, Zt_ = nullptr;            ///< the basis and its stored transpose
  Mat HZ_ = nullptr, HZt_ = nullptr;          ///< H Z and its stored transpose
  Mat A0_distributed_ = nullptr;              ///< Z^T H Z
  Mat A0_ = nullptr;                          ///< (A0 + A0^T) / 2 on every rank (sequential)
  std::vector<PetscInt> coarse_pattern_;      ///< Z^T's rows' columns when it was made
  PetscObjectState coarse_h_pattern_ = 0;     ///< H's nonzero state then
  KSP coarse_ksp_ = nullptr;                  ///< preonly + Cholesky of A0_
  Vec coarse_ = nullptr, coarse_y_ = nullptr, coarse_t_ = nullptr;  ///< coarse layout
  Vec coarse_all_ = nullptr, coarse_solution_all_ = nullptr;       ///< all of it, every rank
  VecScatter coarse_to_all_ = nullptr;
  Vec v_ = nullptr, w_ = nullptr;             ///< work vectors, u's layout
  KSP krylov_ = nullptr;                      ///< -dot_krylov_its > 0
  std::unique_ptr<InverseHessianInitializer> fallback_;  ///< LBFGS-H, after a failed factorization
  // A checkpoint's lagged state, read by LoadState and used by the next SetUp.
  struct Restored {
    PetscInt first_row = 0;
    std::vector<PetscInt> row_lengths, columns;
    std::vector<PetscScalar> values, point, mask;
    int steps_served = 0, applications = 0, first_applications = 0, last_applications = 0;
    double factored_dt = 0.0;
  };
  std::unique_ptr<Restored> restored_;
};

}  // namespace optistep
