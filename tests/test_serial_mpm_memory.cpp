// The MPM memory estimate (mpm/MemoryEstimate) and the available memory
// (core/AvailableMemory). Reference numbers: the particles a sampling really makes and the
// grid nodes their stencils really reach (mpm/Sampling, mpm/BSpline), and the maximum
// resident set that /usr/bin/time -v reported for whole runs of configs/ scenes on one
// rank (the table below). The refusal itself, end to end, is in test_serial_cli.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <tuple>

#include "core/Error.hpp"
#include "mpm/BSpline.hpp"
#include "mpm/MemoryEstimate.hpp"
#include "mpm/Sampling.hpp"

namespace optistep::mpm {
namespace {

BodyExtent ExtentOf(const Shape& shape) { return {shape.Volume(), shape.Bounds()}; }

/// The distinct grid nodes the quadratic B-spline stencils of the particles reach.
std::size_t StencilNodes(const SampledParticles& p, double dx) {
  std::set<std::tuple<int, int, int>> nodes;
  for (const Vec3& x : p.x) {
    const Stencil s = MakeStencil(x, dx);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k) nodes.emplace(s.base[0] + i, s.base[1] + j, s.base[2] + k);
  }
  return nodes.size();
}

TEST(MemoryEstimate, CountsOfAGridAlignedBoxAreExact) {
  const double dx = 0.125;  // the faces lie on grid planes: every cell is full
  const Box box(Vec3(0, 0, 0), Vec3(1.0, 0.5, 0.375));
  const int ppc = 8;
  const MemoryEstimate e = EstimateMemory({ExtentOf(box)}, dx, ppc, false, 1);
  const SampledParticles p = Sample(box, dx, ppc, 3);
  EXPECT_DOUBLE_EQ(e.particles, static_cast<double>(p.x.size()));
  EXPECT_DOUBLE_EQ(e.grid_nodes_low, 8 * 4 * 3);
  // The nodes whose stencil support meets the box; the particles reach all but a few at
  // the corners (where no particle of a cell may lie in the outer half on every axis).
  EXPECT_DOUBLE_EQ(e.grid_nodes_high, 11 * 7 * 6);
  const double nodes = static_cast<double>(StencilNodes(p, dx));
  EXPECT_LE(nodes, e.grid_nodes_high);
  EXPECT_GE(nodes, 0.99 * e.grid_nodes_high);
}

TEST(MemoryEstimate, ABallsParticlesAreItsVolumeAndItsNodesLieBetweenTheBounds) {
  const double dx = 0.05;
  const Sphere ball(Vec3(0.1, 0.8, -0.2), 0.5);  // 10 cells of radius
  const int ppc = 8;
  const MemoryEstimate e = EstimateMemory({ExtentOf(ball)}, dx, ppc, false, 1);
  const SampledParticles p = Sample(ball, dx, ppc, 5);
  EXPECT_NEAR(e.particles / static_cast<double>(p.x.size()), 1.0, 0.01);
  const double nodes = static_cast<double>(StencilNodes(p, dx));
  EXPECT_GT(nodes, e.grid_nodes_low);
  EXPECT_LT(nodes, e.grid_nodes_high);
  EXPECT_NEAR(nodes / e.grid_nodes_high, 0.58, 0.01) << "mpm/MemoryEstimate.hpp's figure";
}

/// A run measured with /usr/bin/time -v (maximum resident set size, KiB) on one rank, and
/// its bodies.
struct MeasuredRun {
  const char* what;
  std::vector<BodyExtent> bodies;
  double dx;
  int ppc;
  bool matrix_free;
  double max_rss_kib;
};

/// The three boxes of configs/hot_twisting_bar*.yaml.
std::vector<BodyExtent> TwistingBar() {
  std::vector<BodyExtent> boxes;
  for (double y : {0.0, 0.3, 0.6}) boxes.push_back(ExtentOf(Box(Vec3(-0.06, y, -0.06), Vec3(0.06, y + 0.3, 0.06))));
  return boxes;
}

TEST(MemoryEstimate, BracketsTheMemoryOfMeasuredRuns) {
  const std::vector<BodyExtent> bar = TwistingBar();
  const std::vector<BodyExtent> snowball = {ExtentOf(Sphere(Vec3(0, 0.8, 0), 0.1))};
  // optistep run <scene> --set time.frames=1 [--set ...], the binary of this estimate's
  // commit; the fine bar at time.frame_rate=480 (one step).
  const MeasuredRun runs[] = {
      {"hot_twisting_bar_coarse dx 0.015", bar, 0.015, 8, false, 182028},
      {"hot_twisting_bar_coarse dx 0.015 matrix-free", bar, 0.015, 8, true, 92588},
      {"hot_twisting_bar_coarse dx 0.03", bar, 0.03, 8, false, 71160},
      {"hot_twisting_bar_coarse dx 0.03 matrix-free", bar, 0.03, 8, true, 54020},
      {"hot_twisting_bar_coarse dx 0.06", bar, 0.06, 8, false, 53868},
      {"hot_twisting_bar_coarse dx 0.06 matrix-free", bar, 0.06, 8, true, 49424},
      {"hot_twisting_bar ppc 1", bar, 0.0075, 1, false, 811848},
      {"hot_twisting_bar ppc 1 matrix-free", bar, 0.0075, 1, true, 116384},
      {"hot_twisting_bar", bar, 0.0075, 8, false, 950368},
      {"hot_twisting_bar matrix-free", bar, 0.0075, 8, true, 381772},
      {"hot_twisting_bar ppc 27", bar, 0.0075, 27, false, 1321424},
      {"hot_twisting_bar ppc 27 matrix-free", bar, 0.0075, 27, true, 1102700},
      {"snowball (28 steps)", snowball, 0.01, 8, false, 236984},
  };
  for (const MeasuredRun& run : runs) {
    const MemoryEstimate e = EstimateMemory(run.bodies, run.dx, run.ppc, run.matrix_free, 1);
    const double measured = 1024.0 * run.max_rss_kib;
    // 2%: the smallest runs are the program itself, which kBytesPerRank rounds.
    EXPECT_LE(0.98 * e.run_bytes_low, measured) << run.what;
    EXPECT_GE(1.02 * e.run_bytes_high, measured) << run.what;
    EXPECT_LT(e.setup_bytes, measured) << run.what << ": on one rank, set-up is part of the run";
  }
}

/// The InputError message of CheckMemory, "" if it throws none.
std::string Refusal(const MemoryEstimate& e, const AvailableMemory& available) {
  try {
    CheckMemory(e, available, "scenes/snowball.yaml", 1e-4, 8);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(MemoryEstimate, ATypoInDxIsRefusedWithOneLineNamingTheKeys) {
  const std::vector<BodyExtent> snowball = {ExtentOf(Sphere(Vec3(0, 0.8, 0), 0.1))};
  AvailableMemory node;
  node.total = node.rank0_node = 16e9;
  node.source = "MemAvailable in /proc/meminfo";
  EXPECT_EQ(Refusal(EstimateMemory(snowball, 0.01, 8, false, 4), node), "") << "the scene as written";
  const MemoryEstimate typo = EstimateMemory(snowball, 1e-4, 8, false, 4);
  const std::string message = Refusal(typo, node);
  for (const char* piece : {"scenes/snowball.yaml: ", "mpm.dx = 0.0001 m", "mpm.ppc = 8", "3.35e+10 particles",
                            "GB", "more than the 16 GB available on the run's 1 node",
                            "(MemAvailable in /proc/meminfo)", "expected a larger mpm.dx or a smaller mpm.ppc"})
    EXPECT_NE(message.find(piece), std::string::npos) << message << "\nlacks: " << piece;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  // 10000 nodes of 16 GB would hold the run, but rank 0 alone samples every particle.
  AvailableMemory cluster = node;
  cluster.nodes = 10000;
  cluster.total = 10000 * node.total;
  EXPECT_GT(cluster.total, typo.run_bytes_high);
  EXPECT_NE(Refusal(typo, cluster).find("rank 0 needs at least 3.35e+04 GB, more than the 16 GB available on its node"),
            std::string::npos)
      << Refusal(typo, cluster);
}

TEST(AvailableMemory, IsPositiveAndAtMostThePhysicalMemory) {
  std::string source;
  const double bytes = NodeAvailableMemory(&source);
  const double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  EXPECT_GT(bytes, 0.0);
  EXPECT_LE(bytes, physical);
  EXPECT_EQ(source, "MemAvailable in /proc/meminfo") << "Linux has had it since 3.14";
  const AvailableMemory run = QueryAvailableMemory(MPI_COMM_WORLD);
  EXPECT_EQ(run.nodes, 1);
  EXPECT_EQ(run.total, run.rank0_node);
  EXPECT_NEAR(run.total / bytes, 1.0, 0.05) << "read twice, a moment apart";
}

}  // namespace
}  // namespace optistep::mpm
