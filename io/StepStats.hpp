#pragma once
// Per-step progress: one line per step on rank 0 and one row per step in stats.csv.
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "integrators/BackwardEulerIntegrator.hpp"

namespace optistep {

class StepStats {
 public:
  /// Collective. csv_path empty: no file. Rank 0 writes; the header row comes first.
  /// print: also print one line per step to stdout on rank 0. extra_columns: names of
  /// the discretization's own columns, filled from StepRecord::extra in that order.
  /// resume_after_step >= 0 (a restart from the checkpoint of that step): an existing file
  /// keeps its header and its rows up to that step (rows of steps redone after the
  /// checkpoint go), and new rows are appended.
  StepStats(MPI_Comm comm, const std::string& csv_path, bool print,
            std::vector<std::string> extra_columns = {}, long resume_after_step = -1);
  ~StepStats();
  StepStats(const StepStats&) = delete;
  StepStats& operator=(const StepStats&) = delete;

  /// Collective: phase times are the maximum over ranks since the last Record; they are
  /// reset afterwards.
  void Record(const StepRecord& record);

 private:
  MPI_Comm comm_;
  bool print_;
  std::vector<std::string> extra_columns_;
  std::FILE* csv_ = nullptr;
};

}  // namespace optistep
