#pragma once
// Helpers of the kernel benchmarks (bench/*_bench.cpp): deterministic pseudo-random inputs
// and repetition timing. Single-threaded, no MPI.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace optistep::bench {

/// A deterministic value in [-1, 1) from a key (splitmix64, Steele et al. 2014).
inline double SplitMixUnit(std::uint64_t key) {
  std::uint64_t z = key + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) / static_cast<double>(1ULL << 52) - 1.0;
}

struct Timing {
  double best = 0.0;    ///< s
  double median = 0.0;  ///< s
};

/// Runs kernel `reps` (>= 1) times, adding its results to *checksum (so the work is not
/// optimized away); seconds of the best and the median repetition.
inline Timing TimeRepetitions(int reps, const std::function<double()>& kernel, double* checksum) {
  std::vector<double> seconds;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    *checksum += kernel();
    const auto stop = std::chrono::steady_clock::now();
    seconds.push_back(std::chrono::duration<double>(stop - start).count());
  }
  std::sort(seconds.begin(), seconds.end());
  return {seconds.front(), seconds[seconds.size() / 2]};
}

}  // namespace optistep::bench
