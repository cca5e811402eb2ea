#include "core/Error.hpp"

#include <cctype>
#include <sstream>
#include <vector>

namespace optistep {

void ThrowPetscError(PetscErrorCode ierr, const char* call, const char* file, int line) {
  const char* text = nullptr;
  PetscErrorMessage(ierr, &text, nullptr);
  throw std::runtime_error(std::string("PETSc error ") + std::to_string(ierr) + " (" +
                           (text ? text : "unknown") + ") in " + call + " at " + file + ":" +
                           std::to_string(line));
}

namespace {

/// "-name value" pairs of the options database whose names start with -prefix.
std::vector<std::pair<std::string, std::string>> OptionsWithPrefix(const std::string& prefix) {
  char* all = nullptr;
  std::vector<std::pair<std::string, std::string>> found;
  if (PetscOptionsGetAll(nullptr, &all) || !all) return found;
  std::istringstream words(all);
  PetscFree(all);
  std::string word, name;
  const std::string wanted = "-" + prefix;
  while (words >> word) {
    const bool is_name = word.size() > 1 && word[0] == '-' && std::isalpha(static_cast<unsigned char>(word[1]));
    if (is_name) {
      name = word;
      if (name.rfind(wanted, 0) == 0) found.emplace_back(name, "");
    } else if (!found.empty() && found.back().first == name && found.back().second.empty()) {
      found.back().second = word;
    }
  }
  return found;
}

/// PETSc's message for ierr on one line: the specific one if there is one.
std::string OneLineMessage(PetscErrorCode ierr) {
  const char* text = nullptr;
  char* specific = nullptr;
  PetscErrorMessage(ierr, &text, &specific);
  std::string message = specific && *specific ? specific : (text ? text : "PETSc error");
  for (char& c : message)
    if (c == '\n') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  return message;
}

}  // namespace

void CallReadingOptions(const std::string& prefix, const std::function<PetscErrorCode()>& call) {
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  PetscErrorCode ierr = 0;
  try {
    ierr = call();
  } catch (const InputError&) {
    PetscPopErrorHandler();
    throw;
  } catch (const std::runtime_error&) {  // a failed OPTISTEP_PETSC inside call
    ierr = PETSC_ERR_ARG_WRONG;
  }
  PetscPopErrorHandler();
  if (!ierr) return;
  const std::string message = OneLineMessage(ierr);
  if (ierr == PETSC_ERR_MEM) throw std::runtime_error("PETSc: " + message);  // not an option
  const auto options = OptionsWithPrefix(prefix);
  for (const auto& [name, value] : options)
    if (!value.empty() && message.find(value) != std::string::npos)
      throw InputError(name + " " + value + ": " + message);
  // No value is quoted (say, a preconditioner that does not take the matrix format): the
  // options given under the prefix, or the prefix.
  std::string given;
  for (const auto& [name, value] : options)
    given += (given.empty() ? "" : " ") + name + (value.empty() ? "" : " " + value);
  throw InputError((given.empty() ? "PETSc options -" + prefix + "*" : given) + ": " + message);
}

std::string CallInStep(MPI_Comm comm, const std::function<PetscErrorCode()>& call) {
  PetscPushErrorHandler(PetscReturnErrorHandler, nullptr);
  PetscErrorCode ierr = 0;
  try {
    ierr = call();
  } catch (...) {
    PetscPopErrorHandler();
    throw;
  }
  PetscPopErrorHandler();
  if (ierr == PETSC_ERR_MEM) throw std::runtime_error("PETSc: " + OneLineMessage(ierr));
  return MessageOfAnyRank(comm, ierr ? "PETSc error " + std::to_string(ierr) + ": " + OneLineMessage(ierr) : "");
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
