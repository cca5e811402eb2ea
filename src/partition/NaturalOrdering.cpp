#include "partition/NaturalOrdering.hpp"

#include <algorithm>

#include "core/Error.hpp"

namespace optistep {

NaturalOrdering::NaturalOrdering(MPI_Comm comm, const std::vector<PetscInt>& original_ids,
                                 PetscInt n_global, int bs)
    : n_global_(n_global), bs_(bs), rows_(EvenRows(comm, n_global)) {
  const PetscInt n_items = static_cast<PetscInt>(original_ids.size());
  OPTISTEP_PETSC(VecCreateMPI(comm, bs * n_items, PETSC_DETERMINE, source_.out()));
  // Whole items per rank, split as evenly as possible.
  OPTISTEP_PETSC(VecCreateMPI(comm, bs * static_cast<PetscInt>(rows_.count), bs * n_global,
                              natural_.out()));

  PetscInt begin = 0;
  OPTISTEP_PETSC(VecGetOwnershipRange(source_, &begin, nullptr));
  OwnedIS from, to;
  OPTISTEP_PETSC(ISCreateStride(comm, bs * n_items, begin, 1, from.out()));
  OPTISTEP_PETSC(ISCreateBlock(comm, bs, n_items, original_ids.data(), PETSC_COPY_VALUES, to.out()));
  OPTISTEP_PETSC(VecScatterCreate(source_, from, natural_, to, scatter_.out()));
}

NaturalOrdering::~NaturalOrdering() = default;

DistributedArray<double> NaturalOrdering::ToNatural(const double* values) {
  PetscInt n_local = 0;
  OPTISTEP_PETSC(VecGetLocalSize(source_, &n_local));
  {
    VecArray sa(source_);
    for (PetscInt i = 0; i < n_local; ++i) sa[i] = values[i];
  }
  OPTISTEP_PETSC(VecScatterBegin(scatter_, source_, natural_, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecScatterEnd(scatter_, source_, natural_, INSERT_VALUES, SCATTER_FORWARD));
  PetscInt begin = 0, end = 0;
  OPTISTEP_PETSC(VecGetOwnershipRange(natural_, &begin, &end));
  {
    const VecArrayRead na(natural_);
    slice_.assign(na.data(), na.data() + (end - begin));
  }
  DistributedArray<double> view;
  view.global_rows = n_global_;
  view.row_offset = begin / bs_;
  view.local_rows = (end - begin) / bs_;
  view.columns = bs_;
  view.data = slice_.data();
  return view;
}

void NaturalOrdering::FromNatural(const double* natural, double* values) {
  {
    VecArray na(natural_);
    for (int64_t i = 0; i < rows_.count * bs_; ++i) na[i] = natural[i];
  }
  OPTISTEP_PETSC(VecScatterBegin(scatter_, natural_, source_, INSERT_VALUES, SCATTER_REVERSE));
  OPTISTEP_PETSC(VecScatterEnd(scatter_, natural_, source_, INSERT_VALUES, SCATTER_REVERSE));
  PetscInt n_local = 0;
  OPTISTEP_PETSC(VecGetLocalSize(source_, &n_local));
  const VecArrayRead sa(source_);
  std::copy(sa.data(), sa.data() + n_local, values);
}

}  // namespace optistep
