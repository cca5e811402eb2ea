#pragma once
// Helpers of the kernel benchmarks (bench/*_bench.cpp): deterministic pseudo-random inputs
// and the Google Benchmark command line they share.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/Error.hpp"

namespace optistep::bench {

/// A deterministic value in [-1, 1) from a key (splitmix64, Steele et al. 2014).
inline double SplitMixUnit(std::uint64_t key) {
  std::uint64_t z = key + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / static_cast<double>(1ULL << 52) - 1.0;
}

/// Hands argv to benchmark::Initialize and returns the arguments it leaves (the program's
/// own options, argv[0] excluded). `--reps N` (N >= 1; the option the programs had before
/// Google Benchmark) becomes --benchmark_repetitions=N. The defaults (Google Benchmark
/// flags such as "--benchmark_repetitions=5") come first, so a later --reps or flag wins.
/// With write_file false (MPI ranks other than 0), --benchmark_out and
/// --benchmark_out_format are dropped, so that one rank alone writes the file.
/// Throws InputError on `--reps` without a count >= 1.
inline std::vector<std::string> InitializeBenchmark(int argc, char** argv,
                                                    std::vector<std::string> defaults,
                                                    bool write_file = true) {
  std::vector<std::string> args = std::move(defaults);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--reps") {
      const int reps = i + 1 < argc ? std::atoi(argv[++i]) : 0;
      if (reps < 1) throw InputError("--reps needs a count >= 1");
      args.push_back("--benchmark_repetitions=" + std::to_string(reps));
    } else if (write_file || a.rfind("--benchmark_out", 0) != 0) {
      args.push_back(a);
    }
  }
  // Google Benchmark keeps the pointer argv[0] (the context's "executable"), so it is the
  // caller's, which outlives the run; the flags' values it copies.
  std::vector<char*> pointers{argv[0]};
  for (std::string& a : args) pointers.push_back(a.data());
  int count = static_cast<int>(pointers.size());
  benchmark::Initialize(&count, pointers.data());
  return std::vector<std::string>(pointers.begin() + 1, pointers.begin() + count);
}

/// A reporter that prints nothing: the display reporter of MPI ranks other than 0.
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace optistep::bench
