#pragma once
// Owning handles for PETSc objects and scoped views of their arrays, so that an exception
// (a SolveError, an InputError during set-up, a failed OPTISTEP_PETSC) frees what a scope
// created instead of leaking it.
#include <petscis.h>
#include <petscksp.h>
#include <petsctao.h>
#include <petscvec.h>
#include <petscviewer.h>

#include "core/Error.hpp"

namespace optistep {

/// Owns one reference to a PETSc object of type Handle (Vec, Mat, KSP, ...) and gives it up
/// with Destroy (VecDestroy, MatDestroy, ...) in its destructor, reset() or a move
/// assignment. Move-only; an empty handle holds nullptr and destroys nothing.
///
/// Destruction is collective on the object's communicator, as PETSc's XxxDestroy is: every
/// rank that holds a reference to a parallel object must destroy it, and every rank must
/// destroy its parallel objects in the same order. Handles that are created and dropped on
/// the same code path on every rank (a member, a local of a collective function) do so by
/// construction, also when an exception that every rank throws alike unwinds the scope.
///
/// Converts implicitly to Handle, so a handle is passed to PETSc's functions as the raw
/// object was (VecAXPY(y, a, x)); the callee borrows it. out() is the address PETSc's
/// create-by-pointer functions write to (VecDuplicate(x, y.out())).
template <class Handle, PetscErrorCode (*Destroy)(Handle*)>
class PetscHandle {
 public:
  PetscHandle() = default;
  /// Takes over the reference of h (one that the caller would otherwise destroy).
  explicit PetscHandle(Handle h) noexcept : h_(h) {}
  ~PetscHandle() { reset(); }
  PetscHandle(PetscHandle&& other) noexcept : h_(other.release()) {}
  PetscHandle& operator=(PetscHandle&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  PetscHandle(const PetscHandle&) = delete;
  PetscHandle& operator=(const PetscHandle&) = delete;

  /// A handle that owns a new reference to h (PetscObjectReference), for an object the
  /// caller keeps owning too; throws std::runtime_error if the reference cannot be taken.
  static PetscHandle Shared(Handle h) {
    OPTISTEP_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(h)));
    return PetscHandle(h);
  }

  Handle get() const noexcept { return h_; }
  operator Handle() const noexcept { return h_; }  // NOLINT: borrowed by PETSc calls
  explicit operator bool() const noexcept { return h_ != nullptr; }

  /// Destroys the object held (collective, as the destructor) and returns the address of
  /// the now empty handle, for PETSc's functions that create into a pointer.
  Handle* out() noexcept {
    reset();
    return &h_;
  }
  /// The address of the handle as it is, for PETSc's functions that read and may rewrite it
  /// (MAT_REUSE_MATRIX products); destroys nothing.
  Handle* address() noexcept { return &h_; }
  /// Destroys the object held, if any (collective on its communicator), and takes over h.
  void reset(Handle h = nullptr) noexcept {
    Handle old = h_;
    h_ = h;
    // A destructor must not throw, and during unwinding there is no one to return an error
    // to: PETSc's manual (PetscCallAbort) names aborting as the one way to handle a PETSc
    // error in a C++ destructor. Destroy fails only on a corrupt object, never on a valid
    // one whose solve failed, so a step that is retried after a SolveError is not affected.
    if (old) PetscCallAbort(PETSC_COMM_SELF, Destroy(&old));
  }
  /// Gives up ownership without destroying: the caller now owns the returned reference.
  Handle release() noexcept {
    Handle h = h_;
    h_ = nullptr;
    return h;
  }

 private:
  Handle h_ = nullptr;
};

using OwnedVec = PetscHandle<Vec, VecDestroy>;                 ///< a Vec (VecDestroy)
using OwnedMat = PetscHandle<Mat, MatDestroy>;                 ///< a Mat (MatDestroy)
using OwnedKsp = PetscHandle<KSP, KSPDestroy>;                 ///< a KSP (KSPDestroy)
using OwnedPc = PetscHandle<PC, PCDestroy>;                    ///< a PC (PCDestroy)
using OwnedIS = PetscHandle<IS, ISDestroy>;                    ///< an IS (ISDestroy)
using OwnedVecScatter = PetscHandle<VecScatter, VecScatterDestroy>;  ///< (VecScatterDestroy)
using OwnedTaoLineSearch = PetscHandle<TaoLineSearch, TaoLineSearchDestroy>;  ///< a Tao line search
using OwnedViewer = PetscHandle<PetscViewer, PetscViewerDestroy>;          ///< a viewer
using OwnedMatNullSpace = PetscHandle<MatNullSpace, MatNullSpaceDestroy>;    ///< a null space
using OwnedLocalToGlobalMapping =
    PetscHandle<ISLocalToGlobalMapping, ISLocalToGlobalMappingDestroy>;  ///< local-to-global map

/// A PETSc array for the life of the view: Get(object, &array) on construction (throws
/// std::runtime_error if it fails), Restore(object, &array) on destruction. Not
/// collective. The views below are its instances.
template <class Object, class Element, PetscErrorCode (*Get)(Object, Element**),
          PetscErrorCode (*Restore)(Object, Element**)>
class ScopedArray {
 public:
  explicit ScopedArray(Object object) : object_(object) { OPTISTEP_PETSC(Get(object_, &array_)); }
  ~ScopedArray() { PetscCallAbort(PETSC_COMM_SELF, Restore(object_, &array_)); }
  ScopedArray(const ScopedArray&) = delete;
  ScopedArray& operator=(const ScopedArray&) = delete;
  /// The entries (a Vec's owned entries, its local size of them; an IS's local indices,
  /// ISGetLocalSize of them).
  Element* data() const noexcept { return array_; }
  Element& operator[](PetscInt i) const noexcept { return array_[i]; }

 private:
  Object object_;
  Element* array_ = nullptr;
};

/// Read access to the owned entries of a Vec: VecGetArrayRead / VecRestoreArrayRead. While
/// the view lives, v is locked for writing.
using VecArrayRead = ScopedArray<Vec, const PetscScalar, VecGetArrayRead, VecRestoreArrayRead>;
/// Read-write access to the owned entries of a Vec: VecGetArray / VecRestoreArray, which
/// marks v as changed.
using VecArray = ScopedArray<Vec, PetscScalar, VecGetArray, VecRestoreArray>;
/// The local indices of an IS: ISGetIndices / ISRestoreIndices.
using IsIndices = ScopedArray<IS, const PetscInt, ISGetIndices, ISRestoreIndices>;

}  // namespace optistep
