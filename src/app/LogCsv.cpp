#include "app/LogCsv.hpp"

#include <petsclog.h>
#include <petscviewer.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/Error.hpp"
#include "core/PetscHandles.hpp"

namespace optistep {
namespace {

std::string& RequestedPath() {
  static std::string path;
  return path;
}

/// -optistep_log_csv, inside its own options block so -help lists it.
PetscErrorCode ReadLogCsvOption(char* path, size_t size, PetscBool* set) {
  PetscOptionsBegin(PETSC_COMM_WORLD, nullptr, "optistep run log", "Profiling");
  PetscCall(PetscOptionsString(
      "-optistep_log_csv",
      "Also write PETSc's per-rank event log to this file in the ascii_csv format "
      "(next to -log_view's table; read by scripts/scaling-study and scripts/report)",
      "PetscLogView", path, path, size, set));
  PetscOptionsEnd();
  return 0;
}

}  // namespace

bool StartLogCsv() {
  char path[PETSC_MAX_PATH_LEN] = "";
  PetscBool set = PETSC_FALSE;
  OPTISTEP_PETSC(ReadLogCsvOption(path, sizeof path, &set));
  if (!set || path[0] == '\0') return false;
  // Judged now, before the run writes anything: the file's folder must take a new file.
  std::string folder(path);
  const size_t slash = folder.find_last_of('/');
  folder = slash == std::string::npos ? "." : (slash == 0 ? "/" : folder.substr(0, slash));
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  std::string error;
  if (rank == 0 && access(folder.c_str(), W_OK | X_OK) != 0)
    error = std::string("-optistep_log_csv ") + path + ": folder " + folder +
            " cannot be written (" + std::strerror(errno) + ")";
  ThrowIfAnyRank(PETSC_COMM_WORLD, error);
  RequestedPath() = path;
  OPTISTEP_PETSC(PetscLogDefaultBegin());  // idempotent; -log_view has called it already
  return true;
}

void WriteLogCsv() {
  const std::string& path = RequestedPath();
  if (path.empty()) return;
  OwnedViewer viewer;
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  PetscErrorCode ierr = PetscViewerASCIIOpen(PETSC_COMM_WORLD, path.c_str(), viewer.out());
  PetscPopErrorHandler();
  if (ierr) throw IoError("-optistep_log_csv: cannot create " + path);
  OPTISTEP_PETSC(PetscViewerPushFormat(viewer, PETSC_VIEWER_ASCII_CSV));
  OPTISTEP_PETSC(PetscLogView(viewer));
  OPTISTEP_PETSC(PetscViewerPopFormat(viewer));
  // Closed here, not by the handle: closing flushes the file, and its error is reported.
  OPTISTEP_PETSC(PetscViewerDestroy(viewer.address()));
}

}  // namespace optistep
