#pragma once
// Checks that several FEM integrator suites share (test_semi_implicit, test_async): free
// fall against the parabola, the same trajectory on any ranks, bitwise restart mid-frame.
// All collective on PETSC_COMM_WORLD.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"

namespace optistep::test {

/// Runs sim to the scene's last frame: positions, velocities, time and step count.
inline std::vector<double> RunToEnd(FemSimulation& sim, const SceneConfig& scene) {
  while (sim.frame() < scene.time.frames) sim.AdvanceStep(nullptr);
  std::vector<double> state = sim.GatherPositions();
  const std::vector<double> v = sim.GatherVelocities();
  state.insert(state.end(), v.begin(), v.end());
  state.push_back(sim.time());
  state.push_back(static_cast<double>(sim.steps()));
  return state;
}

/// A box of nx x ny x nz Kuhn-split cells (1.5 x 1 x 1 m, E = 1e7 Pa) under `integrator`,
/// thrown with kFallVelocity under gravity kFallGravity: 4 frames of 0.05 s, dt 0.01 s
/// (overrides: "key=value" as MakeScene takes them).
inline const Vec3 kFallVelocity(0.5, 2.0, -0.25), kFallGravity(0, -9.81, 0);
inline SceneConfig FreeFallScene(const std::string& tag, const std::string& integrator, int nx, int ny,
                                 int nz, const std::vector<std::string>& overrides = {}) {
  const std::string dir = SharedTempDir(tag);
  WriteBoxMesh(dir + "/box", nx, ny, nz, Vec3(1.5, 1.0, 1.0));
  return MakeScene(dir + "/fall.yaml", "integrator: " + integrator + R"(
gravity: [0, -9.81, 0]
time: {dt: 0.01, frame_dt: 0.05, frames: 4}
bodies:
  - mesh: box.node
    material: {E: 1.0e7, nu: 0.3, density: 1000}
    initial_velocity: [0.5, 2.0, -0.25]
)", overrides);
}

/// Runs the scene's frames from sim's start (initial velocity v0, m/s; gravity g, m/s^2)
/// and expects x0 + v0 t + g t^2 / 2 and v0 + g t at every node to 1e-10.
inline void ExpectFreeFall(FemSimulation& sim, const SceneConfig& scene, const Vec3& v0, const Vec3& g) {
  const std::vector<double> x0 = sim.GatherPositions();
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  const double t = sim.time();
  EXPECT_DOUBLE_EQ(t, scene.time.frames * scene.time.frame_dt);
  const Vec3 shift = v0 * t + 0.5 * g * t * t, v = v0 + g * t;
  const std::vector<double> x = sim.GatherPositions(), vel = sim.GatherVelocities();
  double worst_x = 0.0, worst_v = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    worst_x = std::max(worst_x, std::abs(x[i] - (x0[i] + shift[i % 3])));
    worst_v = std::max(worst_v, std::abs(vel[i] - v[i % 3]));
  }
  EXPECT_LT(worst_x, 1e-10) << "m from x0 + v0 t + g t^2 / 2";
  EXPECT_LT(worst_v, 1e-10) << "m/s from v0 + g t";
}

/// Two runs on PETSC_COMM_WORLD are bitwise equal and within `relative` (of the largest
/// value) of a run on rank 0 alone, with the same step count. Returns the step count.
inline double ExpectSameOnAnyRanks(const SceneConfig& scene, double relative) {
  FemSimulation a(PETSC_COMM_WORLD, scene), b(PETSC_COMM_WORLD, scene);
  const std::vector<double> first = RunToEnd(a, scene), second = RunToEnd(b, scene);
  EXPECT_EQ(DifferingValues(first, second), 0u);
  std::vector<double> serial(first.size());
  if (Rank() == 0) {
    FemSimulation alone(PETSC_COMM_SELF, scene);
    serial = RunToEnd(alone, scene);
  }
  MPI_Bcast(serial.data(), static_cast<int>(serial.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double worst = 0.0, scale = 0.0;
  for (size_t i = 0; i < first.size(); ++i) {
    worst = std::max(worst, std::abs(first[i] - serial[i]));
    scale = std::max(scale, std::abs(serial[i]));
  }
  EXPECT_EQ(first.back(), serial.back()) << "the same steps";
  EXPECT_LT(worst, relative * scale) << "differs from the 1-rank run";
  return first.back();
}

/// A run checkpointed after `steps` steps (inside frame `frame`) and resumed ends bitwise
/// as the uninterrupted run.
inline void ExpectResumedBitwise(const SceneConfig& scene, long steps, int frame) {
  FemSimulation whole(PETSC_COMM_WORLD, scene);
  const std::vector<double> reference = RunToEnd(whole, scene);
  {
    FemSimulation first(PETSC_COMM_WORLD, scene);
    while (first.steps() < steps) first.AdvanceStep(nullptr);
    EXPECT_EQ(first.frame(), frame) << "the checkpoint should be mid-frame";
    first.WriteCheckpoint();
  }
  FemSimulation resumed(PETSC_COMM_WORLD, scene);
  resumed.Restart("latest", false);
  EXPECT_EQ(resumed.steps(), steps);
  EXPECT_EQ(DifferingValues(RunToEnd(resumed, scene), reference), 0u);
}

}  // namespace optistep::test
