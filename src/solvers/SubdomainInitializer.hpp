#pragma once
// DOT's initializer (Li, Gao, Langlois, Jiang, Kaufman 2019, "Decomposed Optimization Time
// Integrator for Large-Step Elastodynamics", Secs. 4-5, Alg. 1): H0^-1 of L-BFGS as
// independent back-solves on rank-local subdomains of the mesh (each rank's tets split by
// METIS), each with a sparse Cholesky factorization of H[S,S], the principal submatrix of the
// SPD-projected Hessian at the step's start, merged where subdomains share nodes (average,
// DOT's code, or symmetric). Type "subdomains" (solver.method: dot), options prefix "dot_"
// (-dot_subdomains_per_rank, -dot_merge, -dot_overlap, -dot_refactor_every,
// -dot_refactor_growth; the subdomains' KSP and PC under "dot_sub_").
// Contract: a back-solve never communicates; a factorization that fails makes the step fall
// back to LBFGS-H's solve (one warning line). With the defaults nothing crosses steps but the
// subdomain structure; with -dot_refactor_every N > 1 the factors do, and are not
// checkpointed (a resumed run then matches to solver tolerance, not bitwise).
// Phases: SubdomainFactor, SubdomainSolve, SubdomainMerge.
// The method, the merges, overlap and lagged factors, and why: docs/methods/dot.md.
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
