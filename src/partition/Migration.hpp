#pragma once
// Moving and copying rank-local records (MPM particles) between ranks as packed doubles:
// migration to new owners and the sending of copies (halos), in a deterministic order.
//
// Records is a rank-local container of fixed-size records (mpm::Particles is one) with
//   static constexpr int kPackedDoubles;            doubles per packed record
//   std::size_t size() const;
//   void Pack(std::size_t p, double* out) const;    record p to out[0, kPackedDoubles)
//   void AppendPacked(const double* in);            appends the record packed at in
//   void EraseIf(const std::vector<char>& erase);   drops records p with erase[p] != 0,
//                                                   keeping the order of the others
// The packed doubles are moved as MPI_DOUBLE without arithmetic, so bit patterns that are
// no numbers (a 64-bit id copied into a double) arrive unchanged.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/Exchange.hpp"

namespace optistep {

/// Packed copies of records addressed to ranks, delivered in one all-to-all.
template <class Records>
class RecordExchange {
 public:
  explicit RecordExchange(MPI_Comm comm) : comm_(comm) {
    int size = 1;
    MPI_Comm_size(comm_, &size);
    send_.resize(size);
  }

  /// Queues a copy of record p of records for rank. Not collective.
  void Send(const Records& records, std::size_t p, int rank) {
    std::vector<double>& buffer = send_[rank];
    buffer.resize(buffer.size() + Records::kPackedDoubles);
    records.Pack(p, buffer.data() + buffer.size() - Records::kPackedDoubles);
  }

  /// Collective: delivers the queued copies and appends those sent to this rank to
  /// records, by sending rank and, within one sender, in the order of its Send calls.
  /// The queue is then empty.
  void Deliver(Records* records) {
    const std::vector<std::vector<double>> recv = AllToAll(comm_, send_);
    for (const std::vector<double>& buffer : recv)
      for (std::size_t k = 0; k < buffer.size(); k += Records::kPackedDoubles)
        records->AppendPacked(buffer.data() + k);
    for (std::vector<double>& buffer : send_) buffer.clear();
  }

 private:
  MPI_Comm comm_;
  std::vector<std::vector<double>> send_;
};

/// Collective: moves every record p of records with destination[p] != this rank to rank
/// destination[p] (destination: one rank per record). The records that stay keep their
/// order; the arrivals follow them, by sending rank and then in the sender's order, so a
/// migration is deterministic. Returns the number of records moved, over all ranks.
template <class Records>
long long MigrateRecords(MPI_Comm comm, const std::vector<int>& destination, Records* records) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  RecordExchange<Records> exchange(comm);
  std::vector<char> leaving(records->size(), 0);
  for (std::size_t p = 0; p < leaving.size(); ++p) {
    if (destination[p] == rank) continue;
    leaving[p] = 1;
    exchange.Send(*records, p, destination[p]);
  }
  records->EraseIf(leaving);
  long long moved = std::count(leaving.begin(), leaving.end(), 1), total = 0;
  exchange.Deliver(records);
  MPI_Allreduce(&moved, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
  return total;
}

}  // namespace optistep
