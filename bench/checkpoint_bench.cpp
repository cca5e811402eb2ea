// checkpoint_bench: how fast an MPM state is checkpointed and restored, and what a
// checkpoint costs next to a time step.
//
//   mpiexec -n 2 checkpoint_bench [--cells N] [--ppc P] [--steps S] [--reps R] [--dir D]
//
// The state: a snow box of N^3 cells (dx = 1/N m) with P particles per cell, thrown down
// at 1 m/s onto a sticky floor (defaults N = 50, P = 8: 1,000,000 particles). Timed:
//  - S steps (default 1) of the run (MpmSimulation::AdvanceStep), after one untimed step;
//  - R checkpoint writes (default 3; Simulation::WriteCheckpoint: particles to the ranks
//    writing their id rows, collective HDF5 with Fletcher32 chunks, flush, fsync, rename);
//  - R restarts from that checkpoint (Simulation::Restart on a simulation set up once:
//    open, read with checksums, particles back to their ranks at their local index).
// Throughput is the checkpoint file's size over the best time (1 GB = 1e9 bytes). Reads
// follow the write, so they come from the page cache unless the file system drops it: a
// restart after a job change reads from disk, at the disk's speed.
// Prints a table, then lines "write_GBps x", "read_GBps x", "checkpoint_per_step x".
#include <petscsys.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/MpmSimulation.hpp"
#include "core/Error.hpp"
#include "core/Phases.hpp"

namespace {

using namespace optistep;

struct Options {
  int cells = 50;
  int ppc = 8;
  int steps = 1;
  int reps = 3;
  std::string dir = "out/bench/checkpoint";
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--cells") o.cells = std::atoi(value.c_str());
    else if (flag == "--ppc") o.ppc = std::atoi(value.c_str());
    else if (flag == "--steps") o.steps = std::atoi(value.c_str());
    else if (flag == "--reps") o.reps = std::atoi(value.c_str());
    else if (flag == "--dir") o.dir = value;
    else throw InputError("checkpoint_bench: unknown option " + flag);
  }
  if (o.cells < 1 || o.ppc < 1 || o.steps < 1 || o.reps < 1)
    throw InputError("checkpoint_bench: --cells, --ppc, --steps and --reps must be >= 1");
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

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int Run(const Options& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  MPI_Comm_size(PETSC_COMM_WORLD, &size);
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
  const double step = Timed([&] {
                        for (int s = 0; s < o.steps; ++s) sim.AdvanceStep(nullptr);
                      }) / o.steps;
  std::vector<double> writes, reads;
  std::string path;
  for (int r = 0; r < o.reps; ++r) writes.push_back(Timed([&] { path = sim.WriteCheckpoint(); }));
  MpmSimulation restored(PETSC_COMM_WORLD, scene);
  for (int r = 0; r < o.reps; ++r)
    reads.push_back(Timed([&] { restored.Restart(path, false); }));
  double bytes = 0.0;
  if (rank == 0) bytes = static_cast<double>(std::filesystem::file_size(path));
  MPI_Bcast(&bytes, 1, MPI_DOUBLE, 0, PETSC_COMM_WORLD);

  const double best_write = *std::min_element(writes.begin(), writes.end());
  const double best_read = *std::min_element(reads.begin(), reads.end());
  PetscPrintf(PETSC_COMM_WORLD,
              "checkpoint_bench: %lld particles on %d rank%s, checkpoint %.1f MB (%s)\n"
              "| | best s | median s | GB/s (best) |\n|---|---|---|---|\n"
              "| step (mean of %d) | %.3f | | |\n"
              "| checkpoint write | %.3f | %.3f | %.3f |\n"
              "| restart read | %.3f | %.3f | %.3f |\n"
              "checkpoint write / step time: %.3f\n"
              "write_GBps %.4f\nread_GBps %.4f\ncheckpoint_per_step %.4f\n",
              sim.particle_count(), size, size == 1 ? "" : "s", bytes / 1e6, path.c_str(),
              o.steps, step, best_write, Median(writes), bytes / best_write / 1e9, best_read,
              Median(reads), bytes / best_read / 1e9, best_write / step, bytes / best_write / 1e9,
              bytes / best_read / 1e9, best_write / step);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (PetscInitialize(&argc, &argv, nullptr, nullptr) != 0) return 3;
  StartPhaseLogging();
  int status = 0;
  try {
    status = Run(Parse(argc, argv));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", e.what());
    status = 1;
  }
  PetscFinalize();
  return status;
}
