#pragma once
// Personalized all-to-all exchange of variable-length lists, in rank order: what rank r
// receives from every source comes back indexed by source rank, so callers that merge
// in that order stay deterministic.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace optistep {

template <class T>
MPI_Datatype MpiTypeOf();
template <>
inline MPI_Datatype MpiTypeOf<double>() { return MPI_DOUBLE; }
template <>
inline MPI_Datatype MpiTypeOf<std::int64_t>() { return MPI_INT64_T; }
template <>
inline MPI_Datatype MpiTypeOf<std::uint64_t>() { return MPI_UINT64_T; }
template <>
inline MPI_Datatype MpiTypeOf<int>() { return MPI_INT; }
template <>
inline MPI_Datatype MpiTypeOf<std::byte>() { return MPI_BYTE; }

/// Collective. send[r] goes to rank r; returns recv[r], the list rank r sent here.
template <class T>
std::vector<std::vector<T>> AllToAll(MPI_Comm comm, const std::vector<std::vector<T>>& send) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<int> send_counts(size), recv_counts(size), send_displs(size, 0), recv_displs(size, 0);
  for (int r = 0; r < size; ++r) send_counts[r] = static_cast<int>(send[r].size());
  MPI_Alltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < size; ++r) {
    send_displs[r] = send_displs[r - 1] + send_counts[r - 1];
    recv_displs[r] = recv_displs[r - 1] + recv_counts[r - 1];
  }
  std::vector<T> flat_send;
  flat_send.reserve(send_displs.back() + send_counts.back());
  for (const auto& list : send) flat_send.insert(flat_send.end(), list.begin(), list.end());
  std::vector<T> flat_recv(recv_displs.back() + recv_counts.back());
  MPI_Alltoallv(flat_send.data(), send_counts.data(), send_displs.data(), MpiTypeOf<T>(),
                flat_recv.data(), recv_counts.data(), recv_displs.data(), MpiTypeOf<T>(), comm);
  std::vector<std::vector<T>> recv(size);
  for (int r = 0; r < size; ++r)
    recv[r].assign(flat_recv.begin() + recv_displs[r],
                   flat_recv.begin() + recv_displs[r] + recv_counts[r]);
  return recv;
}

/// Collective: every rank's list, concatenated in rank order, on every rank.
template <class T>
std::vector<T> AllGatherLists(MPI_Comm comm, const std::vector<T>& mine,
                              std::vector<int>* counts_out = nullptr) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<T> all(displs.back() + counts.back());
  MPI_Allgatherv(mine.data(), n, MpiTypeOf<T>(), all.data(), counts.data(), displs.data(),
                 MpiTypeOf<T>(), comm);
  if (counts_out) *counts_out = counts;
  return all;
}

}  // namespace optistep
