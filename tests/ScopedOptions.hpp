#pragma once
// PETSc options set for a scope (one solve, one set-up) and cleared after it, so tests do
// not leak options into each other. Process-local: each rank sets its own.
#include <petscsys.h>

#include <string>
#include <utility>
#include <vector>

#include "core/Error.hpp"

namespace optistep::test {

class ScopedOptions {
 public:
  explicit ScopedOptions(std::vector<std::pair<std::string, std::string>> options)
      : options_(std::move(options)) {
    for (const auto& [name, value] : options_)
      OPTISTEP_PETSC(PetscOptionsSetValue(nullptr, name.c_str(), value.c_str()));
  }
  ~ScopedOptions() {
    for (const auto& option : options_) PetscOptionsClearValue(nullptr, option.first.c_str());
  }
  ScopedOptions(const ScopedOptions&) = delete;
  ScopedOptions& operator=(const ScopedOptions&) = delete;

 private:
  std::vector<std::pair<std::string, std::string>> options_;
};

}  // namespace optistep::test
