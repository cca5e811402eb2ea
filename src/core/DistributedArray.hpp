#pragma once
// The row layout of distributed arrays, shared by the layers that write them (io/: frames,
// checkpoints) and the layers that lay them out (partition/: natural ordering; the
// discretizations): one rank's block of a global array, and the even split of rows over
// ranks. Plain data and arithmetic, no file format.
#include <mpi.h>

#include <cstdint>

namespace optistep {

/// One rank's block of a global row-major (global_rows x columns) array: this rank holds
/// rows [row_offset, row_offset + local_rows), local_rows * columns values from data.
/// Ranks with no rows set local_rows = 0 (data may be null) and still take part.
/// T is double, int32_t or int64_t.
template <class T>
struct DistributedArray {
  int64_t global_rows = 0;
  int64_t row_offset = 0;
  int64_t local_rows = 0;
  int columns = 1;
  const T* data = nullptr;
};

/// This rank's share [offset, offset + count) of n items split as evenly as possible over
/// the ranks of comm, in rank order (the first n % size ranks hold one more). The split of
/// natural-order arrays, frames and checkpoints.
struct RowRange {
  int64_t offset = 0;
  int64_t count = 0;
};
RowRange EvenRows(MPI_Comm comm, int64_t n);
/// The rank whose EvenRows share of n items over size ranks holds item row.
int EvenRowsRank(int64_t n, int size, int64_t row);

}  // namespace optistep
