#include "solvers/GridOperator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/Error.hpp"

namespace optistep {

GridOperator::GridOperator(const GridInfo& level, Mat A) : level_(level), A_(OwnedMat::Shared(A)) {
  PetscBool seq = PETSC_FALSE, mpi = PETSC_FALSE;
  OPTISTEP_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(A_.get()), MATSEQBAIJ, &seq));
  OPTISTEP_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(A_.get()), MATMPIBAIJ, &mpi));
  PetscInt bs = 0;
  OPTISTEP_PETSC(MatGetBlockSize(A_, &bs));
  if (!(seq || mpi) || bs != 3) throw std::logic_error("GridOperator: expected a BAIJ matrix of block size 3");
  Ad_ = A_;
  if (mpi) {
    const PetscInt* garray = nullptr;
    OPTISTEP_PETSC(MatMPIBAIJGetSeqBAIJ(A_, &Ad_, &Ao_, &garray));
    PetscInt ghost_columns = 0;
    OPTISTEP_PETSC(MatGetSize(Ao_, nullptr, &ghost_columns));
    ghost_ids_.assign(garray, garray + ghost_columns / 3);
  }
  const PetscInt n_ghost = static_cast<PetscInt>(ghost_ids_.size());
  {
    OwnedVec x(CreateVector()), ghost(CreateGhostVector());
    OwnedIS from, to;
    OPTISTEP_PETSC(ISCreateBlock(PETSC_COMM_SELF, 3, n_ghost, ghost_ids_.data(), PETSC_COPY_VALUES, from.out()));
    OPTISTEP_PETSC(ISCreateStride(PETSC_COMM_SELF, 3 * n_ghost, 0, 1, to.out()));
    OPTISTEP_PETSC(VecScatterCreate(x, from, ghost, to, scatter_.out()));
    // The ghosts' coordinates travel as the values of a vector.
    {
      VecArray xa(x);
      for (std::size_t k = 0; k < level_.owned_nodes.size(); ++k)
        for (int d = 0; d < 3; ++d) xa[3 * k + d] = level_.owned_nodes[k][d];
    }
    UpdateGhosts(x, ghost);
    VecArrayRead ga(ghost);
    ghost_nodes_.resize(n_ghost);
    for (PetscInt k = 0; k < n_ghost; ++k)
      for (int d = 0; d < 3; ++d) ghost_nodes_[k][d] = static_cast<int>(std::lround(ga[3 * k + d]));
  }
  Blocks b = Get();
  int reach = 0;
  const auto far = [](const GridCoord& p, const GridCoord& q) {
    return std::max({std::abs(p[0] - q[0]), std::abs(p[1] - q[1]), std::abs(p[2] - q[2])});
  };
  for (PetscInt r = 0; r < b.n; ++r) {
    const GridCoord& row = level_.owned_nodes[r];
    for (PetscInt e = b.d_i[r]; e < b.d_i[r + 1]; ++e) reach = std::max(reach, far(row, level_.owned_nodes[b.d_j[e]]));
    if (b.o_i)
      for (PetscInt e = b.o_i[r]; e < b.o_i[r + 1]; ++e) reach = std::max(reach, far(row, ghost_nodes_[b.o_j[e]]));
  }
  Restore(&b);
  MPI_Allreduce(&reach, &reach_, 1, MPI_INT, MPI_MAX, PetscObjectComm(reinterpret_cast<PetscObject>(A_.get())));
}

GridOperator::~GridOperator() = default;

GridOperator::Blocks GridOperator::Get() const {
  Blocks b;
  PetscBool done = PETSC_FALSE;
  PetscInt n = 0;
  OPTISTEP_PETSC(MatGetRowIJ(Ad_, 0, PETSC_FALSE, PETSC_TRUE, &n, &b.d_i, &b.d_j, &done));
  if (!done) throw std::logic_error("GridOperator: no block rows of the diagonal part");
  OPTISTEP_PETSC(MatSeqBAIJGetArray(Ad_, &b.d_a));
  b.n = n;
  if (Ao_) {
    PetscInt m = 0;
    OPTISTEP_PETSC(MatGetRowIJ(Ao_, 0, PETSC_FALSE, PETSC_TRUE, &m, &b.o_i, &b.o_j, &done));
    if (!done || m != n) throw std::logic_error("GridOperator: no block rows of the off-diagonal part");
    OPTISTEP_PETSC(MatSeqBAIJGetArray(Ao_, &b.o_a));
  }
  return b;
}

void GridOperator::Restore(Blocks* b) const {
  PetscBool done = PETSC_FALSE;
  PetscInt n = b->n;
  OPTISTEP_PETSC(MatSeqBAIJRestoreArray(Ad_, &b->d_a));
  OPTISTEP_PETSC(MatRestoreRowIJ(Ad_, 0, PETSC_FALSE, PETSC_TRUE, &n, &b->d_i, &b->d_j, &done));
  if (Ao_) {
    OPTISTEP_PETSC(MatSeqBAIJRestoreArray(Ao_, &b->o_a));
    OPTISTEP_PETSC(MatRestoreRowIJ(Ao_, 0, PETSC_FALSE, PETSC_TRUE, &n, &b->o_i, &b->o_j, &done));
  }
  *b = Blocks{};
}

void GridOperator::UpdateGhosts(Vec x, Vec ghost) const {
  OPTISTEP_PETSC(VecScatterBegin(scatter_, x, ghost, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(scatter_, x, ghost, INSERT_VALUES, SCATTER_FORWARD));
}

Vec GridOperator::CreateGhostVector() const {
  Vec v = nullptr;
  OPTISTEP_PETSC(VecCreateSeq(PETSC_COMM_SELF, 3 * static_cast<PetscInt>(ghost_ids_.size()), &v));
  return v;
}

Vec GridOperator::CreateVector() const {
  Vec v = nullptr;
  OPTISTEP_PETSC(MatCreateVecs(A_, &v, nullptr));
  return v;
}

}  // namespace optistep
