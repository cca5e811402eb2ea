// fem_kernel_bench: throughput of the FEM element kernels, in tets per second on one core.
//
//   fem_kernel_bench SCENE.yaml [--reps N] [--set key.path=value ...] [--benchmark_* ...]
//
// Loads the scene's bodies through the library (ReadSceneConfig, AssembleSceneMesh), puts
// every node at a fixed, deterministic deformed position (a stretch and rotation plus a
// per-node perturbation of 10% of the mean edge length, so F is never trivially the
// identity), and times with Google Benchmark, over all tets, the kernels of one Newton
// iteration exactly as FemIncrementalPotential uses them (Sifakis and Barbic 2012, Sec. 4):
//   energy_gradient  F = sum_a x_a beta_a^T, Psi and P = PsiAndP(F), f_a = V P beta_a
//   hessian          dP/dF projected to SPD (Teran et al. 2005), K_e = V B^T dP/dF B (12x12)
//   total            both, as one pass
// One iteration is one pass over all tets; Google Benchmark repeats passes until a
// repetition lasts --benchmark_min_time (0.5 s by default), and runs N repetitions
// (--reps N, default 5, the same as --benchmark_repetitions=N). The counter tets_per_s is
// tets times passes over CPU seconds. The scene, nodes, tets and material are in the
// context (the console header, and "context" of --benchmark_out=FILE
// --benchmark_out_format=json, which scripts/optistep_bench reads).
// No MPI, no PETSc objects and no assembly: this is the per-element arithmetic only, the
// part of OsGradient and OsHessian that scales with the tet count.
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "BenchUtil.hpp"
#include "core/Error.hpp"
#include "fem/TetElement.hpp"
#include "app/SceneConfig.hpp"
#include "materials/Material.hpp"
#include "model/SceneMesh.hpp"

namespace {

using namespace optistep;
using Beta = Eigen::Matrix<double, 3, 4>;

/// A deterministic value in [-1, 1) from a node id and a component.
double Hash(std::uint64_t id, int component) {
  return bench::SplitMixUnit(id * 3 + static_cast<std::uint64_t>(component));
}

struct Element {
  std::array<int, 4> nodes;
  Beta beta;
  double V0;
  const ElasticMaterial* material;
};

int Usage() {
  std::fprintf(stderr, "usage: fem_kernel_bench SCENE.yaml [--reps N] [--set k=v ...] "
                       "[--benchmark_* ...]\n");
  return 1;
}

int Run(int argc, char** argv) {
  const std::vector<std::string> args =
      bench::InitializeBenchmark(argc, argv, {"--benchmark_repetitions=5"});
  std::string scene_path;
  std::vector<std::string> overrides;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--set" && i + 1 < args.size()) {
      overrides.push_back(args[++i]);
    } else if (scene_path.empty() && !args[i].empty() && args[i][0] != '-') {
      scene_path = args[i];
    } else {
      return Usage();
    }
  }
  if (scene_path.empty()) return Usage();

  const SceneConfig scene = ReadSceneConfig(scene_path, overrides);
  const GlobalTetMesh mesh = AssembleSceneMesh(scene);
  std::vector<std::unique_ptr<ElasticMaterial>> materials;
  for (const BodyConfig& body : scene.bodies)
    materials.push_back(MakeMaterial(
        body.material.model,
        LameParameters::FromYoungPoisson(body.material.E, body.material.nu)));

  std::vector<Element> elements(mesh.tets.size());
  double volume = 0.0;
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    const auto& t = mesh.tets[e];
    Mat3 Dm;
    for (int a = 1; a < 4; ++a) Dm.col(a - 1) = mesh.X[t[a]] - mesh.X[t[0]];
    elements[e] = {t, ShapeGradients(Dm.inverse()), std::abs(Dm.determinant()) / 6.0,
                   materials[mesh.tet_body[e]].get()};
    volume += elements[e].V0;
  }
  // Edge length of a regular tet of the mean volume: V = h^3 / (6 sqrt 2).
  const double h = std::cbrt(6.0 * std::sqrt(2.0) * volume / elements.size());
  const Mat3 A = Eigen::AngleAxisd(0.3, Vec3(1, 2, 3).normalized()).toRotationMatrix() *
                 Vec3(1.2, 0.9, 0.95).asDiagonal();
  std::vector<Vec3> x(mesh.X.size());
  for (size_t n = 0; n < x.size(); ++n)
    x[n] = A * mesh.X[n] + 0.1 * h * Vec3(Hash(n, 0), Hash(n, 1), Hash(n, 2));

  auto positions = [&](const Element& el) {
    return std::array<Vec3, 4>{x[el.nodes[0]], x[el.nodes[1]], x[el.nodes[2]], x[el.nodes[3]]};
  };
  auto energy_gradient = [&](const Element& el, double* psi) {
    const Mat3 F = DeformationGradient(positions(el), el.beta);
    Mat3 P;
    *psi = el.V0 * el.material->PsiAndP(F, &P);
    const Beta forces = el.V0 * P * el.beta;  // dPsi/dx_a = V P beta_a
    return forces.sum();
  };
  auto hessian = [&](const Element& el) {
    const Mat3 F = DeformationGradient(positions(el), el.beta);
    const Mat9 dPdF = el.material->dPdF(F, true);
    const Eigen::Matrix<double, 9, 12> B = DeformationGradientJacobian(el.beta);
    const Mat12 K = el.V0 * (B.transpose() * dPdF * B);
    return K.trace();
  };

  // Google Benchmark runs these after Run's set-up, while the objects they capture live.
  const double n = static_cast<double>(elements.size());
  auto pass = [&](const char* name, auto tet_kernel) {
    benchmark::RegisterBenchmark(name, [&, tet_kernel](benchmark::State& state) {
      for (auto _ : state) {
        double s = 0.0;
        for (const Element& el : elements) s += tet_kernel(el);
        benchmark::DoNotOptimize(s);
      }
      state.counters["tets_per_s"] =
          benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate);
    });
  };
  pass("energy_gradient", [&](const Element& el) {
    double psi = 0.0;
    return energy_gradient(el, &psi) + psi;
  });
  pass("hessian", [&](const Element& el) { return hessian(el); });
  pass("total", [&](const Element& el) {
    double psi = 0.0;
    return energy_gradient(el, &psi) + psi + hessian(el);
  });
  benchmark::AddCustomContext("scene", scene.path);
  benchmark::AddCustomContext("nodes", std::to_string(mesh.X.size()));
  benchmark::AddCustomContext("tets", std::to_string(elements.size()));
  benchmark::AddCustomContext("material", scene.bodies.front().material.model);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const optistep::InputError& e) {
    std::fprintf(stderr, "fem_kernel_bench: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fem_kernel_bench: internal error: %s\n", e.what());
    return 3;
  }
}
