#pragma once
// One BLAS thread per MPI rank. A threaded BLAS (Debian's libblas.so.3 is often OpenBLAS's
// pthread build) starts as many threads as the node has cores in every rank, so N ranks on
// N cores run up to N^2 compute threads inside the factorizations and BLAS-1 calls and
// contend for the cores the ranks already fill. optistep parallelizes by ranks; unless the
// user sets a thread count, each rank runs its BLAS and OpenMP regions on one thread.
#include <mpi.h>

#include <string>

namespace optistep {

/// Not collective; call once at start-up, before any BLAS call. Limits OpenBLAS to one
/// thread unless OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS is set (OpenBLAS
/// reads those itself), and OpenMP (when a linked library brings libgomp) to one thread
/// unless OMP_NUM_THREADS is set. A BLAS other than OpenBLAS is left as it is.
void LimitBlasThreads();

/// What this process's BLAS is and how many threads it uses now (not collective).
struct BlasThreads {
  std::string library;   ///< the file that provides dgemm_, symlinks resolved; "" if none
  std::string version;   ///< "OpenBLAS 0.3.21" from openblas_get_config(); "" if not OpenBLAS
  int threads = 1;       ///< openblas_get_num_threads(); 1 for a BLAS that cannot say
  int omp_threads = 0;   ///< omp_get_max_threads() when OpenMP is linked, else 0
  std::string set_by;    ///< the environment variable that set the count, "" if optistep did
};
BlasThreads QueryBlasThreads();

/// Collective on comm: one line for the run summary, e.g. "BLAS: OpenBLAS 0.3.21
/// (/usr/lib/.../openblas-pthread/libblas.so.3), 1 thread per rank", with the range over
/// the ranks when they differ and the variable that set the count when the user did.
std::string DescribeBlasThreads(MPI_Comm comm);

}  // namespace optistep
