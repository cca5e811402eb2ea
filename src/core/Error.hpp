#pragma once
// Error types of optistep and the PETSc call check.
//
// Three kinds of failure:
//  - InputError: the user's input is wrong (a scene key, a mesh file, an element).
//    Thrown identically on every rank (input is validated before anything is written),
//    so main() can report it once, on rank 0, as one line and exit non-zero.
//  - IoError: the run's folder cannot be written (removed, full, read-only). Also agreed
//    by every rank, also one line.
//  - anything else (std::runtime_error from OPTISTEP_PETSC, bad_alloc): a failure
//    that may be local to one rank; main() prints it and calls MPI_Abort.
#include <petscsys.h>

#include <functional>
#include <stdexcept>
#include <string>

namespace optistep {

/// Bad user input. The message names the file, key or element and what was expected.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

/// A file or folder of the run cannot be written: the message names the path and the
/// system's reason ("cannot create out/frames/bar_000012.h5: Not a directory"). Thrown on
/// every rank alike (writes agree on their outcome), so main() reports it once, as one
/// line, and every rank exits with the I/O exit code; what was written before is kept.
class IoError : public std::runtime_error {
 public:
  explicit IoError(const std::string& what) : std::runtime_error(what) {}
};

/// A PETSc solve inside a time step raised an error (CallInStep), on every rank alike: the
/// minimizer that called it ends its solve unconverged, naming it, and the step is retried.
class SolveError : public std::runtime_error {
 public:
  explicit SolveError(const std::string& what) : std::runtime_error(what) {}
};

/// Throws std::runtime_error naming the failed PETSc call and PETSc's own message.
[[noreturn]] void ThrowPetscError(PetscErrorCode ierr, const char* call, const char* file,
                                  int line);

/// Runs call() (a PETSc object's SetFromOptions, SetType or SetUp) with PETSc's error
/// printing off and turns a PETSc error (a non-zero return, or a failed OPTISTEP_PETSC
/// inside call) into an InputError naming the option: the one
/// under `prefix` whose value PETSc's message quotes (e.g. "-newton_pc_type nonsense:
/// Unable to find requested PC type nonsense"), or else the options given under the
/// prefix, or the prefix. Running out of memory stays a std::runtime_error. Collective
/// when call is.
void CallReadingOptions(const std::string& prefix, const std::function<PetscErrorCode()>& call);

/// Collective when call is: runs call() (a PETSc solve inside a time step: a line search,
/// a Krylov solve) with PETSc's error printing off and returns "" on success, else PETSc's
/// message on one line ("Tao_mcstep: dx * (stp-stx) >= 0.0", "KSPSolve has not
/// converged"), agreed by every rank of comm. The caller makes that a failed try of the
/// step, which the step controller retries with dt/2; no traceback is printed. Running out
/// of memory stays a std::runtime_error; exceptions of call pass through.
std::string CallInStep(MPI_Comm comm, const std::function<PetscErrorCode()>& call);

/// Collective: the message of the highest rank of comm whose message is non-empty, on
/// every rank, or "" if every rank passes "". Lets all ranks throw the same error after a
/// failure that only some of them saw.
std::string MessageOfAnyRank(MPI_Comm comm, const std::string& message);

/// Collective: throws the same InputError on every rank of comm if any rank has a
/// non-empty message (the one of the highest such rank). Used after rank-0-only reads.
void ThrowIfAnyRank(MPI_Comm comm, const std::string& message);

/// Collective: runs read() on rank 0 only (reading input there) and raises an InputError
/// it throws on every rank of comm.
template <class Read>
void ReadOnRankZero(MPI_Comm comm, Read&& read) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::string error;
  if (rank == 0) {
    try {
      read();
    } catch (const InputError& e) {
      error = e.what();
    }
  }
  ThrowIfAnyRank(comm, error);
}

}  // namespace optistep

/// Checks a PETSc call's error code; on failure throws with the call's text and location.
#define OPTISTEP_PETSC(call)                                                      \
  do {                                                                            \
    PetscErrorCode optistep_ierr_ = (call);                                       \
    if (PetscUnlikely(optistep_ierr_))                                            \
      ::optistep::ThrowPetscError(optistep_ierr_, #call, __FILE__, __LINE__);     \
  } while (0)
