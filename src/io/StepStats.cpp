#include "io/StepStats.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/Error.hpp"
#include "core/Phases.hpp"

namespace optistep {

namespace {

/// The header line and the rows of steps <= last_step of the stats.csv at path, or "" if
/// there is no such file. A last line without its newline (a run killed while writing
/// it) is dropped.
std::string RowsUpToStep(const std::string& path, long last_step) {
  std::ifstream in(path);
  std::string kept, line;
  for (bool header = true; std::getline(in, line) && !in.eof(); header = false)
    if (header || std::strtol(line.c_str(), nullptr, 10) <= last_step) kept += line + "\n";
  return kept;
}

}  // namespace

StepStats::StepStats(MPI_Comm comm, const std::string& csv_path, bool print,
                     std::vector<std::string> extra_columns, long resume_after_step)
    : comm_(comm), print_(print), extra_columns_(std::move(extra_columns)), phases_(PhasesByName()) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::string error;
  const std::string kept =
      rank == 0 && resume_after_step >= 0 ? RowsUpToStep(csv_path, resume_after_step) : "";
  if (rank == 0 && !csv_path.empty() && !kept.empty()) {
    csv_ = std::fopen(csv_path.c_str(), "w");
    if (!csv_) {
      error = "cannot write " + csv_path + ": " + std::strerror(errno);
    } else {
      std::fputs(kept.c_str(), csv_);
      std::fflush(csv_);
    }
  } else if (rank == 0 && !csv_path.empty()) {
    csv_ = std::fopen(csv_path.c_str(), "w");
    if (!csv_) {
      error = "cannot write " + csv_path + ": " + std::strerror(errno);
    } else {
      std::fprintf(csv_,
                   "step,t,dt,halvings,method,outer_iterations,inner_iterations,"
                   "initializer_applications,cn_residual,energy,gradient_norm,wall_s");
      for (const auto& column : extra_columns_) std::fprintf(csv_, ",%s", column.c_str());
      for (const int p : phases_) std::fprintf(csv_, ",t_%s", PhaseName(p).c_str());
      std::fprintf(csv_, "\n");
      std::fflush(csv_);
    }
  }
  error = MessageOfAnyRank(comm_, error);
  if (!error.empty()) throw IoError(error);
  csv_path_ = csv_path;
  ResetPhaseTimes();
}

StepStats::~StepStats() {
  if (csv_) std::fclose(csv_);
}

void StepStats::Record(const StepRow& r) {
  const int n_phases = static_cast<int>(phases_.size());
  std::vector<double> local(n_phases), max(n_phases);
  for (int k = 0; k < n_phases; ++k) local[k] = PhaseSeconds(phases_[k]);
  MPI_Reduce(local.data(), max.data(), n_phases, MPI_DOUBLE, MPI_MAX, 0, comm_);
  ResetPhaseTimes();
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::string error;
  if (rank == 0) error = Print(r, max);
  // Rank 0 alone writes; every rank learns whether it could.
  error = MessageOfAnyRank(comm_, error);
  if (!error.empty()) throw IoError(error);
}

std::string StepStats::Print(const StepRow& r, const std::vector<double>& max) {
  const int n_phases = static_cast<int>(phases_.size());
  if (print_) {
    std::printf("step %6ld  t %.6f  dt %.4e  %s %3d  inner %5d", r.step, r.t, r.dt,
                r.method.c_str(), r.outer_iterations, r.inner_iterations);
    if (r.initializer_applications > 0) std::printf("  init %3d", r.initializer_applications);
    std::printf("  cn %.2e  E %+.8e  %.3f s", r.cn_residual, r.energy, r.wall);
    for (size_t k = 0; k < extra_columns_.size() && k < r.extra.size(); ++k)
      std::printf("  %s %g", extra_columns_[k].c_str(), r.extra[k]);
    std::printf("%s\n", r.halvings > 0 ? "  (dt halved)" : "");
    std::fflush(stdout);
  }
  if (csv_) {
    std::fprintf(csv_, "%ld,%.17g,%.17g,%d,%s,%d,%d,%d,%.6e,%.17g,%.6e,%.6f", r.step, r.t, r.dt,
                 r.halvings, r.method.c_str(), r.outer_iterations, r.inner_iterations,
                 r.initializer_applications, r.cn_residual, r.energy, r.gradient_norm, r.wall);
    for (size_t k = 0; k < extra_columns_.size(); ++k)
      std::fprintf(csv_, ",%.10g", k < r.extra.size() ? r.extra[k] : 0.0);
    for (int k = 0; k < n_phases; ++k) std::fprintf(csv_, ",%.6f", max[k]);
    std::fprintf(csv_, "\n");
    if (std::fflush(csv_) != 0 || std::ferror(csv_))
      return "cannot write " + csv_path_ + ": " + std::strerror(errno);
  }
  return "";
}

}  // namespace optistep
