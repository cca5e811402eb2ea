// The owning handles and array views of core/PetscHandles.hpp, on 1, 2 and 4 ranks with
// parallel Vecs and Mats (PETSC_COMM_WORLD), so that destruction is exercised as the
// collective it is. What is measured comes from PETSc, not from the handles:
//  - a handle gives up exactly one reference: the test takes a second reference of its own
//    and reads the count back with PetscObjectGetReference (2 while the handle lives, 1
//    after; a handle that destroyed nothing would leave 2, one that destroyed twice 0 or a
//    crash);
//  - an exception thrown mid-scope frees everything the scope created: PETSc's own
//    accounting of its heap (PetscMallocGetCurrentUsage, which counts under -malloc_debug,
//    set for this suite in tests/CMakeLists.txt) is back to where it was;
//  - a read-write view restores: VecRestoreArray raises the Vec's object state, so a norm
//    PETSc cached before the view is computed afresh after it; an index view of a stride IS frees the index array that
//    ISGetIndices allocated for it. (A read view's VecRestoreArrayRead leaves no trace on a
//    standard Vec in an optimized PETSc, so its test checks the values and that the Vec can
//    be gotten again.)
#include <gtest/gtest.h>
#include <petscis.h>
#include <petscksp.h>
#include <petscvec.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "core/Error.hpp"
#include "core/PetscHandles.hpp"

namespace optistep {
namespace {

PetscInt References(PetscObject o) {
  PetscInt count = 0;
  OPTISTEP_PETSC(PetscObjectGetReference(o, &count));
  return count;
}
template <class H>
PetscInt References(H h) {
  return References(reinterpret_cast<PetscObject>(h));
}

OwnedVec MakeVec(PetscInt local_size = 6) {
  OwnedVec v;
  OPTISTEP_PETSC(VecCreateMPI(PETSC_COMM_WORLD, local_size, PETSC_DETERMINE, v.out()));
  return v;
}

PetscLogDouble HeapInUse() {
  PetscLogDouble bytes = 0;
  OPTISTEP_PETSC(PetscMallocGetCurrentUsage(&bytes));
  return bytes;
}

TEST(PetscHandles, DestructorGivesUpExactlyOneReference) {
  Vec raw = nullptr;
  Mat raw_mat = nullptr;
  KSP raw_ksp = nullptr;
  {
    OwnedVec v = MakeVec();
    OwnedMat A;
    OPTISTEP_PETSC(MatCreateAIJ(PETSC_COMM_WORLD, 6, 6, PETSC_DETERMINE, PETSC_DETERMINE, 1,
                                nullptr, 0, nullptr, A.out()));
    OwnedKsp ksp;
    OPTISTEP_PETSC(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
    raw = v;
    raw_mat = A;
    raw_ksp = ksp;
    for (PetscObject o : {reinterpret_cast<PetscObject>(raw), reinterpret_cast<PetscObject>(raw_mat),
                          reinterpret_cast<PetscObject>(raw_ksp)}) {
      OPTISTEP_PETSC(PetscObjectReference(o));
      EXPECT_EQ(References(o), 2);
    }
  }
  EXPECT_EQ(References(raw), 1);
  EXPECT_EQ(References(raw_mat), 1);
  EXPECT_EQ(References(raw_ksp), 1);
  OPTISTEP_PETSC(KSPDestroy(&raw_ksp));
  OPTISTEP_PETSC(MatDestroy(&raw_mat));
  OPTISTEP_PETSC(VecDestroy(&raw));
}

TEST(PetscHandles, MovesTransferOwnership) {
  OwnedVec a = MakeVec();
  Vec raw = a;
  OPTISTEP_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(raw)));

  OwnedVec b(std::move(a));  // construction: a is empty, the count unchanged
  EXPECT_FALSE(a);
  EXPECT_EQ(b.get(), raw);
  EXPECT_EQ(References(raw), 2);

  std::vector<OwnedVec> held;  // reallocation moves, never destroys a live reference
  held.push_back(std::move(b));
  for (int i = 0; i < 8; ++i) held.push_back(MakeVec());
  EXPECT_EQ(held.front().get(), raw);
  EXPECT_EQ(References(raw), 2);

  OwnedVec other = MakeVec();
  Vec other_raw = other;
  OPTISTEP_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(other_raw)));
  other = std::move(held.front());  // assignment destroys what the target held
  EXPECT_EQ(References(other_raw), 1);
  EXPECT_EQ(References(raw), 2);
  held.clear();
  EXPECT_EQ(References(raw), 2);

  Vec released = other.release();  // release hands the reference over, destroying nothing
  EXPECT_FALSE(other);
  EXPECT_EQ(References(raw), 2);
  OwnedVec adopted(released);
  adopted.reset();
  EXPECT_EQ(References(raw), 1);

  OPTISTEP_PETSC(VecDestroy(&other_raw));
  OPTISTEP_PETSC(VecDestroy(&raw));
}

TEST(PetscHandles, OutDestroysWhatWasHeld) {
  OwnedVec x = MakeVec();
  OwnedVec y = MakeVec();
  Vec first = y;
  OPTISTEP_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(first)));
  OPTISTEP_PETSC(VecDuplicate(x, y.out()));
  EXPECT_EQ(References(first), 1);
  EXPECT_NE(y.get(), first);
  OPTISTEP_PETSC(VecDestroy(&first));
}

/// Creates a Vec, its duplicate, a Mat, a KSP on it, an IS and a view, then calls then().
template <class Then>
void CreateObjects(Then then) {
  OwnedVec x = MakeVec(30);
  OwnedVec y;
  OPTISTEP_PETSC(VecDuplicate(x, y.out()));
  OwnedMat A;
  OPTISTEP_PETSC(MatCreateAIJ(PETSC_COMM_WORLD, 30, 30, PETSC_DETERMINE, PETSC_DETERMINE, 3, nullptr, 1,
                              nullptr, A.out()));
  OPTISTEP_PETSC(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  OwnedKsp ksp;
  OPTISTEP_PETSC(KSPCreate(PETSC_COMM_WORLD, ksp.out()));
  OPTISTEP_PETSC(KSPSetOperators(ksp, A, A));
  OwnedIS is;
  OPTISTEP_PETSC(ISCreateStride(PETSC_COMM_WORLD, 5, 0, 1, is.out()));
  VecArray view(x);
  then();
}

TEST(PetscHandles, ExceptionMidScopeFreesEverything) {
  PetscBool tracing = PETSC_FALSE;
  OPTISTEP_PETSC(PetscMallocGetDebug(&tracing, nullptr, nullptr));
  ASSERT_TRUE(tracing) << "the suite runs with PETSC_OPTIONS=-malloc_debug (tests/CMakeLists.txt)";
  // The first object of a class registers its PETSc package, which stays until
  // PetscFinalize: a first pass, left normally, leaves those registrations behind.
  CreateObjects([] {});
  const PetscLogDouble before = HeapInUse();
  try {
    CreateObjects([&] {
      EXPECT_GT(HeapInUse(), before);
      throw InputError("thrown on every rank alike, as an input error is");
    });
  } catch (const InputError&) {
  }
  EXPECT_EQ(HeapInUse(), before);
}

TEST(PetscHandles, ReadWriteViewRestores) {
  OwnedVec v = MakeVec();
  OPTISTEP_PETSC(VecSet(v, 1.0));
  PetscInt n_local = 0;
  OPTISTEP_PETSC(VecGetLocalSize(v, &n_local));
  PetscInt n = 0;
  OPTISTEP_PETSC(VecGetSize(v, &n));
  PetscReal norm = 0.0;
  OPTISTEP_PETSC(VecNorm(v, NORM_1, &norm));  // PETSc caches it until the Vec's state changes
  EXPECT_EQ(norm, static_cast<PetscReal>(n));
  {
    VecArray a(v);
    for (PetscInt i = 0; i < n_local; ++i) a[i] = 2.0;
  }
  // VecRestoreArray raises the Vec's state: the cached norm is dropped and computed again.
  OPTISTEP_PETSC(VecNorm(v, NORM_1, &norm));
  EXPECT_EQ(norm, 2.0 * static_cast<PetscReal>(n));
  {
    VecArrayRead r(v);
    EXPECT_EQ(r[0], 2.0);
  }
  PetscScalar* again = nullptr;  // gettable again once the views are gone
  OPTISTEP_PETSC(VecGetArray(v, &again));
  EXPECT_EQ(again[0], 2.0);
  OPTISTEP_PETSC(VecRestoreArray(v, &again));
}

TEST(PetscHandles, IndexViewRestores) {
  OwnedIS is;
  OPTISTEP_PETSC(ISCreateStride(PETSC_COMM_SELF, 1000, 3, 2, is.out()));
  const PetscLogDouble before = HeapInUse();
  {
    IsIndices idx(is);  // a stride IS allocates its index array on ISGetIndices
    EXPECT_EQ(idx[0], 3);
    EXPECT_EQ(idx[999], 3 + 2 * 999);
    EXPECT_GE(HeapInUse(), before + 1000 * sizeof(PetscInt));
  }
  EXPECT_EQ(HeapInUse(), before);
}

}  // namespace
}  // namespace optistep
