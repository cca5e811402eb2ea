#include "solvers/SubdomainInitializer.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "core/Error.hpp"
#include "io/Checkpoint.hpp"
#include "partition/TetPartition.hpp"
#include "solvers/InitializerFactory.hpp"

namespace optistep {

const Phase kSubdomainFactorPhase("SubdomainFactor");
const Phase kSubdomainSolvePhase("SubdomainSolve");
const Phase kSubdomainMergePhase("SubdomainMerge");
const Phase kCoarseFactorPhase("CoarseFactor");
const Phase kCoarseSolvePhase("CoarseSolve");

namespace {

const char* const kMerges[] = {"average", "symmetric"};
const char* const kCoarseSpaces[] = {"rigid", "none"};

/// Collective: a Cholesky KSP's set-up; "" on success, else the reason of a failed
/// factorization (a zero or negative pivot: CHOLMOD reports it as an error, PETSc's own
/// Cholesky as the PC's failed reason; the KSP is then reset). An option that does not
/// fit (package, format) is an InputError, put into *option_error.
std::string SetUpCholesky(KSP ksp, const std::string& prefix, std::string* option_error) {
  PetscErrorCode code = 0;
  try {
    CallReadingOptions(prefix, [&] { return code = KSPSetUp(ksp); });
  } catch (const InputError& e) {
    if (code != PETSC_ERR_MAT_CH_ZRPVT) {
      if (option_error->empty()) *option_error = e.what();
      return "";
    }
    // A failed numeric factorization leaves CHOLMOD's factor unusable for the next one:
    // the next set-up starts from the symbolic one again.
    OPTISTEP_PETSC(KSPReset(ksp));
    const std::string what = e.what();  // "<options>: <PETSc's message>"
    return what.substr(what.find(": ") + 2);
  }
  PC pc = nullptr;
  OPTISTEP_PETSC(KSPGetPC(ksp, &pc));
  PCFailedReason failed = PC_NOERROR;
  OPTISTEP_PETSC(PCGetFailedReason(pc, &failed));
  if (failed == PC_NOERROR) return "";
  OPTISTEP_PETSC(KSPReset(ksp));
  return PCFailedReasons[failed];
}

/// The double's bits as an int64 (a checkpoint attribute) and back.
int64_t Bits(double x) {
  int64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
double FromBits(int64_t b) {
  double x = 0.0;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

}  // namespace

SubdomainInitializer::SubdomainInitializer(MPI_Comm comm, const DotConfig& config,
                                           const MinimizerDefaults& defaults)
    : comm_(comm),
      defaults_(defaults),
      subdomains_per_rank_(config.subdomains_per_rank),
      subdomain_nodes_(config.subdomain_nodes),
      merge_(config.merge),
      coarse_space_(config.coarse) {}

SubdomainInitializer::~SubdomainInitializer() {
  DestroySubdomains();
  DestroyCoarseSpace();
}

void SubdomainInitializer::DestroySubdomains() {
  if (submatrices_) MatDestroySubMatrices(static_cast<PetscInt>(nodes_.size()), &submatrices_);
  index_sets_.clear();
  ksps_.clear();
  rhs_j_.clear();
  solution_j_.clear();
  nodes_.clear();
  parts_.clear();
  tet_ids_.clear();
  rhs_all_.reset();
  solution_all_.reset();
  to_subdomains_.reset();
  weights_.reset();
  sqrt_weights_all_.reset();
  unity_all_.reset();
  core_all_.reset();
  built_ = false;
}

void SubdomainInitializer::DestroyCoarseSpace() {
  Z_.reset();
  Zt_.reset();
  HZ_.reset();
  HZt_.reset();
  A0_distributed_.reset();
  A0_.reset();
  coarse_.reset();
  coarse_y_.reset();
  coarse_t_.reset();
  coarse_all_.reset();
  coarse_solution_all_.reset();
  coarse_to_all_.reset();
  coarse_pattern_.clear();
  coarse_ready_ = false;
}

void SubdomainInitializer::SetFromOptions() {
  PetscInt per_rank = subdomains_per_rank_;
  PetscInt target = subdomain_nodes_;
  PetscInt refactor_every = refactor_every_;
  PetscInt overlap = overlap_;
  PetscInt krylov_its = krylov_its_;
  CallReadingOptions("dot_", [&] {
    PetscOptionsBegin(comm_, "dot_", "DOT subdomain back-solves (Li et al. 2019)", "Initializer");
    PetscCall(PetscOptionsInt("-subdomains_per_rank", "Subdomains per rank: its counted tets split by "
                              "METIS_PartMeshDual; 0: sized by subdomain_nodes (scene: "
                              "dot.subdomains_per_rank)",
                              "", per_rank, &per_rank, nullptr));
    PetscCall(PetscOptionsInt("-subdomain_nodes", "Target nodes per subdomain: the mesh split into "
                              "round(nodes / this) parts by METIS, a rank's share of a part one "
                              "subdomain (scene: dot.subdomain_nodes)",
                              "", target, &target, nullptr));
    PetscInt coarse = coarse_space_ == kCoarseSpaces[1] ? 1 : 0;
    PetscCall(PetscOptionsEList("-coarse", "Coarse space: rigid (two-level: each subdomain's rigid-body "
                                "modes, balanced form) or none (DOT's one level) (scene: dot.coarse)",
                                "", kCoarseSpaces, 2, kCoarseSpaces[coarse], &coarse, nullptr));
    coarse_space_ = kCoarseSpaces[coarse];
    if (merge_.empty()) merge_ = coarse_space_ == "rigid" ? "symmetric" : "average";
    PetscInt merge = merge_ == kMerges[1] ? 1 : 0;
    PetscCall(PetscOptionsEList("-merge", "Merge of the back-solves at shared nodes: average (DOT's "
                                "code) or symmetric (partition of unity on both sides; the default with "
                                "a coarse space) (scene: dot.merge)",
                                "", kMerges, 2, kMerges[merge], &merge, nullptr));
    merge_ = kMerges[merge];
    PetscCall(PetscOptionsInt("-overlap", "Layers of neighbouring tets' nodes added to every "
                              "subdomain (ours; 0: DOT's disjoint tets); with the average merge only "
                              "core values are merged (restricted additive Schwarz)",
                              "", overlap, &overlap, nullptr));
    PetscCall(PetscOptionsInt("-krylov_its", "CG iterations on the lagged Hessian preconditioned by the "
                              "subdomain solves per application (ours; 0: none; KSP prefix "
                              "-dot_krylov_)",
                              "", krylov_its, &krylov_its, nullptr));
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
  if (per_rank < 0)
    throw InputError("-dot_subdomains_per_rank " + std::to_string(per_rank) +
                     ": expected an integer >= 0 (0: sized by -dot_subdomain_nodes)");
  subdomains_per_rank_ = static_cast<int>(per_rank);
  if (target < 1)
    throw InputError("-dot_subdomain_nodes " + std::to_string(target) + ": expected an integer >= 1");
  subdomain_nodes_ = static_cast<int>(target);
  if (refactor_every < 1)
    throw InputError("-dot_refactor_every " + std::to_string(refactor_every) + ": expected an integer >= 1");
  refactor_every_ = static_cast<int>(refactor_every);
  if (overlap < 0) throw InputError("-dot_overlap " + std::to_string(overlap) + ": expected an integer >= 0");
  overlap_ = static_cast<int>(overlap);
  if (krylov_its < 0)
    throw InputError("-dot_krylov_its " + std::to_string(krylov_its) + ": expected an integer >= 0");
  krylov_its_ = static_cast<int>(krylov_its);
  if (!(refactor_growth_ >= 0.0)) throw InputError("-dot_refactor_growth: expected a number >= 0");
  fallback_ = CreateInitializer(comm_, "lagged_hessian", SolverConfig{}, defaults_, "-dot_initializer");
  fallback_->SetFromOptions();
  krylov_.reset();
  if (krylov_its_ > 0) {
    CallReadingOptions("dot_krylov_", [&] {
      PetscCall(KSPCreate(comm_, krylov_.out()));
      PetscCall(KSPSetOptionsPrefix(krylov_, "dot_krylov_"));
      PetscCall(KSPSetType(krylov_, KSPCG));
      // A fixed number of iterations: no relative tolerance to meet.
      PetscCall(KSPSetTolerances(krylov_, 0.0, 0.0, PETSC_DEFAULT, krylov_its_));
      PC pc = nullptr;
      PetscCall(KSPGetPC(krylov_, &pc));
      PetscCall(PCSetType(pc, PCSHELL));
      PetscCall(PCShellSetContext(pc, this));
      PetscCall(PCShellSetApply(pc, ShellApply));
      PetscCall(PCShellSetName(pc, "DOT subdomain back-solves"));
      PetscCall(KSPSetFromOptions(krylov_));
      return PetscErrorCode(0);
    });
    AbandonableKrylov(krylov_);
  }
}

std::vector<int> SubdomainInitializer::SizedParts(const ElementSets& elements, const std::vector<int>& counted,
                                                  int* parts) const {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  // Per counted tet: its original id and its nodes' original ids.
  std::vector<long long> mine;
  mine.reserve(5 * counted.size());
  for (int e : counted) {
    mine.push_back(elements.tet_original_id[e]);
    for (int n : elements.tets[e]) mine.push_back(elements.node_original_id[n]);
  }
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(size, 0), displacements(size, 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_);
  for (int r = 1; r < size; ++r) displacements[r] = displacements[r - 1] + counts[r - 1];
  std::vector<long long> all(rank == 0 ? static_cast<std::size_t>(displacements.back() + counts.back()) : 0);
  MPI_Gatherv(mine.data(), count, MPI_LONG_LONG, all.data(), counts.data(), displacements.data(), MPI_LONG_LONG, 0,
              comm_);
  std::vector<int> all_parts(all.size() / 5, 0);
  int k = 1;
  if (rank == 0) {
    // The mesh in the files' order, whatever the rank count: tets by original id, nodes
    // numbered compactly in ascending original id.
    const std::size_t n_tets = all.size() / 5;
    std::vector<std::size_t> order(n_tets);
    for (std::size_t t = 0; t < n_tets; ++t) order[t] = t;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all[5 * a] < all[5 * b]; });
    std::vector<long long> node_ids;
    node_ids.reserve(4 * n_tets);
    for (std::size_t t = 0; t < n_tets; ++t)
      for (int a = 1; a < 5; ++a) node_ids.push_back(all[5 * t + a]);
    std::sort(node_ids.begin(), node_ids.end());
    node_ids.erase(std::unique(node_ids.begin(), node_ids.end()), node_ids.end());
    GlobalTetMesh mesh;
    mesh.X.assign(node_ids.size(), Vec3::Zero());  // METIS reads only the node count from X
    mesh.node_body.assign(node_ids.size(), 0);
    mesh.tets.resize(n_tets);
    mesh.tet_body.assign(n_tets, 0);
    for (std::size_t i = 0; i < n_tets; ++i)
      for (int a = 0; a < 4; ++a)
        mesh.tets[i][a] = static_cast<int>(std::lower_bound(node_ids.begin(), node_ids.end(), all[5 * order[i] + 1 + a]) -
                                           node_ids.begin());
    const long long wanted = std::llround(static_cast<double>(node_ids.size()) / subdomain_nodes_);
    k = static_cast<int>(std::max(1LL, std::min<long long>(wanted, static_cast<long long>(n_tets))));
    const std::vector<int> tet_part = PlanTetPartition(mesh, k).tet_part;
    for (std::size_t i = 0; i < n_tets; ++i) all_parts[order[i]] = tet_part[i];
  }
  MPI_Bcast(&k, 1, MPI_INT, 0, comm_);
  for (int r = 0; r < size; ++r) {
    counts[r] /= 5;
    displacements[r] /= 5;
  }
  std::vector<int> part(counted.size(), 0);
  MPI_Scatterv(all_parts.data(), counts.data(), displacements.data(), MPI_INT, part.data(),
               static_cast<int>(part.size()), MPI_INT, 0, comm_);
  *parts = k;
  return part;
}

void SubdomainInitializer::BuildSubdomains(const ElementSets& elements, Vec layout) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::vector<int> counted;
  for (std::size_t e = 0; e < elements.tets.size(); ++e)
    if (elements.counted[e]) counted.push_back(static_cast<int>(e));
  std::string error;
  if (static_cast<std::size_t>(subdomains_per_rank_) > counted.size())
    error = "dot.subdomains_per_rank (or -dot_subdomains_per_rank) = " +
            std::to_string(subdomains_per_rank_) + ": rank " + std::to_string(rank) + " has " +
            std::to_string(counted.size()) + " tets; expected at most that many subdomains per rank";
  ThrowIfAnyRank(comm_, error);

  // Each counted tet's part: a mesh part (sized) or this rank's (per rank).
  std::vector<int> part(counted.size(), 0);
  int n_parts = 1;
  if (subdomains_per_rank_ == 0) {
    part = SizedParts(elements, counted, &n_parts);
  } else if (subdomains_per_rank_ > 1) {
    n_parts = subdomains_per_rank_;
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

  // Node sets, ascending in the global numbering, in ascending part; parts without a tet
  // here are dropped.
  std::vector<std::vector<PetscInt>> by_part(n_parts), tets_by_part(n_parts);
  for (std::size_t k = 0; k < counted.size(); ++k) {
    for (int n : elements.tets[counted[k]]) by_part[part[k]].push_back(elements.local_to_global[n]);
    tets_by_part[part[k]].push_back(elements.tet_original_id.empty() ? 0 : elements.tet_original_id[counted[k]]);
  }
  for (int p = 0; p < n_parts; ++p) {
    if (by_part[p].empty()) continue;
    std::vector<PetscInt>& s = by_part[p];
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    std::sort(tets_by_part[p].begin(), tets_by_part[p].end());
    nodes_.push_back(std::move(s));
    tet_ids_.push_back(std::move(tets_by_part[p]));
    parts_.push_back(subdomains_per_rank_ == 0 ? p : -1);
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
  OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, offsets_.back(), rhs_.data(), rhs_all_.out()));
  OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, offsets_.back(), solution_.data(), solution_all_.out()));
  std::vector<PetscInt> all_nodes;
  for (int j = 0; j < n_sub; ++j) {
    OwnedIS is;
    OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, static_cast<PetscInt>(nodes_[j].size()),
                                 nodes_[j].data(), PETSC_COPY_VALUES, is.out()));
    index_sets_.push_back(std::move(is));
    all_nodes.insert(all_nodes.end(), nodes_[j].begin(), nodes_[j].end());
    const PetscInt n = offsets_[j + 1] - offsets_[j];
    OwnedVec b, x;
    OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, n, rhs_.data() + offsets_[j], b.out()));
    OPTISTEP_PETSC(VecCreateSeqWithArray(PETSC_COMM_SELF, 3, n, solution_.data() + offsets_[j], x.out()));
    rhs_j_.push_back(std::move(b));
    solution_j_.push_back(std::move(x));
    ksps_.emplace_back(CreateCholeskyKsp(PETSC_COMM_SELF, "dot_sub_", MATSOLVERCHOLMOD));
  }

  // Global -> every subdomain's dofs, one after the other: forward INSERT gathers q|S_j,
  // reverse ADD sums the back-solves. PETSc's scatter adds the contributions to a node in
  // a fixed order for a given layout (local ones, then other ranks' in rank order), so the
  // merge is bitwise repeatable.
  {
    OwnedIS from;
    OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, static_cast<PetscInt>(all_nodes.size()), all_nodes.data(),
                                 PETSC_COPY_VALUES, from.out()));
    OPTISTEP_PETSC(VecScatterCreate(layout, from, rhs_all_, nullptr, to_subdomains_.out()));
  }

  // The cores' mask (overlap > 0): 1 at a subdomain's nodes before the overlap.
  if (overlap_ > 0) {
    OPTISTEP_PETSC(VecDuplicate(solution_all_, core_all_.out()));
    VecArray c(core_all_);
    for (int j = 0; j < n_sub; ++j)
      for (std::size_t i = 0; i < core_[j].size(); ++i)
        for (int k = 0; k < 3; ++k) c[offsets_[j] + 3 * static_cast<PetscInt>(i) + k] = core_[j][i] ? 1.0 : 0.0;
  }
  // Global: 1 / (the number of subdomains holding node i, over all ranks), counting the
  // concatenated `holds` (1 where a subdomain holds the node, per component).
  const auto reciprocal_count = [&](Vec holds, Vec out) {
    OPTISTEP_PETSC(VecSet(out, 0.0));
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, holds, out, ADD_VALUES, SCATTER_REVERSE));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, holds, out, ADD_VALUES, SCATTER_REVERSE));
    PetscInt n_local = 0;
    OPTISTEP_PETSC(VecGetLocalSize(out, &n_local));
    VecArray w(out);
    for (PetscInt i = 0; i < n_local; ++i) w[i] = w[i] > 0.0 ? 1.0 / w[i] : 0.0;
  };
  // m_i and w_i = 1 / m_i. With overlap and the average merge (restricted: only core
  // values are merged), m_i counts the subdomains holding node i in their core.
  OPTISTEP_PETSC(VecDuplicate(layout, weights_.out()));
  OPTISTEP_PETSC(VecSet(solution_all_, 1.0));
  reciprocal_count(core_all_ && merge_ == "average" ? core_all_ : solution_all_, weights_);
  if (merge_ == "symmetric") {
    OwnedVec sqrt_weights;
    OPTISTEP_PETSC(VecDuplicate(weights_, sqrt_weights.out()));
    OPTISTEP_PETSC(VecCopy(weights_, sqrt_weights));
    OPTISTEP_PETSC(VecSqrtAbs(sqrt_weights));
    OPTISTEP_PETSC(VecDuplicate(rhs_all_, sqrt_weights_all_.out()));
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, sqrt_weights, sqrt_weights_all_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, sqrt_weights, sqrt_weights_all_, INSERT_VALUES, SCATTER_FORWARD));
  }
  // The coarse space's partition of unity 1 / c_i over the cores, 0 off a core.
  if (coarse_space_ == "rigid") {
    OwnedVec unity;
    OPTISTEP_PETSC(VecDuplicate(layout, unity.out()));
    reciprocal_count(core_all_ ? core_all_ : solution_all_, unity);
    OPTISTEP_PETSC(VecDuplicate(rhs_all_, unity_all_.out()));
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, unity, unity_all_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, unity, unity_all_, INSERT_VALUES, SCATTER_FORWARD));
    if (core_all_) OPTISTEP_PETSC(VecPointwiseMult(unity_all_, unity_all_, core_all_));
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
    // Thrown only after every rank has tried, since a back-solve is rank-local.
    const std::string failed = SetUpCholesky(ksps_[j], "dot_sub_", &option_error);
    if (!failed.empty() && first_failed < 0) {
      first_failed = j;
      reason = failed;
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

void SubdomainInitializer::BuildCoarseSpace() {
  ScopedPhase timed(kCoarseFactorPhase);
  coarse_ready_ = false;
  // The point's and the mask's values at every subdomain's nodes.
  OwnedVec x_all, mask_all;
  OPTISTEP_PETSC(VecDuplicate(rhs_all_, x_all.out()));
  OPTISTEP_PETSC(VecDuplicate(rhs_all_, mask_all.out()));
  for (auto [from, to] : {std::pair<Vec, Vec>{lagged_point_, x_all}, {lagged_mask_, mask_all}}) {
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, from, to, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, from, to, INSERT_VALUES, SCATTER_FORWARD));
  }
  const PetscScalar *x = nullptr, *mask = nullptr, *unity = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x_all, &x));
  OPTISTEP_PETSC(VecGetArrayRead(mask_all, &mask));
  OPTISTEP_PETSC(VecGetArrayRead(unity_all_, &unity));
  // Per subdomain, the six modes over its core nodes (unity 0 elsewhere): translations e_a
  // and rotations e_a x (x - c) / r; a mode whose weighted, masked values vanish is left
  // out (relative to the subdomain's largest). A rotation's entries are kept where they
  // happen to be 0 (a node on the axis), so that the pattern depends on the mask alone and
  // the products' symbolic phase can be reused from one factorization to the next.
  struct Mode {
    std::vector<PetscInt> columns;  // global dofs
    std::vector<PetscScalar> values;
  };
  std::vector<Mode> modes;
  for (int j = 0; j < SubdomainCount(); ++j) {
    const PetscInt begin = offsets_[j] / 3, n = static_cast<PetscInt>(nodes_[j].size());
    const auto position = [&](PetscInt i) {
      return Vec3(x[3 * (begin + i)], x[3 * (begin + i) + 1], x[3 * (begin + i) + 2]);
    };
    Vec3 centroid = Vec3::Zero();
    double weight = 0.0;
    for (PetscInt i = 0; i < n; ++i)
      if (unity[3 * (begin + i)] > 0.0) {
        centroid += position(i);
        weight += 1.0;
      }
    if (weight == 0.0) continue;
    centroid /= weight;
    double radius2 = 0.0;
    for (PetscInt i = 0; i < n; ++i)
      if (unity[3 * (begin + i)] > 0.0) radius2 += (position(i) - centroid).squaredNorm();
    const double radius = radius2 > 0.0 ? std::sqrt(radius2 / weight) : 1.0;
    Mode mode[6];
    double norm2[6] = {0, 0, 0, 0, 0, 0};
    for (PetscInt i = 0; i < n; ++i) {
      const PetscInt dof = 3 * (begin + i);
      if (!(unity[dof] > 0.0)) continue;
      const Vec3 arm = (position(i) - centroid) / radius;
      for (int a = 0; a < 3; ++a) {
        const Vec3 rotation = Vec3::Unit(a).cross(arm);
        for (int d = 0; d < 3; ++d) {
          const double w = unity[dof + d] * mask[dof + d];
          if (w == 0.0) continue;
          const PetscInt column = 3 * nodes_[j][i] + d;
          Mode& m = mode[d == a ? a : 3 + a];
          const double value = d == a ? w : w * rotation[d];
          m.columns.push_back(column);
          m.values.push_back(value);
          norm2[d == a ? a : 3 + a] += value * value;
        }
      }
    }
    const double largest = *std::max_element(norm2, norm2 + 6);
    for (int k = 0; k < 6; ++k)
      if (largest > 0.0 && norm2[k] > 1e-12 * largest) modes.push_back(std::move(mode[k]));
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(x_all, &x));
  OPTISTEP_PETSC(VecRestoreArrayRead(mask_all, &mask));
  OPTISTEP_PETSC(VecRestoreArrayRead(unity_all_, &unity));

  // The same modes with the same entries and H of the same pattern as the last time: the
  // products are refilled (MAT_REUSE_MATRIX), their symbolic phase kept.
  std::vector<PetscInt> pattern;
  for (const Mode& m : modes) {
    pattern.push_back(static_cast<PetscInt>(m.columns.size()));
    pattern.insert(pattern.end(), m.columns.begin(), m.columns.end());
  }
  PetscObjectState h_pattern = 0;
  OPTISTEP_PETSC(MatGetNonzeroState(H_, &h_pattern));
  PetscBool aij = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompareAny(reinterpret_cast<PetscObject>(H_.get()), &aij, MATMPIAIJ, MATSEQAIJ, ""));
  int same = Zt_ && aij && pattern == coarse_pattern_ && h_pattern == coarse_h_pattern_;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm_);
  const MatReuse reuse = same ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX;
  if (!same) {
    DestroyCoarseSpace();
    coarse_pattern_ = std::move(pattern);
    coarse_h_pattern_ = h_pattern;
    // Z^T: a row per mode, on the rank of its subdomain (rows are set only locally, each
    // entry once); Z = (Z^T)^T moves entries without summing them.
    PetscInt n_local = 0, first_dof = 0, end_dof = 0;
    OPTISTEP_PETSC(VecGetLocalSize(lagged_point_, &n_local));
    OPTISTEP_PETSC(VecGetOwnershipRange(lagged_point_, &first_dof, &end_dof));
    const PetscInt n_modes = static_cast<PetscInt>(modes.size());
    std::vector<PetscInt> d_nnz(n_modes, 0), o_nnz(n_modes, 0);
    for (PetscInt k = 0; k < n_modes; ++k)
      for (PetscInt c : modes[k].columns) (c >= first_dof && c < end_dof ? d_nnz[k] : o_nnz[k])++;
    OPTISTEP_PETSC(MatCreateAIJ(comm_, n_modes, n_local, PETSC_DETERMINE, PETSC_DETERMINE, 0, d_nnz.data(), 0,
                                o_nnz.data(), Zt_.out()));
  }
  PetscInt first_mode = 0;
  OPTISTEP_PETSC(MatGetOwnershipRange(Zt_, &first_mode, nullptr));
  for (std::size_t k = 0; k < modes.size(); ++k) {
    const PetscInt row = first_mode + static_cast<PetscInt>(k);
    OPTISTEP_PETSC(MatSetValues(Zt_, 1, &row, static_cast<PetscInt>(modes[k].columns.size()),
                                modes[k].columns.data(), modes[k].values.data(), INSERT_VALUES));
  }
  OPTISTEP_PETSC(MatAssemblyBegin(Zt_, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(Zt_, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatTranspose(Zt_, reuse, Z_.address()));

  // H Z and A0 = Z^T (H Z): both products row by row on the rows' owners (PETSc's
  // MatPtAP would add other ranks' contributions in arrival order); (H Z)^T stored, for the
  // applications; then a copy of all of A0 on every rank.
  Mat H = H_;
  OwnedMat H_aij;
  if (!aij) {
    OPTISTEP_PETSC(MatConvert(H_, MATAIJ, MAT_INITIAL_MATRIX, H_aij.out()));
    H = H_aij;
  }
  OPTISTEP_PETSC(MatMatMult(H, Z_, reuse, PETSC_DEFAULT, HZ_.address()));
  H_aij.reset();
  OPTISTEP_PETSC(MatTranspose(HZ_, reuse, HZt_.address()));
  OPTISTEP_PETSC(MatMatMult(Zt_, HZ_, reuse, PETSC_DEFAULT, A0_distributed_.address()));
  PetscInt n_coarse = 0;
  OPTISTEP_PETSC(MatGetSize(A0_distributed_, &n_coarse, nullptr));
  OwnedIS all;
  OPTISTEP_PETSC(ISCreateStride(PETSC_COMM_SELF, n_coarse, 0, 1, all.out()));
  Mat* copy = nullptr;
  OPTISTEP_PETSC(MatCreateSubMatrices(A0_distributed_, 1, all.address(), all.address(), MAT_INITIAL_MATRIX, &copy));
  all.reset();
  // (A0 + A0^T) / 2: the products' round-off leaves A0 symmetric only to it.
  OwnedMat transposed;
  A0_.reset();
  OPTISTEP_PETSC(MatTranspose(copy[0], MAT_INITIAL_MATRIX, transposed.out()));
  OPTISTEP_PETSC(MatDuplicate(copy[0], MAT_COPY_VALUES, A0_.out()));
  OPTISTEP_PETSC(MatDestroySubMatrices(1, &copy));
  OPTISTEP_PETSC(MatAXPY(A0_, 1.0, transposed, DIFFERENT_NONZERO_PATTERN));
  OPTISTEP_PETSC(MatScale(A0_, 0.5));
  transposed.reset();
  OPTISTEP_PETSC(MatSetOption(A0_, MAT_SYMMETRIC, PETSC_TRUE));

  if (!coarse_ksp_) coarse_ksp_.reset(CreateCholeskyKsp(PETSC_COMM_SELF, "dot_coarse_", MATSOLVERCHOLMOD));
  // A new matrix, whose size may differ from the last one's: a new symbolic factorization.
  OPTISTEP_PETSC(KSPReset(coarse_ksp_));
  OPTISTEP_PETSC(KSPSetOperators(coarse_ksp_, A0_, A0_));
  std::string option_error;
  const std::string failed = n_coarse > 0 ? SetUpCholesky(coarse_ksp_, "dot_coarse_", &option_error) : "no modes";
  ThrowIfAnyRank(comm_, option_error);
  // A0 and its factorization are the same on every rank: so is the outcome.
  if (!failed.empty()) {
    PetscPrintf(comm_,
                "optistep: warning: DOT: the coarse matrix Z^T H Z (%ld rigid-body modes) could not be "
                "factored: %s; this factorization goes on without the coarse space\n",
                static_cast<long>(n_coarse), failed.c_str());
    DestroyCoarseSpace();
    return;
  }
  if (!coarse_) {
    OPTISTEP_PETSC(MatCreateVecs(Zt_, nullptr, coarse_.out()));
    OPTISTEP_PETSC(VecDuplicate(coarse_, coarse_y_.out()));
    OPTISTEP_PETSC(VecDuplicate(coarse_, coarse_t_.out()));
    OPTISTEP_PETSC(VecScatterCreateToAll(coarse_, coarse_to_all_.out(), coarse_all_.out()));
    OPTISTEP_PETSC(VecDuplicate(coarse_all_, coarse_solution_all_.out()));
  }
  if (!v_) {
    OPTISTEP_PETSC(VecDuplicate(lagged_point_, v_.out()));
    OPTISTEP_PETSC(VecDuplicate(lagged_point_, w_.out()));
  }
  coarse_ready_ = true;
}

void SubdomainInitializer::Factorize(IncrementalPotential& potential, Vec u) {
  H_.reset();
  H_.reset(potential.CreateHessian());
  potential.Hessian(u, H_);
  if (!lagged_point_) {
    OPTISTEP_PETSC(VecDuplicate(u, lagged_point_.out()));
    OPTISTEP_PETSC(VecDuplicate(u, lagged_mask_.out()));
  }
  OPTISTEP_PETSC(VecCopy(u, lagged_point_));
  OPTISTEP_PETSC(VecSet(lagged_mask_, 1.0));
  potential.Project(lagged_mask_);
  FactorLagged(potential);
}

void SubdomainInitializer::FactorLagged(IncrementalPotential& potential) {
  {
    ScopedPhase timed(kSubdomainFactorPhase);
    // The principal submatrices H[S_j, S_j], rows of other ranks' nodes included. Those of
    // another nonzero pattern cannot be reused (self-contact adds blocks that come and go).
    PetscObjectState pattern = 0;
    OPTISTEP_PETSC(MatGetNonzeroState(H_, &pattern));
    if (submatrices_ && pattern != pattern_state_)
      OPTISTEP_PETSC(MatDestroySubMatrices(SubdomainCount(), &submatrices_));
    pattern_state_ = pattern;
    const std::vector<IS> sets(index_sets_.begin(), index_sets_.end());  // PETSc takes an IS array
    OPTISTEP_PETSC(MatCreateSubMatrices(H_, SubdomainCount(), sets.data(), sets.data(),
                                        submatrices_ ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX,
                                        &submatrices_));
    fell_back_ = !Factor();
  }
  if (fell_back_) {
    DestroyCoarseSpace();
    fallback_->SetUp(potential, lagged_point_);
    return;
  }
  if (coarse_space_ == "rigid") BuildCoarseSpace();
  if (krylov_) OPTISTEP_PETSC(KSPSetOperators(krylov_, H_, H_));
}

void SubdomainInitializer::RestoreLagged(IncrementalPotential& potential, Vec layout) {
  const std::unique_ptr<Restored> restored = std::move(restored_);
  PetscInt first = 0, end = 0;
  OPTISTEP_PETSC(VecGetOwnershipRange(layout, &first, &end));
  // A checkpoint of another layout (same rank count, but another mesh) is not this one's.
  int fits = restored->first_row == first && static_cast<PetscInt>(restored->row_lengths.size()) == end - first;
  MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, comm_);
  if (!fits) return;
  H_.reset();
  H_.reset(potential.CreateHessian());
  OPTISTEP_PETSC(MatSetOption(H_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_FALSE));
  std::size_t at = 0;
  for (PetscInt r = first; r < end; ++r) {
    const PetscInt length = restored->row_lengths[r - first];
    OPTISTEP_PETSC(MatSetValues(H_, 1, &r, length, restored->columns.data() + at, restored->values.data() + at,
                                INSERT_VALUES));
    at += static_cast<std::size_t>(length);
  }
  OPTISTEP_PETSC(MatAssemblyBegin(H_, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(H_, MAT_FINAL_ASSEMBLY));
  if (!lagged_point_) {
    OPTISTEP_PETSC(VecDuplicate(layout, lagged_point_.out()));
    OPTISTEP_PETSC(VecDuplicate(layout, lagged_mask_.out()));
  }
  for (auto [to, from] : {std::pair<Vec, const std::vector<PetscScalar>*>{lagged_point_, &restored->point},
                          {lagged_mask_, &restored->mask}}) {
    VecArray a(to);
    std::copy(from->begin(), from->end(), a.data());
  }
  FactorLagged(potential);
  steps_served_ = restored->steps_served;
  factored_dt_ = restored->factored_dt;
  applications_ = restored->applications;
  first_applications_ = restored->first_applications;
  last_applications_ = restored->last_applications;
}

void SubdomainInitializer::SetUp(IncrementalPotential& potential, Vec u0) {
  const ElementSets* elements = potential.Elements();
  if (!elements)
    throw InputError("the subdomains initializer (DOT) needs a tet mesh: only FEM scenes "
                     "(discretization: fem) take solver.method dot");
  if (!built_) BuildSubdomains(*elements, u0);
  if (restored_) RestoreLagged(potential, u0);
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
  Factorize(potential, u0);
}

void SubdomainInitializer::Refresh(IncrementalPotential& potential, Vec u) {
  steps_served_ = 1;
  factored_dt_ = potential.StepSize();
  Factorize(potential, u);
}

void SubdomainInitializer::ApplyOneLevel(Vec q, Vec r) {
  const bool symmetric = merge_ == "symmetric";
  {
    ScopedPhase timed(kSubdomainMergePhase);
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, q, rhs_all_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, q, rhs_all_, INSERT_VALUES, SCATTER_FORWARD));
    if (symmetric) OPTISTEP_PETSC(VecPointwiseMult(rhs_all_, rhs_all_, sqrt_weights_all_));
  }
  // A subdomain solve that raises (a factorization that fails at a lazy set-up, say) is
  // known to its own rank only: the merge's scatters still run on every rank, then all
  // ranks agree on the message and fail the solve together.
  std::string error;
  {
    ScopedPhase timed(kSubdomainSolvePhase);
    for (int j = 0; j < SubdomainCount() && error.empty(); ++j)
      error = CallInStep(PETSC_COMM_SELF, [&] { return KSPSolve(ksps_[j], rhs_j_[j], solution_j_[j]); });
  }
  {
    ScopedPhase timed(kSubdomainMergePhase);
    if (symmetric) OPTISTEP_PETSC(VecPointwiseMult(solution_all_, solution_all_, sqrt_weights_all_));
    if (core_all_ && !symmetric) OPTISTEP_PETSC(VecPointwiseMult(solution_all_, solution_all_, core_all_));
    OPTISTEP_PETSC(VecSet(r, 0.0));
    OPTISTEP_PETSC(VecScatterBegin(to_subdomains_, solution_all_, r, ADD_VALUES, SCATTER_REVERSE));
    OPTISTEP_PETSC(VecScatterEnd(to_subdomains_, solution_all_, r, ADD_VALUES, SCATTER_REVERSE));
    if (!symmetric) OPTISTEP_PETSC(VecPointwiseMult(r, r, weights_));
  }
  error = MessageOfAnyRank(comm_, error);
  if (!error.empty()) throw SolveError("a subdomain solve: " + error);
}

void SubdomainInitializer::CoarseSolve(Mat rows, Vec q, Vec solution) {
  OPTISTEP_PETSC(MatMult(rows, q, coarse_));
  OPTISTEP_PETSC(VecScatterBegin(coarse_to_all_, coarse_, coarse_all_, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(coarse_to_all_, coarse_, coarse_all_, INSERT_VALUES, SCATTER_FORWARD));
  // Every rank solves the same coarse system, so a failure is every rank's; agreed anyway.
  const std::string error = MessageOfAnyRank(
      comm_, CallInStep(PETSC_COMM_SELF, [&] { return KSPSolve(coarse_ksp_, coarse_all_, coarse_solution_all_); }));
  if (!error.empty()) throw SolveError("the coarse solve: " + error);
  // Every rank solved the same system: take its own rows of the solution.
  PetscInt first = 0, end = 0;
  OPTISTEP_PETSC(VecGetOwnershipRange(solution, &first, &end));
  const VecArrayRead all(coarse_solution_all_);
  VecArray mine(solution);
  std::copy(all.data() + first, all.data() + end, mine.data());
}

void SubdomainInitializer::ApplyPreconditioner(Vec q, Vec r) {
  if (!coarse_ready_) {
    ApplyOneLevel(q, r);
    return;
  }
  // H0^-1 q = Q q + (I - Q H) M1 (I - H Q) q with Q = Z A0^-1 Z^T and H Z stored (B):
  // y = A0^-1 Z^T q, w = M1 (q - B y), t = A0^-1 B^T w, H0^-1 q = w + Z (y - t). With
  // B = H Z this is the balanced form; whatever B, it is Q + P^T M1 P with P = I - B A0^-1 Z^T,
  // symmetric when M1 is.
  {
    ScopedPhase timed(kCoarseSolvePhase);
    CoarseSolve(Zt_, q, coarse_y_);
    OPTISTEP_PETSC(MatMult(HZ_, coarse_y_, v_));
    OPTISTEP_PETSC(VecAYPX(v_, -1.0, q));
  }
  ApplyOneLevel(v_, w_);
  {
    ScopedPhase timed(kCoarseSolvePhase);
    CoarseSolve(HZt_, w_, coarse_t_);
    OPTISTEP_PETSC(VecAYPX(coarse_t_, -1.0, coarse_y_));
    OPTISTEP_PETSC(MatMult(Z_, coarse_t_, r));
    OPTISTEP_PETSC(VecAXPY(r, 1.0, w_));
  }
}

PetscErrorCode SubdomainInitializer::ShellApply(PC pc, Vec q, Vec r) {
  void* context = nullptr;
  PetscCall(PCShellGetContext(pc, &context));
  // A failed solve inside the Krylov variant's preconditioner becomes a PETSc error of its
  // KSPSolve, which SolveCountingIterations turns back into a SolveError.
  try {
    static_cast<SubdomainInitializer*>(context)->ApplyPreconditioner(q, r);
  } catch (const SolveError& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_NOT_CONVERGED, "%s", e.what());
  }
  return 0;
}

int SubdomainInitializer::Apply(Vec q, Vec r) {
  ++applications_;
  if (fell_back_) return fallback_->Apply(q, r);
  if (!krylov_) {
    ApplyPreconditioner(q, r);
    return 0;
  }
  return SolveCountingIterations(krylov_, q, r);
}

void SubdomainInitializer::SaveState(CheckpointWriter& out) {
  // Only factors that will serve the next step are state: otherwise it refactors anyway.
  const bool lagged = H_ && !fell_back_ && steps_served_ < refactor_every_;
  out.WriteAttribute("dot_lagged", int64_t{lagged ? 1 : 0});
  if (!lagged) return;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  PetscInt first = 0, end = 0, n_rows = 0;
  OPTISTEP_PETSC(MatGetOwnershipRange(H_, &first, &end));
  OPTISTEP_PETSC(MatGetSize(H_, &n_rows, nullptr));
  std::vector<int64_t> lengths, columns;
  std::vector<double> values;
  for (PetscInt r = first; r < end; ++r) {
    PetscInt length = 0;
    const PetscInt* c = nullptr;
    const PetscScalar* v = nullptr;
    OPTISTEP_PETSC(MatGetRow(H_, r, &length, &c, &v));
    lengths.push_back(length);
    columns.insert(columns.end(), c, c + length);
    values.insert(values.end(), v, v + length);
    OPTISTEP_PETSC(MatRestoreRow(H_, r, &length, &c, &v));
  }
  int64_t nnz = static_cast<int64_t>(values.size()), nnz_first = 0, nnz_total = 0;
  MPI_Exscan(&nnz, &nnz_first, 1, MPI_INT64_T, MPI_SUM, comm_);
  if (rank == 0) nnz_first = 0;
  MPI_Allreduce(&nnz, &nnz_total, 1, MPI_INT64_T, MPI_SUM, comm_);
  // Rank r's row range and first entry: row r of /dot/ranges.
  std::vector<int64_t> range = {first, end - first, nnz_first};
  out.Write("/dot/ranges", DistributedArray<int64_t>{size, rank, 1, 3, range.data()});
  const int64_t n_local = end - first;
  out.Write("/dot/lagged_hessian_row_lengths", DistributedArray<int64_t>{n_rows, first, n_local, 1, lengths.data()});
  out.Write("/dot/lagged_hessian_columns", DistributedArray<int64_t>{nnz_total, nnz_first, nnz, 1, columns.data()});
  out.Write("/dot/lagged_hessian_values", DistributedArray<double>{nnz_total, nnz_first, nnz, 1, values.data()});
  for (auto [name, vec] : {std::pair<const char*, Vec>{"/dot/lagged_point", lagged_point_},
                           {"/dot/lagged_mask", lagged_mask_}}) {
    std::vector<double> copy;
    {
      const VecArrayRead a(vec);
      copy.assign(a.data(), a.data() + n_local);
    }
    out.Write(name, DistributedArray<double>{n_rows, first, n_local, 1, copy.data()});
  }
  out.WriteAttribute("dot_steps_served", int64_t{steps_served_});
  out.WriteAttribute("dot_factored_dt_bits", Bits(factored_dt_));
  out.WriteAttribute("dot_applications", int64_t{applications_});
  out.WriteAttribute("dot_first_applications", int64_t{first_applications_});
  out.WriteAttribute("dot_last_applications", int64_t{last_applications_});
}

void SubdomainInitializer::LoadState(const CheckpointReader& in, bool same_ranks) {
  restored_.reset();
  int64_t lagged = 0;
  try {
    lagged = in.Attribute<int64_t>("dot_lagged");
  } catch (const CheckpointDamaged&) {
    // Written by a run without DOT (every rank alike): nothing to restore.
    lagged = 0;
  }
  if (!lagged || !same_ranks) return;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  const std::vector<int64_t> ranges = in.Read<int64_t>("/dot/ranges", RowRange{0, size});
  auto restored = std::make_unique<Restored>();
  const int64_t first = ranges[3 * rank], n_local = ranges[3 * rank + 1], nnz_first = ranges[3 * rank + 2];
  const std::vector<int64_t> lengths = in.Read<int64_t>("/dot/lagged_hessian_row_lengths", RowRange{first, n_local});
  int64_t nnz = 0;
  for (int64_t l : lengths) nnz += l;
  const std::vector<int64_t> columns = in.Read<int64_t>("/dot/lagged_hessian_columns", RowRange{nnz_first, nnz});
  restored->values = in.Read<double>("/dot/lagged_hessian_values", RowRange{nnz_first, nnz});
  restored->point = in.Read<double>("/dot/lagged_point", RowRange{first, n_local});
  restored->mask = in.Read<double>("/dot/lagged_mask", RowRange{first, n_local});
  restored->first_row = static_cast<PetscInt>(first);
  restored->row_lengths.assign(lengths.begin(), lengths.end());
  restored->columns.assign(columns.begin(), columns.end());
  restored->steps_served = static_cast<int>(in.Attribute<int64_t>("dot_steps_served"));
  restored->factored_dt = FromBits(in.Attribute<int64_t>("dot_factored_dt_bits"));
  restored->applications = static_cast<int>(in.Attribute<int64_t>("dot_applications"));
  restored->first_applications = static_cast<int>(in.Attribute<int64_t>("dot_first_applications"));
  restored->last_applications = static_cast<int>(in.Attribute<int64_t>("dot_last_applications"));
  restored_ = std::move(restored);
}

void SubdomainInitializer::View(PetscViewer viewer) const {
  std::string subdomains = subdomains_per_rank_ > 0
                               ? std::to_string(subdomains_per_rank_) + " subdomain(s) per rank"
                               : "subdomains of about " + std::to_string(subdomain_nodes_) + " nodes";
  OPTISTEP_PETSC(PetscViewerASCIIPrintf(
      viewer,
      "initializer subdomains (DOT, Li et al. 2019): back-solves of H[S,S] of the Hessian at the "
      "step's start on %s, overlap %d, merge %s, coarse space %s, Krylov iterations %d, refactored "
      "every %d step(s) (growth trigger %g), options prefix -dot_ (back-solves -dot_sub_, coarse "
      "-dot_coarse_)\n",
      subdomains.c_str(), overlap_, merge_.c_str(), coarse_space_.c_str(), krylov_its_, refactor_every_,
      refactor_growth_));
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
