#pragma once
// The finiteness check the integrators make on a step's result before accepting it.
#include <mpi.h>
#include <petscvec.h>

#include <cmath>

#include "core/Error.hpp"

namespace optistep {

/// Collective on v's communicator (one MPI_Allreduce of an int): whether every owned
/// entry of v, on every rank, is finite. A plain loop, not VecNorm: a BLAS norm through a
/// threaded BLAS (OpenBLAS pthread) wakes its threads on every call, which can cost more
/// than the semi-implicit substep it checks (docs/benchmarks/2026-11-24-async.md).
inline bool AllFinite(Vec v) {
  const PetscScalar* a = nullptr;
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetLocalSize(v, &n));
  OPTISTEP_PETSC(VecGetArrayRead(v, &a));
  int finite = 1;
  for (PetscInt i = 0; i < n; ++i)
    if (!std::isfinite(a[i])) {
      finite = 0;
      break;
    }
  OPTISTEP_PETSC(VecRestoreArrayRead(v, &a));
  MPI_Comm comm = MPI_COMM_NULL;
  OPTISTEP_PETSC(PetscObjectGetComm(reinterpret_cast<PetscObject>(v), &comm));
  MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, comm);
  return finite != 0;
}

}  // namespace optistep
