// checkpoint_bench: how fast an MPM state is checkpointed and restored, and what a
// checkpoint costs next to a time step.
//
//   mpiexec -n 2 checkpoint_bench [--cells N] [--ppc P] [--steps S] [--reps R] [--dir D]
//                                 [--benchmark_* ...]
//
// The state: a snow box of N^3 cells (dx = 1/N m) with P particles per cell, thrown down
// at 1 m/s onto a sticky floor (defaults N = 50, P = 8: 1,000,000 particles). Timed with
// Google Benchmark, each iteration's time the maximum over ranks (manual time):
//  - step: S steps (default 1) of the run (MpmSimulation::AdvanceStep), after one untimed
//    step, as S iterations of one repetition;
//  - write: R repetitions (default 3, the same as --benchmark_repetitions=R) of one
//    checkpoint write (Simulation::WriteCheckpoint: particles to the ranks writing their id
//    rows, collective HDF5 with Fletcher32 chunks, flush, fsync, rename);
//  - restart: R repetitions of one restart from that checkpoint (Simulation::Restart on a
//    simulation set up once: open, read with checksums, particles back to their ranks at
//    their local index).
// The counters: checkpoint_bytes (the file's size) and bytes_per_second (that size over the
// time). Reads follow the write, so they come from the page cache unless the file system
// drops it: a restart after a job change reads from disk, at the disk's speed.
// Every rank runs the same iterations (the calls are collective), so the iteration counts
// are fixed and --benchmark_enable_random_interleaving is refused. Rank 0 alone prints and
// writes --benchmark_out; particles and ranks are in the context. scripts/optistep_bench
// reads the JSON (--benchmark_out_format=json) and divides the best write by the step.
#include <petscsys.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "BenchUtil.hpp"
#include "app/MpmSimulation.hpp"
#include "core/Error.hpp"
#include "core/Phases.hpp"

namespace {

using namespace optistep;

struct Options {
  int cells = 50;
  int ppc = 8;
  int steps = 1;
  std::string dir = "out/bench/checkpoint";
};

/// The program's own options (the arguments bench::InitializeBenchmark leaves).
Options Parse(const std::vector<std::string>& args) {
  Options o;
  if (args.size() % 2 != 0)
    throw InputError("checkpoint_bench: option " + args.back() + " without a value");
  for (size_t i = 0; i < args.size(); i += 2) {
    const std::string& flag = args[i];
    const std::string& value = args[i + 1];
    if (flag == "--cells") o.cells = std::atoi(value.c_str());
    else if (flag == "--ppc") o.ppc = std::atoi(value.c_str());
    else if (flag == "--steps") o.steps = std::atoi(value.c_str());
    else if (flag == "--dir") o.dir = value;
    else throw InputError("checkpoint_bench: unknown option " + flag);
  }
  if (o.cells < 1 || o.ppc < 1 || o.steps < 1)
    throw InputError("checkpoint_bench: --cells, --ppc and --steps must be >= 1");
  return o;
}

/// Collective: wall seconds of call(), the maximum over ranks.
template <class Call>
double Timed(Call&& call) {
  MPI_Barrier(PETSC_COMM_WORLD);
  const double start = MPI_Wtime();
  call();
  double seconds = MPI_Wtime() - start;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
  return seconds;
}

int Run(int argc, char** argv) {
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--benchmark_enable_random_interleaving", 0) == 0 &&
        a != "--benchmark_enable_random_interleaving=false")
      throw InputError("checkpoint_bench: --benchmark_enable_random_interleaving would run "
                       "the collective benchmarks in a different order on each rank");
  }
  // Open MPI gives the ranks a terminal, which would put colour codes into logs.
  const Options o = Parse(bench::InitializeBenchmark(
      argc, argv, {"--benchmark_repetitions=3", "--benchmark_color=false"}, rank == 0));
  const std::string scene_path = o.dir + "/box.yaml";
  if (rank == 0) {
    std::filesystem::create_directories(o.dir);
    std::ofstream(scene_path) << "discretization: mpm\n"
                              << "mpm: {dx: " << 1.0 / o.cells << ", ppc: " << o.ppc << "}\n"
                              << "time: {frame_dt: 0.01, frames: 1000}\n"
                              << "bodies:\n"
                              << "  - shape: {type: box, min: [0, 0.1, 0], max: [1, 1.1, 1]}\n"
                              << "    material: {E: 1.0e5, nu: 0.3, density: 400, "
                                 "plasticity: {model: snow}}\n"
                              << "    initial_velocity: [0, -1, 0]\n"
                              << "collision_objects:\n"
                              << "  - {type: half_space, point: [0, 0.05, 0], normal: [0, 1, 0]}\n"
                              << "output: {directory: " << o.dir << "/out, checkpoints_kept: 1}\n";
  }
  MPI_Barrier(PETSC_COMM_WORLD);
  const SceneConfig scene = ReadSceneConfig(scene_path);
  MpmSimulation sim(PETSC_COMM_WORLD, scene);
  sim.AdvanceStep(nullptr);  // the first step builds what later steps reuse
  std::string path;  // the newest checkpoint
  std::unique_ptr<MpmSimulation> restored;  // set up once, at the first restart
  auto report_bytes = [&](benchmark::State& state) {  // collective
    double bytes = 0.0;
    if (rank == 0) bytes = static_cast<double>(std::filesystem::file_size(path));
    MPI_Bcast(&bytes, 1, MPI_DOUBLE, 0, PETSC_COMM_WORLD);
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
    state.counters["checkpoint_bytes"] = bytes;
  };

  benchmark::RegisterBenchmark("step", [&](benchmark::State& state) {
    for (auto _ : state) state.SetIterationTime(Timed([&] { sim.AdvanceStep(nullptr); }));
  })->Iterations(o.steps)->Repetitions(1)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("write", [&](benchmark::State& state) {
    for (auto _ : state) state.SetIterationTime(Timed([&] { path = sim.WriteCheckpoint(); }));
    report_bytes(state);
  })->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("restart", [&](benchmark::State& state) {
    if (path.empty()) path = sim.WriteCheckpoint();  // write filtered out: untimed
    if (!restored) restored = std::make_unique<MpmSimulation>(PETSC_COMM_WORLD, scene);
    for (auto _ : state) state.SetIterationTime(Timed([&] { restored->Restart(path, false); }));
    report_bytes(state);
  })->Iterations(1)->UseManualTime()->Unit(benchmark::kMillisecond);
  benchmark::AddCustomContext("particles", std::to_string(sim.particle_count()));
  benchmark::AddCustomContext("ranks", std::to_string(size));
  bench::SilentReporter silent;
  if (rank == 0) benchmark::RunSpecifiedBenchmarks();
  else benchmark::RunSpecifiedBenchmarks(&silent);
  benchmark::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return 3;
  StartPhaseLogging();
  int status = 0;
  try {
    status = Run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", e.what());
    status = 1;
  }
  PetscFinalize();
  return status;
}
