#include "partition/NaturalOrdering.hpp"

#include <algorithm>

#include "core/Error.hpp"

namespace optistep {

NaturalOrdering::NaturalOrdering(MPI_Comm comm, const std::vector<PetscInt>& original_ids,
                                 PetscInt n_global, int bs)
    : n_global_(n_global), bs_(bs), rows_(EvenRows(comm, n_global)) {
  const PetscInt n_items = static_cast<PetscInt>(original_ids.size());
  OPTISTEP_PETSC(VecCreateMPI(comm, bs * n_items, PETSC_DETERMINE, &source_));
  // Whole items per rank, split as evenly as possible.
  OPTISTEP_PETSC(VecCreateMPI(comm, bs * static_cast<PetscInt>(rows_.count), bs * n_global,
                              &natural_));

  PetscInt begin = 0;
  OPTISTEP_PETSC(VecGetOwnershipRange(source_, &begin, nullptr));
  IS from = nullptr, to = nullptr;
  OPTISTEP_PETSC(ISCreateStride(comm, bs * n_items, begin, 1, &from));
  OPTISTEP_PETSC(ISCreateBlock(comm, bs, n_items, original_ids.data(), PETSC_COPY_VALUES, &to));
  OPTISTEP_PETSC(VecScatterCreate(source_, from, natural_, to, &scatter_));
  ISDestroy(&from);
  ISDestroy(&to);
}

NaturalOrdering::~NaturalOrdering() {
  VecScatterDestroy(&scatter_);
  VecDestroy(&source_);
  VecDestroy(&natural_);
}

DistributedArray<double> NaturalOrdering::ToNatural(const double* values) {
  PetscInt n_local = 0;
  OPTISTEP_PETSC(VecGetLocalSize(source_, &n_local));
  PetscScalar* sa = nullptr;
  OPTISTEP_PETSC(VecGetArray(source_, &sa));
  for (PetscInt i = 0; i < n_local; ++i) sa[i] = values[i];
  OPTISTEP_PETSC(VecRestoreArray(source_, &sa));
  OPTISTEP_PETSC(VecScatterBegin(scatter_, source_, natural_, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(scatter_, source_, natural_, INSERT_VALUES, SCATTER_FORWARD));
  PetscInt begin = 0, end = 0;
  OPTISTEP_PETSC(VecGetOwnershipRange(natural_, &begin, &end));
  const PetscScalar* na = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(natural_, &na));
  slice_.assign(na, na + (end - begin));
  OPTISTEP_PETSC(VecRestoreArrayRead(natural_, &na));
  DistributedArray<double> view;
  view.global_rows = n_global_;
  view.row_offset = begin / bs_;
  view.local_rows = (end - begin) / bs_;
  view.columns = bs_;
  view.data = slice_.data();
  return view;
}

void NaturalOrdering::FromNatural(const double* natural, double* values) {
  PetscScalar* na = nullptr;
  OPTISTEP_PETSC(VecGetArray(natural_, &na));
  for (int64_t i = 0; i < rows_.count * bs_; ++i) na[i] = natural[i];
  OPTISTEP_PETSC(VecRestoreArray(natural_, &na));
  OPTISTEP_PETSC(VecScatterBegin(scatter_, natural_, source_, INSERT_VALUES, SCATTER_REVERSE));
  OPTISTEP_PETSC(VecScatterEnd(scatter_, natural_, source_, INSERT_VALUES, SCATTER_REVERSE));
  PetscInt n_local = 0;
  OPTISTEP_PETSC(VecGetLocalSize(source_, &n_local));
  const PetscScalar* sa = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(source_, &sa));
  std::copy(sa, sa + n_local, values);
  OPTISTEP_PETSC(VecRestoreArrayRead(source_, &sa));
}

}  // namespace optistep
