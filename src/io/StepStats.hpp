#pragma once
// Per-step progress: one line per step on rank 0 and one row per step in stats.csv. The
// row is method-neutral (the integrator layer fills it from its StepRecord): outer
// iterations (Newton, L-BFGS), inner (linear) iterations, initializer applications, then
// the integrator's own columns, then the seconds of every phase (core/Phases.hpp).
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

namespace optistep {

/// One stats.csv row and step line.
struct StepRow {
  long step = 0;                     ///< 1-based count of accepted steps
  double t = 0.0;                    ///< time at the end of the step, s
  double dt = 0.0;                   ///< s
  int halvings = 0;                  ///< dt halvings it took
  std::string method;                ///< what solved the step ("newton", "lbfgs")
  int outer_iterations = 0;
  int inner_iterations = 0;          ///< Krylov iterations, summed
  int initializer_applications = 0;  ///< L-BFGS H0^-1 applications
  double cn_residual = 0.0;          ///< characteristic-norm residual at exit (< 1: converged)
  double energy = 0.0;               ///< incremental potential at exit, J
  double gradient_norm = 0.0;        ///< |g|_2 at exit
  double wall = 0.0;                 ///< s
  std::vector<double> extra;         ///< the integrator's own columns, in order
};

class StepStats {
 public:
  /// Collective. csv_path empty: no file. Rank 0 writes; the header row comes first.
  /// print: also print one line per step to stdout on rank 0. extra_columns: names of
  /// the integrator's own columns, filled from StepRow::extra in that order.
  /// resume_after_step >= 0 (a restart from the checkpoint of that step): an existing file
  /// keeps its header and its rows up to that step (rows of steps redone after the
  /// checkpoint go), and new rows are appended.
  StepStats(MPI_Comm comm, const std::string& csv_path, bool print,
            std::vector<std::string> extra_columns = {}, long resume_after_step = -1);
  ~StepStats();
  StepStats(const StepStats&) = delete;
  StepStats& operator=(const StepStats&) = delete;

  /// Collective: phase times are the maximum over ranks since the last Record; they are
  /// reset afterwards. IoError on every rank if stats.csv cannot be written (also from the
  /// constructor).
  void Record(const StepRow& row);

 private:
  /// Rank 0: the step line and the row; "" or why the row could not be written.
  std::string Print(const StepRow& row, const std::vector<double>& phase_seconds);

  MPI_Comm comm_;
  bool print_;
  std::vector<std::string> extra_columns_;
  std::vector<int> phases_;  ///< phase ids in column order
  std::FILE* csv_ = nullptr;
  std::string csv_path_;
};

}  // namespace optistep
