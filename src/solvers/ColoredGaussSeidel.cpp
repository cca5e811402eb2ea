#include "solvers/ColoredGaussSeidel.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <set>

#include "core/Error.hpp"

namespace optistep {
namespace {

ColoredGaussSeidel* Context(PC pc) {
  void* context = nullptr;
  PCShellGetContext(pc, &context);
  return static_cast<ColoredGaussSeidel*>(context);
}

/// Runs f, turning an exception into a PETSc error (these are PETSc callbacks).
template <class F>
PetscErrorCode Guarded(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

PetscErrorCode ShellSetUp(PC pc) {
  return Guarded([&] { Context(pc)->SetUp(); });
}

PetscErrorCode ShellApply(PC pc, Vec b, Vec x) {
  return Guarded([&] { Context(pc)->Sweep(b, x, true, 1); });
}

PetscErrorCode ShellRichardson(PC pc, Vec b, Vec x, Vec, PetscReal, PetscReal, PetscReal, PetscInt its,
                               PetscBool guess_zero, PetscInt* done, PCRichardsonConvergedReason* reason) {
  *done = its;
  *reason = PCRICHARDSON_CONVERGED_ITS;
  return Guarded([&] { Context(pc)->Sweep(b, x, guess_zero, static_cast<int>(its)); });
}

PetscErrorCode ShellView(PC pc, PetscViewer viewer) {
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "colored block Gauss-Seidel (HOT Alg. 2): 8 colours by block parity, "
                                   "symmetric sweep, %s\n",
                                   Context(pc)->RankCountIndependent() ? "the same on any rank count"
                                                                       : "NOT rank-count independent"));
  return 0;
}

}  // namespace

ColoredGaussSeidel::ColoredGaussSeidel(const GridOperator& op) : op_(op) {
  const GridInfo& level = op_.level();
  const PetscInt n = op_.rows();
  std::vector<std::pair<std::uint64_t, PetscInt>> order(n);
  for (PetscInt r = 0; r < n; ++r) order[r] = {BlockMajorKey(level.owned_nodes[r]), r};
  std::sort(order.begin(), order.end());
  for (const auto& [key, r] : order) rows_[ColorOf(level.owned_nodes[r])].push_back(r);

  // Per colour, a scatter of the ghost nodes of that colour.
  const std::vector<GridCoord>& ghosts = op_.ghost_nodes();
  ghost_.reset(op_.CreateGhostVector());
  OwnedVec x(op_.CreateVector());
  for (int c = 0; c < 8; ++c) {
    std::vector<PetscInt> from, to;
    for (std::size_t k = 0; k < ghosts.size(); ++k)
      if (ColorOf(ghosts[k]) == c) {
        from.push_back(op_.ghost_ids()[k]);
        to.push_back(static_cast<PetscInt>(k));
      }
    OwnedIS is_from, is_to;
    OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, static_cast<PetscInt>(from.size()), from.data(),
                                 PETSC_COPY_VALUES, is_from.out()));
    OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, static_cast<PetscInt>(to.size()), to.data(),
                                 PETSC_COPY_VALUES, is_to.out()));
    OPTISTEP_PETSC(VecScatterCreate(x, is_from, ghost_, is_to, scatters_[c].out()));
  }
  x.reset();

  // Rank-count independent when no ghost lies in a block of this rank and the reach keeps
  // the blocks of one colour apart.
  std::set<GridCoord> owned_blocks;
  for (const GridCoord& node : level.owned_nodes) owned_blocks.insert(BlockOf(node));
  int independent = op_.reach() <= kGridBlockWidth;
  for (const GridCoord& g : ghosts)
    if (owned_blocks.count(BlockOf(g))) independent = 0;
  MPI_Allreduce(MPI_IN_PLACE, &independent, 1, MPI_INT, MPI_MIN,
                PetscObjectComm(reinterpret_cast<PetscObject>(op_.matrix())));
  independent_ = independent != 0;
}

ColoredGaussSeidel::~ColoredGaussSeidel() = default;

void ColoredGaussSeidel::Attach(PC pc) {
  OPTISTEP_PETSC(PCShellSetContext(pc, this));
  OPTISTEP_PETSC(PCShellSetName(pc, "colored block Gauss-Seidel"));
  OPTISTEP_PETSC(PCShellSetSetUp(pc, ShellSetUp));
  OPTISTEP_PETSC(PCShellSetApply(pc, ShellApply));
  OPTISTEP_PETSC(PCShellSetApplyRichardson(pc, ShellRichardson));
  OPTISTEP_PETSC(PCShellSetView(pc, ShellView));
}

void ColoredGaussSeidel::SetUp() {
  GridOperator::Blocks A = op_.Get();
  inverse_diagonal_.assign(9 * static_cast<std::size_t>(A.n), 0.0);
  for (PetscInt r = 0; r < A.n; ++r) {
    PetscInt e = A.d_i[r];
    while (e < A.d_i[r + 1] && A.d_j[e] != r) ++e;
    if (e == A.d_i[r + 1]) throw std::logic_error("ColoredGaussSeidel: a row without its diagonal block");
    Eigen::Map<Eigen::Matrix3d> inverse(&inverse_diagonal_[9 * static_cast<std::size_t>(r)]);
    inverse = Eigen::Map<const Eigen::Matrix3d>(A.d_a + 9 * e).inverse();
  }
  op_.Restore(&A);
}

void ColoredGaussSeidel::Relax(int color, bool forward, const GridOperator::Blocks& A, const PetscScalar* b,
                               PetscScalar* x, const PetscScalar* ghost) const {
  const std::vector<PetscInt>& rows = rows_[color];
  const std::size_t n = rows.size();
  for (std::size_t k = 0; k < n; ++k) {
    const PetscInt r = rows[forward ? k : n - 1 - k];
    double t0 = b[3 * r], t1 = b[3 * r + 1], t2 = b[3 * r + 2];
    for (PetscInt e = A.d_i[r]; e < A.d_i[r + 1]; ++e) {
      const PetscInt j = A.d_j[e];
      if (j == r) continue;
      const double* a = A.d_a + 9 * e;
      const double* xj = x + 3 * j;
      t0 -= a[0] * xj[0] + a[3] * xj[1] + a[6] * xj[2];
      t1 -= a[1] * xj[0] + a[4] * xj[1] + a[7] * xj[2];
      t2 -= a[2] * xj[0] + a[5] * xj[1] + a[8] * xj[2];
    }
    if (A.o_i)
      for (PetscInt e = A.o_i[r]; e < A.o_i[r + 1]; ++e) {
        const double* a = A.o_a + 9 * e;
        const double* xj = ghost + 3 * A.o_j[e];
        t0 -= a[0] * xj[0] + a[3] * xj[1] + a[6] * xj[2];
        t1 -= a[1] * xj[0] + a[4] * xj[1] + a[7] * xj[2];
        t2 -= a[2] * xj[0] + a[5] * xj[1] + a[8] * xj[2];
      }
    const double* D = &inverse_diagonal_[9 * static_cast<std::size_t>(r)];
    x[3 * r] = D[0] * t0 + D[3] * t1 + D[6] * t2;
    x[3 * r + 1] = D[1] * t0 + D[4] * t1 + D[7] * t2;
    x[3 * r + 2] = D[2] * t0 + D[5] * t1 + D[8] * t2;
  }
}

void ColoredGaussSeidel::Sweep(Vec b, Vec x, bool zero_guess, int sweeps) {
  if (zero_guess) {
    OPTISTEP_PETSC(VecSet(x, 0.0));
    OPTISTEP_PETSC(VecSet(ghost_, 0.0));
  } else {
    op_.UpdateGhosts(x, ghost_);
  }
  GridOperator::Blocks A = op_.Get();
  const VecArrayRead ba(b);
  for (int s = 0; s < sweeps; ++s)
    for (int pass = 0; pass < 2; ++pass) {
      const bool forward = pass == 0;
      for (int k = 0; k < 8; ++k) {
        const int color = forward ? k : 7 - k;
        {
          VecArray xa(x);
          const VecArrayRead ga(ghost_);
          Relax(color, forward, A, ba.data(), xa.data(), ga.data());
        }
        if (s + 1 == sweeps && !forward && k == 7) continue;  // no colour follows
        OPTISTEP_PETSC(VecScatterBegin(scatters_[color], x, ghost_, INSERT_VALUES, SCATTER_FORWARD));
        OPTISTEP_PETSC(VecScatterEnd(scatters_[color], x, ghost_, INSERT_VALUES, SCATTER_FORWARD));
      }
    }
  op_.Restore(&A);
}

}  // namespace optistep
