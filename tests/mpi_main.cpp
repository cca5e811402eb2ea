// GoogleTest main for MPI suites: initializes PETSc (and MPI), lets only rank 0 print,
// and makes every rank exit non-zero when a test failed on any rank.
#include <gtest/gtest.h>
#include <petscsys.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  PetscCallAbort(PETSC_COMM_SELF, PetscInitialize(&argc, &argv, nullptr, nullptr));
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local_failed = RUN_ALL_TESTS();
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
  PetscCallAbort(PETSC_COMM_SELF, PetscFinalize());
  return any_failed ? 1 : 0;
}
