#include "core/Error.hpp"

#include <vector>

namespace optistep {

void ThrowPetscError(PetscErrorCode ierr, const char* call, const char* file, int line) {
  const char* text = nullptr;
  PetscErrorMessage(ierr, &text, nullptr);
  throw std::runtime_error(std::string("PETSc error ") + std::to_string(ierr) + " (" +
                           (text ? text : "unknown") + ") in " + call + " at " + file + ":" +
                           std::to_string(line));
}

std::string MessageOfAnyRank(MPI_Comm comm, const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int source = message.empty() ? -1 : rank;
  int first = -1;
  MPI_Allreduce(&source, &first, 1, MPI_INT, MPI_MAX, comm);
  if (first < 0) return "";
  // The highest failing rank's message is as good as any; rank 0 is the usual reader.
  int length = (rank == first) ? static_cast<int>(message.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, first, comm);
  std::vector<char> text(message.begin(), message.end());
  text.resize(length);
  MPI_Bcast(text.data(), length, MPI_CHAR, first, comm);
  return std::string(text.begin(), text.end());
}

void ThrowIfAnyRank(MPI_Comm comm, const std::string& message) {
  const std::string agreed = MessageOfAnyRank(comm, message);
  if (!agreed.empty()) throw InputError(agreed);
}

}  // namespace optistep
