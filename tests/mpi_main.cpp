// GoogleTest main for MPI suites: initializes PETSc (and MPI), lets only rank 0 print,
// makes every rank exit non-zero when a test failed on any rank, and removes the
// suite's temporary folders.
#include <gtest/gtest.h>
#include <petscsys.h>

#include <filesystem>

#include "TempDirs.hpp"
#include "core/BlasThreads.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  optistep::LimitBlasThreads();  // as the executable does
  PetscCallAbort(PETSC_COMM_SELF, PetscInitialize(&argc, &argv, nullptr, nullptr));
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local_failed = RUN_ALL_TESTS();
  MPI_Barrier(PETSC_COMM_WORLD);
  if (rank == 0)
    for (const auto& dir : optistep::test::TempDirs()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  PetscCallAbort(PETSC_COMM_SELF, PetscFinalize());
  return any_failed ? 1 : 0;
}
