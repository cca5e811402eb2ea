#include "core/DistributedArray.hpp"

#include <algorithm>

namespace optistep {

RowRange EvenRows(MPI_Comm comm, int64_t n) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int64_t base = n / size, extra = n % size;
  return {rank * base + std::min<int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

int EvenRowsRank(int64_t n, int size, int64_t row) {
  const int64_t base = n / size, extra = n % size, long_rows = extra * (base + 1);
  return static_cast<int>(row < long_rows ? row / (base + 1) : extra + (row - long_rows) / base);
}

}  // namespace optistep
