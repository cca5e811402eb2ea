#include "core/AvailableMemory.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>

namespace optistep {

namespace {

constexpr const char* kMemAvailable = "MemAvailable in /proc/meminfo";
constexpr const char* kFreePages = "free pages, sysconf(_SC_AVPHYS_PAGES)";

}  // namespace

double NodeAvailableMemory(std::string* source) {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    unsigned long long kib = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %llu kB", &kib) == 1) {
      *source = kMemAvailable;
      return 1024.0 * static_cast<double>(kib);
    }
  }
  *source = kFreePages;
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

AvailableMemory QueryAvailableMemory(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);

  // Per node leader: its bytes and 1; rank 0 (the leader of its node) also says which
  // source it read.
  std::string source;
  double mine[2] = {0.0, 0.0};
  if (node_rank == 0) {
    mine[0] = NodeAvailableMemory(&source);
    mine[1] = 1.0;
  }
  double sums[2] = {0.0, 0.0};
  MPI_Allreduce(mine, sums, 2, MPI_DOUBLE, MPI_SUM, comm);
  double rank0[2] = {mine[0], source == kMemAvailable ? 1.0 : 0.0};
  MPI_Bcast(rank0, 2, MPI_DOUBLE, 0, comm);

  AvailableMemory memory;
  memory.total = sums[0];
  memory.nodes = static_cast<int>(sums[1]);
  memory.rank0_node = rank0[0];
  memory.source = rank0[1] != 0.0 ? kMemAvailable : kFreePages;
  return memory;
}

std::string RunNodes(const AvailableMemory& available) {
  return "the run's " + std::to_string(available.nodes) + (available.nodes == 1 ? " node" : " nodes");
}

std::string BeyondMemory(double need_bytes, double available_bytes, const std::string& where,
                         const std::string& source) {
  char text[160];
  std::snprintf(text, sizeof text, "at least %.3g GB, more than the %.3g GB available on ",
                need_bytes / 1e9, available_bytes / 1e9);
  return text + where + " (" + source + ")";
}

}  // namespace optistep
