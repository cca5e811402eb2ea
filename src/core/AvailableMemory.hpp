#pragma once
// The memory the nodes of a run can still give, so that a run too large for them is
// refused before it allocates (MPM: mpm/MemoryEstimate.hpp) instead of dying of
// std::bad_alloc or taking the node down half-way.
#include <mpi.h>

#include <string>

namespace optistep {

/// Memory available to a run, in bytes, as each node reports it (a node: a shared-memory
/// domain of the communicator, MPI_Comm_split_type MPI_COMM_TYPE_SHARED).
struct AvailableMemory {
  double total = 0.0;       ///< summed over the run's nodes, bytes
  double rank0_node = 0.0;  ///< on the node of rank 0, bytes
  int nodes = 1;            ///< nodes of the run
  /// Where rank 0's node read it: "MemAvailable in /proc/meminfo" or "free pages,
  /// sysconf(_SC_AVPHYS_PAGES)".
  std::string source;
};

/// Not collective: this node's available memory in bytes, and in *source where it was
/// read: MemAvailable of /proc/meminfo (free memory plus what the kernel can reclaim
/// without swapping; Linux >= 3.14), else sysconf(_SC_AVPHYS_PAGES) times the page size
/// (free pages only, an underestimate).
double NodeAvailableMemory(std::string* source);

/// Collective: reads each node's available memory once (on its lowest rank of comm) and
/// gives every rank the sum, rank 0's node's share, the node count and rank 0's source.
AvailableMemory QueryAvailableMemory(MPI_Comm comm);

/// "the run's <n> node(s)": whose memory AvailableMemory::total is.
std::string RunNodes(const AvailableMemory& available);

/// The shared middle of every memory refusal (MPM's mpm.dx, FEM meshes and copies, chains):
/// "at least <need> GB, more than the <available> GB available on <where> (<source>)",
/// the figures to three digits. need_bytes and available_bytes in bytes; `where` says
/// whose memory ("this node", "the run's 2 nodes", "rank 0's node").
std::string BeyondMemory(double need_bytes, double available_bytes, const std::string& where,
                         const std::string& source);

}  // namespace optistep
