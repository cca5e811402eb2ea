#include "core/BlasThreads.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace optistep {
namespace {

template <class Function>
Function Lookup(const char* name) {
  return reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
}

bool IsSet(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

/// The first of the variables OpenBLAS reads for its thread count that is set, or "".
std::string BlasThreadVariable() {
  for (const char* name : {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"})
    if (IsSet(name)) return name;
  return "";
}

}  // namespace

void LimitBlasThreads() {
  if (BlasThreadVariable().empty())
    if (auto set = Lookup<void (*)(int)>("openblas_set_num_threads")) set(1);
  if (!IsSet("OMP_NUM_THREADS"))
    if (auto set = Lookup<void (*)(int)>("omp_set_num_threads")) set(1);
}

BlasThreads QueryBlasThreads() {
  BlasThreads b;
  if (void* dgemm = dlsym(RTLD_DEFAULT, "dgemm_")) {
    Dl_info info{};
    if (dladdr(dgemm, &info) != 0 && info.dli_fname != nullptr) {
      std::error_code error;
      const auto path = std::filesystem::canonical(info.dli_fname, error);
      b.library = error ? info.dli_fname : path.string();
    }
  }
  if (auto config = Lookup<char* (*)()>("openblas_get_config")) {
    // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64": name and version.
    std::istringstream words(config());
    std::string name, version;
    words >> name >> version;
    b.version = name + " " + version;
  }
  if (auto get = Lookup<int (*)()>("openblas_get_num_threads")) b.threads = get();
  if (auto get = Lookup<int (*)()>("omp_get_max_threads")) b.omp_threads = get();
  b.set_by = BlasThreadVariable();
  return b;
}

std::string DescribeBlasThreads(MPI_Comm comm) {
  const BlasThreads b = QueryBlasThreads();
  int range[4] = {b.threads, -b.threads, b.omp_threads, -b.omp_threads};
  MPI_Allreduce(MPI_IN_PLACE, range, 4, MPI_INT, MPI_MIN, comm);
  const auto count = [](int fewest, int most, const char* unit) {
    std::string s = std::to_string(fewest);
    if (most != fewest) s += "-" + std::to_string(most);
    return s + " " + unit + (most == 1 ? "" : "s") + " per rank";
  };
  std::string line = "BLAS: ";
  line += b.version.empty() ? std::string("unknown") : b.version;
  if (!b.library.empty()) line += " (" + b.library + ")";
  line += ", " + count(range[0], -range[1], "thread");
  line += b.set_by.empty() ? std::string(" (one per rank: optistep's default)")
                           : " (" + b.set_by + ")";
  if (-range[3] > 0) line += "; OpenMP " + count(range[2], -range[3], "thread");
  return line;
}

}  // namespace optistep
