// optistep: implicit elastodynamics with large time steps, each step an optimization.
//
//   mpirun -np N optistep run scene.yaml [--set key.path=value ...] [--restart latest]
//                         [PETSc options]
//   optistep check scene.yaml [--set ...]
//   optistep partition scene.yaml --ranks N
//   optistep keys [--format markdown]
//
// Exit codes (docs/user/running.md, "Exit codes"): 0 success (also a run stopped by SIGTERM/SIGUSR1 after
// its checkpoint), 1 bad input (one line on stderr naming the file and key or element, or
// the option; also --restart with no loadable checkpoint), 2 a time step that failed after
// every allowed dt halving, 3 internal error, 4 the output folder cannot be written, 5 the
// output folder is in use by another run; 59 is PETSc's signal handler aborting (a crash,
// SIGHUP, SIGQUIT).
#include <petscsys.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "app/CommandLine.hpp"
#include "app/FemSimulation.hpp"
#include "app/LogCsv.hpp"
#include "app/MpmSimulation.hpp"
#include "app/ParticleSimulation.hpp"
#include "core/BlasThreads.hpp"
#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "io/Hdf5File.hpp"
#include "io/OutputLock.hpp"
#include "model/SceneMesh.hpp"

#ifndef OPTISTEP_GIT_DESCRIBE
#define OPTISTEP_GIT_DESCRIBE "unknown"  // git describe of the source, set by CMake
#endif

namespace {

using namespace optistep;

void PrintSummary(MPI_Comm comm, const SceneConfig& scene, FemSimulation& sim) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const DistributedTetMesh& m = sim.model().mesh();
  const PartitionQuality& q = sim.partition_quality();
  PetscPrintf(comm,
              "optistep %s: scene '%s' (%s) on %d rank%s\n"
              "  %zu bod%s, %ld nodes, %ld tets, %ld Dirichlet nodes, total mass %.6g kg\n"
              "  dt %.6g s, frame dt %.6g s, %d frames, integrator %s\n"
              "  partition: edge cut %lld, node imbalance %.3f, ghost ratio %.3f\n",
              OPTISTEP_VERSION, scene.name.c_str(), scene.path.c_str(), size,
              size == 1 ? "" : "s", scene.bodies.size(), scene.bodies.size() == 1 ? "y" : "ies",
              static_cast<long>(m.n_global_nodes), static_cast<long>(m.n_global_tets),
              static_cast<long>(sim.model().ConstrainedCount()), sim.model().TotalMass(),
              scene.time.dt, scene.time.frame_dt, scene.time.frames,
              sim.integrator().Describe().c_str(),
              static_cast<long long>(q.edge_cut), q.node_imbalance, q.ghost_ratio);
  PetscPrintf(comm, "  %s\n", DescribeBlasThreads(comm).c_str());
}

void PrintSummary(MPI_Comm comm, const SceneConfig& scene, ParticleSimulation& sim) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::string owned;
  for (std::int64_t n : sim.chains().owned_per_rank()) owned += (owned.empty() ? "" : " ") + std::to_string(n);
  PetscPrintf(comm,
              "optistep %s: particle scene '%s' (%s) on %d rank%s\n"
              "  %zu chain%s, %zu cloth%s, %lld particles (owned per rank: %s)\n"
              "  dt %.6g s, frame dt %.6g s, %d frames, integrator %s\n",
              OPTISTEP_VERSION, scene.name.c_str(), scene.path.c_str(), size, size == 1 ? "" : "s",
              scene.chains.size(), scene.chains.size() == 1 ? "" : "s", scene.cloths.size(),
              scene.cloths.size() == 1 ? "" : "s",
              static_cast<long long>(sim.particle_count()), owned.c_str(), scene.time.dt,
              scene.time.frame_dt, scene.time.frames, sim.integrator().Describe().c_str());
  PetscPrintf(comm, "  %s\n", DescribeBlasThreads(comm).c_str());
}

void PrintSummary(MPI_Comm comm, const SceneConfig& scene, MpmSimulation& sim) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  PetscPrintf(comm,
              "optistep %s: MPM scene '%s' (%s) on %d rank%s\n"
              "  %zu bod%s, %lld particles, dx %.6g m, %d particles per cell\n"
              "  frame dt %.6g s, %d frames, CFL %.3g, integrator %s%s\n"
              "  memory: %.3g to %.3g GB estimated, %.3g GB available on %d node%s (%s)\n",
              OPTISTEP_VERSION, scene.name.c_str(), scene.path.c_str(), size, size == 1 ? "" : "s",
              scene.bodies.size(), scene.bodies.size() == 1 ? "y" : "ies", sim.particle_count(),
              scene.mpm.dx, scene.mpm.ppc, scene.time.frame_dt, scene.time.frames, scene.mpm.cfl,
              sim.integrator().Describe().c_str(),
              scene.mpm.matrix_free ? " (matrix-free Hessian)" : "",
              sim.memory_estimate().run_bytes_low / 1e9, sim.memory_estimate().run_bytes_high / 1e9,
              sim.available_memory().total / 1e9,
              sim.available_memory().nodes, sim.available_memory().nodes == 1 ? "" : "s",
              sim.available_memory().source.c_str());
  PetscPrintf(comm, "  %s\n", DescribeBlasThreads(comm).c_str());
}

/// `check` stops after set-up (nothing written); `run` runs every frame.
template <class Simulation>
int CheckOrRun(MPI_Comm comm, const SceneConfig& scene, const CommandLine& cl, Simulation& sim) {
  if (cl.command == "check") {
    // Some values are judged only when the first step sets up its solvers: check takes
    // that step too, so what check accepts, run accepts.
    sim.AdvanceStep(nullptr);
    PetscPrintf(comm, "optistep: %s is valid (its first step was taken; nothing was written)\n",
                scene.path.c_str());
    return 0;
  }
  PetscPrintf(comm, "  output: %s\n", scene.output.directory.c_str());
  RunOptions options;
  options.print = !cl.quiet;
  options.restart = cl.restart;
  options.allow_scene_change = cl.allow_scene_change;
  options.sigterm_grace = cl.sigterm_grace;
  // Every object that reads options exists once the first step is done.
  bool reported = false;
  const auto report_unused_options = [&] {
    if (!reported) ReportUnusedOptions(comm, cl.strict_options);
    reported = true;
  };
  options.after_step = [&](long) { report_unused_options(); };
  if (sim.Run(options) == RunOutcome::kFinished) report_unused_options();
  return 0;
}

/// Whether the output folder holds anything (an earlier run's frames, checkpoints, ...).
/// Collective; rank 0 looks.
bool FolderHoldsFiles(MPI_Comm comm, const std::string& directory) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int holds = 0;
  if (rank == 0) {
    std::error_code ignored;
    holds = std::filesystem::is_directory(directory, ignored) &&
            !std::filesystem::is_empty(directory, ignored);
  }
  MPI_Bcast(&holds, 1, MPI_INT, 0, comm);
  return holds != 0;
}

/// A run from t = 0 into a folder that holds files (another run's output), and any run
/// with --strict-options, first takes one step on a copy of the simulation that is then
/// discarded: some values are judged, and some PETSc options read, only when the first
/// step sets up its solvers (the initializer against the discretization, the multigrid's
/// levels against the grid, DOT's subdomains against the partition, the factorization
/// packages), and a refusal must come before the run writes anything into a folder whose
/// files it would replace. An empty or new folder loses nothing: the run itself stops
/// there. With --strict-options, an option set but never used stops the run here. (A
/// restart continues its own folder: it is checked after its first step.)
template <class Simulation>
void ProbeFirstStep(MPI_Comm comm, const SceneConfig& scene, const CommandLine& cl) {
  if (cl.command != "run" || !cl.restart.empty()) return;
  if (!cl.strict_options && !FolderHoldsFiles(comm, scene.output.directory)) return;
  Simulation probe(comm, scene);
  probe.AdvanceStep(nullptr);
  if (cl.strict_options) ReportUnusedOptions(comm, true);
}

int RunCommand(const CommandLine& cl) {
  MPI_Comm comm = PETSC_COMM_WORLD;
  const SceneConfig scene = ReadSceneConfig(cl.scene, cl.overrides);
  InsertScenePetscOptions(scene.petsc_options);
  if (cl.command == "partition" && scene.discretization == Discretization::kParticles)
    throw InputError(scene.path + ": optistep partition reports tet-mesh partitions; the chains "
                     "of a particle scene are not partitioned (every rank steps all of them)");
  if (cl.command == "partition" && scene.discretization == Discretization::kMpm)
    throw InputError(scene.path + ": optistep partition reports tet-mesh partitions; MPM grids "
                     "are partitioned at run time (see the per-step imbalance)");
  if (cl.command == "partition") {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
      const GlobalTetMesh mesh = AssembleSceneMesh(scene);
      const PartitionQuality q = EvaluatePartition(mesh, cl.ranks);
      std::printf("%s: %zu nodes, %zu tets, %d parts (METIS_PartMeshDual, ncommon = 3)\n",
                  scene.path.c_str(), mesh.X.size(), mesh.tets.size(), cl.ranks);
      std::printf("edge cut %lld, node imbalance %.3f, tet imbalance %.3f, ghost ratio %.3f\n",
                  static_cast<long long>(q.edge_cut), q.node_imbalance, q.tet_imbalance,
                  q.ghost_ratio);
      std::printf("%6s %10s %10s %10s\n", "rank", "nodes", "tets", "ghosts");
      for (int r = 0; r < q.ranks; ++r)
        std::printf("%6d %10lld %10lld %10lld\n", r, static_cast<long long>(q.owned_nodes[r]),
                    static_cast<long long>(q.counted_tets[r]),
                    static_cast<long long>(q.ghost_nodes[r]));
    }
    return 0;
  }
  if (scene.discretization == Discretization::kMpm) {
    ProbeFirstStep<MpmSimulation>(comm, scene, cl);
    MpmSimulation sim(comm, scene);
    PrintSummary(comm, scene, sim);
    return CheckOrRun(comm, scene, cl, sim);
  }
  if (scene.discretization == Discretization::kParticles) {
    ProbeFirstStep<ParticleSimulation>(comm, scene, cl);
    ParticleSimulation sim(comm, scene);
    PrintSummary(comm, scene, sim);
    return CheckOrRun(comm, scene, cl, sim);
  }
  ProbeFirstStep<FemSimulation>(comm, scene, cl);
  FemSimulation sim(comm, scene);
  PrintSummary(comm, scene, sim);
  return CheckOrRun(comm, scene, cl, sim);
}

/// Before MPI starts: whether this process is the first rank of its launch, by the
/// variables the launchers set (Open MPI's mpiexec, PMIx and PMI launchers, SLURM's srun),
/// or a process started alone. Only it prints what every rank would print alike.
bool FirstRankOfLaunch() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* rank = std::getenv(name)) return std::strcmp(rank, "0") == 0;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CommandLine cl;
  std::string usage_error;
  try {
    cl = ParseCommandLine(argc, argv);
  } catch (const InputError& e) {
    usage_error = e.what();
  }
  if (cl.help || cl.version || !usage_error.empty()) {
    if (FirstRankOfLaunch()) {
      if (cl.version) std::printf("optistep %s (commit %s)\n", OPTISTEP_VERSION, OPTISTEP_GIT_DESCRIBE);
      if (cl.help) std::fputs(UsageText(), stdout);
      if (!usage_error.empty())
        std::fprintf(stderr, "optistep: error: %s; see optistep --help\n", usage_error.c_str());
    }
    return usage_error.empty() ? 0 : 1;
  }
  if (cl.command == "keys") {  // no MPI: the schema is the same everywhere
    if (FirstRankOfLaunch()) std::fputs(KeysText().c_str(), stdout);
    return 0;
  }

  LimitBlasThreads();
  std::vector<char*> petsc_argv = cl.PetscArgv(argv[0]);
  int petsc_argc = static_cast<int>(petsc_argv.size()) - 1;
  char** petsc_args = petsc_argv.data();
  if (PetscInitialize(&petsc_argc, &petsc_args, nullptr, nullptr) != 0) return 3;
  StartPhaseLogging();
  int rank = 0;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  int status = 0;
  try {
    StartLogCsv();
    status = RunCommand(cl);
    WriteLogCsv();  // -optistep_log_csv: PETSc's event log, machine-readable
  } catch (const InputError& e) {
    if (rank == 0) std::fprintf(stderr, "optistep: error: %s\n", e.what());
    status = 1;
  } catch (const IoError& e) {
    if (rank == 0) std::fprintf(stderr, "optistep: error: %s\n", e.what());
    status = 4;
    if (Hdf5File::FailedWriteLeftFileOpen()) {  // MPI_Finalize would wait forever
      std::fflush(stderr);
      MPI_Abort(PETSC_COMM_WORLD, status);
    }
  } catch (const OutputLocked& e) {
    if (rank == 0) std::fprintf(stderr, "optistep: error: %s\n", e.what());
    status = 5;
  } catch (const StepFailure& e) {
    if (rank == 0)
      std::fprintf(stderr, "optistep: error: time step failed: %s (frames written so far are kept%s%s)\n",
                   e.what(), e.remedy().empty() ? "" : "; ", e.remedy().c_str());
    status = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "optistep: internal error on rank %d: %s\n", rank, e.what());
    MPI_Abort(PETSC_COMM_WORLD, 3);
  }
  PetscFinalize();
  return status;
}
