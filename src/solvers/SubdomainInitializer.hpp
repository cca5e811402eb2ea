#pragma once
// DOT's initializer (Li, Gao, Langlois, Jiang, Kaufman 2019, "Decomposed Optimization Time
// Integrator for Large-Step Elastodynamics", Secs. 4-5, Alg. 1): H0^-1 of L-BFGS as
// independent back-solves on rank-local subdomains of the mesh, each with a sparse Cholesky
// factorization of H[S,S], the principal submatrix of the SPD-projected Hessian at the
// step's start, merged where subdomains share nodes (average, DOT's code, or symmetric);
// ours on top: subdomains sized by work (the whole mesh split by METIS into parts of about
// dot.subdomain_nodes nodes, a rank's share of a part one subdomain), a coarse space of the
// subdomains' rigid-body modes (balanced two-level form, SPD), overlap, factors lagged
// across steps (checkpointed) and a Krylov acceleration. Type "subdomains" (solver.method:
// dot), options prefix "dot_" (the subdomains' KSP and PC under "dot_sub_", the coarse
// matrix's under "dot_coarse_", the Krylov acceleration's under "dot_krylov_").
// Contract: a back-solve never communicates; a factorization that fails makes the step fall
// back to LBFGS-H's solve (one warning line). The same scene on the same rank count gives
// the same bits, also across a restart.
// Phases: SubdomainFactor, CoarseFactor, SubdomainSolve, SubdomainMerge, CoarseSolve.
// The method, the merges, the coarse space, overlap and lagged factors, and why:
// docs/methods/dot.md.
#include <petscksp.h>

#include <memory>
#include <vector>

#include "core/PetscHandles.hpp"
#include "io/SceneSections.hpp"
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
  Vec LaggedPoint() const override { return steps_served_ > 1 ? lagged_point_.get() : nullptr; }
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
  Mat CoarseBasis() const { return coarse_ready_ ? Z_.get() : nullptr; }
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
  OwnedVec core_all_;             ///< concatenated core mask (overlap > 0, average merge)
  int refactor_every_ = 1;        ///< -dot_refactor_every: steps one factorization serves
  double refactor_growth_ = 1.5;  ///< -dot_refactor_growth: iteration growth that refactors
  int steps_served_ = 0;          ///< steps the current factorization has served
  double factored_dt_ = 0.0;      ///< the potential's dt when it was made
  int applications_ = 0;          ///< Apply calls since the last SetUp
  int first_applications_ = 0;    ///< Apply calls of the first step it served
  int last_applications_ = 0;     ///< Apply calls of the step before the last
  OwnedMat H_;
  OwnedVec lagged_point_;         ///< where H_ was taken
  OwnedVec lagged_mask_;          ///< 1, 0 at components constrained there (Project)
  std::vector<std::vector<PetscInt>> nodes_;  ///< per subdomain: global node ids, ascending
  std::vector<int> parts_;                    ///< per subdomain: its mesh part (sized), or -1
  std::vector<std::vector<PetscInt>> tet_ids_;  ///< per subdomain: original tet ids, ascending
  std::vector<OwnedIS> index_sets_;           ///< per subdomain: its dofs (block IS, bs 3)
  Mat* submatrices_ = nullptr;                ///< MatCreateSubMatrices' array
  PetscObjectState pattern_state_ = 0;        ///< H_'s nonzero state when they were made
  std::vector<OwnedKsp> ksps_;                ///< per subdomain: preonly + Cholesky
  std::vector<PetscInt> offsets_;             ///< per subdomain + 1: start in the buffers
  std::vector<PetscScalar> rhs_, solution_;   ///< the subdomains' values, concatenated
  OwnedVec rhs_all_, solution_all_;           ///< sequential Vecs on rhs_, solution_
  std::vector<OwnedVec> rhs_j_, solution_j_;  ///< per subdomain, views into the buffers
  OwnedVecScatter to_subdomains_;             ///< global -> concatenated node sets
  OwnedVec weights_;                          ///< global: 1 / m_i (average merge)
  OwnedVec sqrt_weights_all_;                 ///< concatenated: (1 / m_i)^(1/2) (symmetric)
  OwnedVec unity_all_;                        ///< concatenated: the coarse space's 1 / c_i
  // Coarse space (coarse_ == "rigid").
  bool coarse_ready_ = false;
  OwnedMat Z_, Zt_;                           ///< the basis and its stored transpose
  OwnedMat HZ_, HZt_;                         ///< H Z and its stored transpose
  OwnedMat A0_distributed_;                   ///< Z^T H Z
  OwnedMat A0_;                               ///< (A0 + A0^T) / 2 on every rank (sequential)
  std::vector<PetscInt> coarse_pattern_;      ///< Z^T's rows' columns when it was made
  PetscObjectState coarse_h_pattern_ = 0;     ///< H's nonzero state then
  OwnedKsp coarse_ksp_;                       ///< preonly + Cholesky of A0_
  OwnedVec coarse_, coarse_y_, coarse_t_;     ///< coarse layout
  OwnedVec coarse_all_, coarse_solution_all_;  ///< all of it, every rank
  OwnedVecScatter coarse_to_all_;
  OwnedVec v_, w_;                            ///< work vectors, u's layout
  OwnedKsp krylov_;                           ///< -dot_krylov_its > 0
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
