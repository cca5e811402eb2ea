#include "solvers/SubdomainInitializer.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/Error.hpp"
#include "partition/TetPartition.hpp"
#include "solvers/InitializerFactory.hpp"

namespace optistep {

const Phase kSubdomainFactorPhase("SubdomainFactor");
const Phase kSubdomainSolvePhase("SubdomainSolve");
const Phase kSubdomainMergePhase("SubdomainMerge");

namespace {

const char* const kMerges[] = {"average", "symmetric"};

}  // namespace

SubdomainInitializer::SubdomainInitializer(MPI_Comm comm, const DotConfig& config,
                                           const MinimizerDefaults& defaults)
    : comm_(comm),
      defaults_(defaults),
      subdomains_per_rank_(config.subdomains_per_rank),
      merge_(config.merge) {}

SubdomainInitializer::~SubdomainInitializer() {
  DestroySubdomains();
  MatDestroy(&H_);
}

void SubdomainInitializer::DestroySubdomains() {
  if (submatrices_) MatDestroySubMatrices(static_cast<PetscInt>(nodes_.size()), &submatrices_);
  for (IS& is : index_sets_) ISDestroy(&is);
  for (KSP& ksp : ksps_) KSPDestroy(&ksp);
  for (Vec& v : rhs_j_) VecDestroy(&v);
  for (Vec& v : solution_j_) VecDestroy(&v);
  index_sets_.clear();
  ksps_.clear();
  rhs_j_.clear();
  solution_j_.clear();
  nodes_.clear();
  VecDestroy(&rhs_all_);
  VecDestroy(&solution_all_);
  VecScatterDestroy(&to_subdomains_);
  VecDestroy(&weights_);
  VecDestroy(&sqrt_weights_all_);
  VecDestroy(&core_all_);
  built_ = false;
}

void SubdomainInitializer::SetFromOptions() {
  PetscInt per_rank = subdomains_per_rank_;
  PetscInt refactor_every = refactor_every_;
  PetscInt overlap = overlap_;
  CallReadingOptions("dot_", [&] {
    PetscOptionsBegin(comm_, "dot_", "DOT subdomain back-solves (Li et al. 2019)", "Initializer");
    PetscCall(PetscOptionsInt("-subdomains_per_rank", "Subdomains per rank: its counted tets split by "
                              "METIS_PartMeshDual (scene: dot.subdomains_per_rank)",
                              "", per_rank, &per_rank, nullptr));
    PetscInt merge = merge_ == kMerges[1] ? 1 : 0;
    PetscCall(PetscOptionsEList("-merge", "Merge of the back-solves at shared nodes: average (DOT's "
                                "code) or symmetric (partition of unity on both sides) (scene: dot.merge)",
                                "", kMerges, 2, kMerges[merge], &merge, nullptr));
    merge_ = kMerges[merge];
    PetscCall(PetscOptionsInt("-overlap", "Layers of neighbouring tets' nodes added to every "
                              "subdomain (ours; 0: DOT's disjoint tets); with the average merge only "
                              "core values are merged (restricted additive Schwarz)",
                              "", overlap, &overlap, nullptr));
    PetscCall(PetscOptionsInt("-refactor_every", "Steps one factorization serves: 1 (DOT: the Hessian "
                              "at every step's start) or more (ours: lagged across steps; a new dt "
                              "or a failed factorization refactors at once)",
                              "", refactor_every, &refactor_every, nullptr));
    PetscCall(PetscOptionsReal("-refactor_growth", "With -dot_refactor_every > 1, also refactor when a "
                               "step took more than this times the iterations of the step right after "
                               "the last factorization or of the step before it (0: never)",
                               "", refactor_growth_, &refactor_growth_, nullptr));
    PetscOptionsEnd();
    return PetscErrorCode(0);
  });
  // Checked after PetscOptionsEnd: an exception must not leave the options block open.
  if (per_rank < 1)
    throw InputError("-dot_subdomains_per_rank " + std::to_string(per_rank) + ": expected an integer >= 1");
  subdomains_per_rank_ = static_cast<int>(per_rank);
  if (refactor_every < 1)
    throw InputError("-dot_refactor_every " + std::to_string(refactor_every) + ": expected an integer >= 1");
  refactor_every_ = static_cast<int>(refactor_every);
  if (overlap < 0) throw InputError("-dot_overlap " + std::to_string(overlap) + ": expected an integer >= 0");
  overlap_ = static_cast<int>(overlap);
  if (!(refactor_growth_ >= 0.0)) throw InputError("-dot_refactor_growth: expected a number >= 0");
  fallback_ = CreateInitializer(comm_, "lagged_hessian", SolverConfig{}, defaults_, "-dot_initializer");
  fallback_->SetFromOptions();
}

void SubdomainInitializer::BuildSubdomains(const ElementSets& elements, Vec layout) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  // This rank's counted tets, renumbered compactly for METIS.
  std::vector<int> counted;
  for (std::size_t e = 0; e < elements.tets.size(); ++e)
    if (elements.counted[e]) counted.push_back(static_cast<int>(e));
  std::string error;
  if (static_cast<std::size_t>(subdomains_per_rank_) > counted.size())
    error = "dot.subdomains_per_rank (or -dot_subdomains_per_rank) = " +
            std::to_string(subdomains_per_rank_) + ": rank " + std::to_string(rank) + " has " +
            std::to_string(counted.size()) + " tets; expected at most that many subdomains per rank";
  ThrowIfAnyRank(comm_, error);

  std::vector<int> part(counted.size(), 0);
  if (subdomains_per_rank_ > 1) {
    GlobalTetMesh mesh;
    std::vector<int> compact(elements.local_to_global.size(), -1);
    for (int e : counted) {
      std::array<int, 4> t = elements.tets[e];
      for (int& n : t) {
        if (compact[n] < 0) {  // METIS reads only the node count from X
          compact[n] = static_cast<int>(mesh.X.size());
          mesh.X.emplace_back(Vec3::Zero());
        }
        n = compact[n];
      }
      mesh.tets.push_back(t);
    }
    mesh.node_body.assign(mesh.X.size(), 0);
    mesh.tet_body.assign(mesh.tets.size(), 0);
    part = PlanTetPartition(mesh, subdomains_per_rank_).tet_part;
  }

  // Node sets, ascending in the global numbering; parts METIS left empty are dropped.
  nodes_.assign(subdomains_per_rank_, {});
  for (std::size_t k = 0; k < counted.size(); ++k)
    for (int n : elements.tets[counted[k]]) nodes_[part[k]].push_back(elements.local_to_global[n]);
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [](const auto& s) { return s.empty(); }),
               nodes_.end());
  for (auto& s : nodes_) {
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
  }
  // Overlap: each layer adds the nodes of every local tet (counted or not) that touches the
  // set; core_ keeps, per subdomain, which of its nodes were in it before.
  core_.clear();
  if (overlap_ > 0) {
    std::vector<std::vector<int>> node_tets(elements.local_to_global.size());
    for (std::size_t e = 0; e < elements.tets.size(); ++e)
      for (int n : elements.tets[e]) node_tets[n].push_back(static_cast<int>(e));
    // Local nodes in ascending global index: the local node of a global one by bisection.
    const std::vector<PetscInt>& global = elements.local_to_global;
    std::vector<int> order(global.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) { return global[a] < global[b]; });
    auto local_of = [&](PetscInt g) {
      return *std::lower_bound(order.begin(), order.end(), g, [&](int a, PetscInt v) { return global[a] < v; });
    };
    for (auto& s : nodes_) {
      const std::vector<PetscInt> core = s;
      for (int layer = 0; layer < overlap_; ++layer) {
        std::vector<PetscInt> grown = s;
        for (PetscInt g : s)
          for (int e : node_tets[local_of(g)])
            for (int n : elements.tets[e]) grown.push_back(elements.local_to_global[n]);
        std::sort(grown.begin(), grown.end());
        grown.erase(std::unique(grown.begin(), grown.end()), grown.end());
        s.swap(grown);
      }
      std::vector<char> in_core(s.size(), 0);
      for (std::size_t i = 0; i < s.size(); ++i) in_core[i] = std::binary_search(core.begin(), core.end(), s[i]);
      core_.push_back(std::move(in_core));
    }
  }
  offsets_.assign(1, 0);
  for (auto& s : nodes_) offsets_.push_back(offsets_.back() + 3 * static_cast<PetscInt>(s.size()));

  const int n_sub = SubdomainCount();
  rhs_.assign(offsets_.back(), 0.0);
  solution_.assign(offsets_.back(), 0.0);
  OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, offsets_.back(), rhs_.data(), &rhs_all_));
  OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, offsets_.back(), solution_.data(), &solution_all_));
  std::vector<PetscInt> all_nodes;
  for (int j = 0; j < n_sub; ++j) {
    IS is = nullptr;
    OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, static_cast<PetscInt>(nodes_[j].size()),
                                 nodes_[j].data(), PETSC_COPY_VALUES, &is));
    index_sets_.push_back(is);
    all_nodes.insert(all_nodes.end(), nodes_[j].begin(), nodes_[j].end());
    const PetscInt n = offsets_[j + 1] - offsets_[j];
    Vec b = nullptr, x = nullptr;
    OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, n, rhs_.data() + offsets_[j], &b));
    OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, n, solution_.data() + offsets_[j], &x));
    rhs_j_.push_back(b);
    solution_j_.push_back(x);
    ksps_.push_back(CreateCholeskyKsp(PETSC_COMM_SELF, "dot_sub_", MATSOLVERCHOLMOD));
  }

  // Global -> every subdomain's dofs, one after the other: forward INSERT gathers q|S_j,
  // reverse ADD sums the back-solves. PETSc's scatter adds the contributions to a node in
  // a fixed order for a given layout (local ones, then other ranks' in rank order), so the
  // merge is bitwise repeatable.
  IS from = nullptr;
  OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, static_cast<PetscInt>(all_nodes.size()), all_nodes.data(),
                               PETSC_COPY_VALUES, &from));
  OPTISTEP_PETSC(VecScatterCreate(layout, from, rhs_all_, nullptr, &to_subdomains_));
  ISDestroy(&from);

  // m_i, the number of subdomains holding node i (over all ranks), and w_i = 1 / m_i. With
  // overlap and the average merge (restricted: only core values are merged), m_i counts
  // the subdomains holding node i in their core.
  OPTISTEP_PETSC(VecDuplicate(layout, &weights_));
  OPTISTEP_PETSC(VecSet(weights_, 0.0));
  OPTISTEP_PETSC(VecSet(solution_all_, 1.0));
  if (overlap_ > 0 && merge_ == "average") {
    OPTISTEP_PETSC(VecDuplicate(solution_all_, &core_all_));
    PetscScalar* c = nullptr;
    OPTISTEP_PETSC(VecGetArray(core_all_, &c));
    for (int j = 0; j < n_sub; ++j)
      for (std::size_t i = 0; i < core_[j].size(); ++i)
        for (int k = 0; k < 3; ++k) c[offsets_[j] + 3 * static_cast<PetscInt>(i) + k] = core_[j][i] ? 1.0 : 0.0;
    OPTISTEP_PETSC(VecRestoreArray(core_all_, &c));
    OPTISTEP_PETSC(VecCopy(core_all_, solution_all_));
  }
  OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, solution_all_, weights_, ADD_VALUES, SCATTER_REVERSE));
  OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, solution_all_, weights_, ADD_VALUES, SCATTER_REVERSE));
  PetscScalar* w = nullptr;
  PetscInt n_local = 0;
  OPTISTEP_PETSC(VecGetLocalSize(weights_, &n_local));
  OPTISTEP_PETSC(VecGetArray(weights_, &w));
  for (PetscInt i = 0; i < n_local; ++i) w[i] = w[i] > 0.0 ? 1.0 / w[i] : 0.0;
  OPTISTEP_PETSC(VecRestoreArray(weights_, &w));
  if (merge_ == "symmetric") {
    Vec sqrt_weights = nullptr;
    OPTISTEP_PETSC(VecDuplicate(weights_, &sqrt_weights));
    OPTISTEP_PETSC(VecCopy(weights_, sqrt_weights));
    OPTISTEP_PETSC(VecSqrtAbs(sqrt_weights));
    OPTISTEP_PETSC(VecDuplicate(rhs_all_, &sqrt_weights_all_));
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, sqrt_weights, sqrt_weights_all_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, sqrt_weights, sqrt_weights_all_, INSERT_VALUES, SCATTER_FORWARD));
    VecDestroy(&sqrt_weights);
  }
  built_ = true;
}

bool SubdomainInitializer::Factor() {
  int first_failed = -1;
  std::string reason, option_error;
  for (int j = 0; j < SubdomainCount(); ++j) {
    // A principal submatrix of the projected Hessian: symmetric (CHOLMOD reads one triangle).
    OPTISTEP_PETSC(MatSetOption(submatrices_[j], MAT_SYMMETRIC, PETSC_TRUE));
    OPTISTEP_PETSC(KSPSetOperators(ksps_[j], submatrices_[j], submatrices_[j]));
    // A factorization package or format that does not fit is an option error, judged here;
    // a zero or negative pivot (CHOLMOD reports it as an error, PETSc's own Cholesky as the
    // PC's failed reason) is a failed factorization. Both are thrown only after every rank
    // has tried, since a back-solve is rank-local.
    PetscErrorCode code = 0;
    try {
      CallReadingOptions("dot_sub_", [&] { return code = KSPSetUp(ksps_[j]); });
    } catch (const InputError& e) {
      if (code != PETSC_ERR_MAT_CH_ZRPVT) {
        if (option_error.empty()) option_error = e.what();
        continue;
      }
      if (first_failed < 0) {
        first_failed = j;
        const std::string what = e.what();  // "<options>: <PETSc's message>"
        reason = what.substr(what.find(": ") + 2);
      }
      // A failed numeric factorization leaves CHOLMOD's factor unusable for the next
      // step's: the next set-up starts from the symbolic one again.
      OPTISTEP_PETSC(KSPReset(ksps_[j]));
      continue;
    }
    PC pc = nullptr;
    OPTISTEP_PETSC(KSPGetPC(ksps_[j], &pc));
    PCFailedReason failed = PC_NOERROR;
    OPTISTEP_PETSC(PCGetFailedReason(pc, &failed));
    if (failed != PC_NOERROR) {
      if (first_failed < 0) {
        first_failed = j;
        reason = PCFailedReasons[failed];
      }
      OPTISTEP_PETSC(KSPReset(ksps_[j]));
    }
  }
  ThrowIfAnyRank(comm_, option_error);
  // Every rank learns the first failing (rank, subdomain); rank 0 names it.
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  std::vector<int> failed(size, -1);
  MPI_Allgather(&first_failed, 1, MPI_INT, failed.data(), 1, MPI_INT, comm_);
  const auto culprit = std::find_if(failed.begin(), failed.end(), [](int j) { return j >= 0; });
  if (culprit == failed.end()) return true;
  const int culprit_rank = static_cast<int>(culprit - failed.begin());
  const std::string message = MessageOfAnyRank(
      comm_, rank == culprit_rank
                 ? "DOT: the Cholesky factorization of subdomain " + std::to_string(first_failed) +
                       " of rank " + std::to_string(rank) + " (" + std::to_string(nodes_[first_failed].size()) +
                       " nodes) failed: " + reason +
                       " (a bug: the Hessian is projected); this step falls back to the PN-PCG "
                       "direction (LBFGS-H: Jacobi-PCG on the lagged Hessian)"
                 : "");
  if (rank == 0) std::fprintf(stderr, "optistep: warning: %s\n", message.c_str());
  return false;
}

void SubdomainInitializer::SetUp(IncrementalPotential& potential, Vec u0) {
  const ElementSets* elements = potential.Elements();
  if (!elements)
    throw InputError("the subdomains initializer (DOT) needs a tet mesh: only FEM scenes "
                     "(discretization: fem) take solver.method dot");
  if (!built_) BuildSubdomains(*elements, u0);
  // Lagging across steps (refactor_every_ > 1): the last factorization serves this step
  // too unless it is as old as allowed, dt changed (M / dt^2 in H), the previous set-up
  // fell back, or the last step needed more than refactor_growth_ times the iterations of
  // the first step it served or of the step before it (a contact that came within the
  // step the factors were made for: their next step would start from stale contacts).
  const int applied = applications_, before = last_applications_;
  applications_ = 0;
  last_applications_ = applied;
  if (steps_served_ == 1) first_applications_ = applied;
  const bool grown = refactor_growth_ > 0.0 &&
                     ((steps_served_ > 1 && applied > refactor_growth_ * std::max(first_applications_, 1)) ||
                      (before > 0 && applied > refactor_growth_ * before));
  if (H_ && !fell_back_ && steps_served_ < refactor_every_ && potential.StepSize() == factored_dt_ && !grown) {
    ++steps_served_;
    return;
  }
  steps_served_ = 1;
  factored_dt_ = potential.StepSize();
  MatDestroy(&H_);
  H_ = potential.CreateHessian();
  potential.Hessian(u0, H_);
  {
    ScopedPhase timed(kSubdomainFactorPhase);
    // The principal submatrices H[S_j, S_j], rows of other ranks' nodes included. Those of
    // another nonzero pattern cannot be reused (self-contact adds blocks that come and go).
    PetscObjectState pattern = 0;
    OPTISTEP_PETSC(MatGetNonzeroState(H_, &pattern));
    if (submatrices_ && pattern != pattern_state_)
      OPTISTEP_PETSC(MatDestroySubMatrices(SubdomainCount(), &submatrices_));
    pattern_state_ = pattern;
    OPTISTEP_PETSC(MatCreateSubMatrices(H_, SubdomainCount(), index_sets_.data(), index_sets_.data(),
                                        submatrices_ ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX,
                                        &submatrices_));
    fell_back_ = !Factor();
  }
  if (fell_back_) fallback_->SetUp(potential, u0);
}

int SubdomainInitializer::Apply(Vec q, Vec r) {
  ++applications_;
  if (fell_back_) return fallback_->Apply(q, r);
  const bool symmetric = merge_ == "symmetric";
  {
    ScopedPhase timed(kSubdomainMergePhase);
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, q, rhs_all_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, q, rhs_all_, INSERT_VALUES, SCATTER_FORWARD));
    if (symmetric) OPTISTEP_PETSC(VecPointwiseMult(rhs_all_, rhs_all_, sqrt_weights_all_));
  }
  {
    ScopedPhase timed(kSubdomainSolvePhase);
    for (int j = 0; j < SubdomainCount(); ++j) OPTISTEP_PETSC(KSPSolve(ksps_[j], rhs_j_[j], solution_j_[j]));
  }
  {
    ScopedPhase timed(kSubdomainMergePhase);
    if (symmetric) OPTISTEP_PETSC(VecPointwiseMult(solution_all_, solution_all_, sqrt_weights_all_));
    if (core_all_) OPTISTEP_PETSC(VecPointwiseMult(solution_all_, solution_all_, core_all_));
    OPTISTEP_PETSC(VecSet(r, 0.0));
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, solution_all_, r, ADD_VALUES, SCATTER_REVERSE));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, solution_all_, r, ADD_VALUES, SCATTER_REVERSE));
    if (!symmetric) OPTISTEP_PETSC(VecPointwiseMult(r, r, weights_));
  }
  return 0;
}

void SubdomainInitializer::View(PetscViewer viewer) const {
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(
      viewer,
      "initializer subdomains (DOT, Li et al. 2019): back-solves of H[S,S] of the Hessian at the "
      "step's start on %d subdomain(s) per rank, overlap %d, merge %s, refactored every %d "
      "step(s) (growth trigger %g), options prefix -dot_ (back-solves -dot_sub_)\n",
      subdomains_per_rank_, overlap_, merge_.c_str(), refactor_every_, refactor_growth_));
  if (!ksps_.empty()) {
    PetscViewer sub = nullptr;
    OPTISTEP_PETSC(PetscViewerGetSubViewer(viewer, PETSC_COMM_SELF, &sub));
    int rank = 0;
    MPI_Comm_rank(comm_, &rank);
    if (rank == 0) OPTISTEP_PETSC(KSPView(ksps_[0], sub));
    OPTISTEP_PETSC(PetscViewerRestoreSubViewer(viewer, PETSC_COMM_SELF, &sub));
  }
}

}  // namespace optistep
