#include "mpm/Sampling.hpp"

#include <cmath>
#include <sstream>

#include "core/Error.hpp"

namespace optistep::mpm {

namespace {

constexpr int kCellBits = 18;  // per axis; with 9 slot bits, 3 * 18 + 9 = 63 bits
constexpr int kSlotBits = 9;   // 2^9 = kMaxParticlesPerCell
constexpr int64_t kCellOffset = int64_t{1} << (kCellBits - 1);
static_assert(kMaxParticlesPerCell == 1 << kSlotBits);

std::string Text(double x) {
  std::ostringstream out;
  out.precision(17);
  out << x;
  return out.str();
}

/// SplitMix64's output function (Steele, Lea, Flood 2014, "Fast splittable pseudorandom
/// number generators"): a bijective 64-bit mix. Written out rather than taken from
/// <random>, whose distributions differ between standard libraries.
uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;  // SplitMix64's increment

/// The SplitMix64 stream of one grid cell, seeded by (seed, i, j, k) only.
class CellStream {
 public:
  CellStream(uint64_t seed, int i, int j, int k) {
    state_ = Mix(seed + kGolden);
    for (int index : {i, j, k}) state_ = Mix(state_ ^ (static_cast<uint64_t>(index) + kGolden));
  }
  /// An offset in (0, 1): (m + 1/2) 2^-32 with m uniform in [0, 2^32). With 32 bits,
  /// i + offset is exact in double for |i| < 2^20, so a candidate never rounds onto a
  /// cell face.
  double Offset() {
    const uint64_t r = Mix(state_ += kGolden);
    return (static_cast<double>(r >> 32) + 0.5) * 0x1p-32;
  }

 private:
  uint64_t state_;
};

int64_t ParticleId(int i, int j, int k, int s) {
  int64_t key = k + kCellOffset;
  key = (key << kCellBits) | (j + kCellOffset);
  key = (key << kCellBits) | (i + kCellOffset);
  return (key << kSlotBits) | s;
}

}  // namespace

SampledParticles SampleInside(const std::function<bool(const Vec3&)>& inside, const Aabb& region,
                              double dx, int ppc, uint64_t seed, const std::string& name) {
  if (!(dx > 0.0 && std::isfinite(dx)))
    throw InputError(name + ": grid spacing dx = " + Text(dx) + ", expected a positive finite length (m)");
  if (ppc < 1 || ppc > kMaxParticlesPerCell)
    throw InputError(name + ": particles per cell ppc = " + std::to_string(ppc) + ", expected 1 to " +
                     std::to_string(kMaxParticlesPerCell));
  Eigen::Vector3i first, last;
  for (int d = 0; d < 3; ++d) {
    const char* axis = d == 0 ? "x" : d == 1 ? "y" : "z";
    if (!std::isfinite(region.lo[d]) || !std::isfinite(region.hi[d]) || region.lo[d] > region.hi[d])
      throw InputError(name + ": sampling region " + axis + " from " + Text(region.lo[d]) + " to " +
                       Text(region.hi[d]) + ", expected finite bounds with lo <= hi (m)");
    const double lo = std::floor(region.lo[d] / dx);
    const double hi = std::ceil(region.hi[d] / dx) - 1.0;
    if (lo < -kCellOffset || hi >= kCellOffset)
      throw InputError(name + ": " + axis + " from " + Text(region.lo[d]) + " to " + Text(region.hi[d]) +
                       " m spans grid cells beyond index +-2^17 at dx = " + Text(dx) +
                       " m, which particle ids cannot encode; expected a larger dx or a body nearer the origin");
    first[d] = static_cast<int>(lo);
    last[d] = static_cast<int>(hi);
  }

  SampledParticles particles;
  for (int k = first.z(); k <= last.z(); ++k)
    for (int j = first.y(); j <= last.y(); ++j)
      for (int i = first.x(); i <= last.x(); ++i) {
        CellStream stream(seed, i, j, k);
        for (int s = 0; s < ppc; ++s) {
          // Drawn for every candidate, kept or not, so candidate s is the same whatever
          // the region and the shape.
          const double u = stream.Offset(), v = stream.Offset(), w = stream.Offset();
          const Vec3 p((i + u) * dx, (j + v) * dx, (k + w) * dx);
          if ((p.array() < region.lo.array()).any() || (p.array() >= region.hi.array()).any()) continue;
          if (!inside(p)) continue;
          particles.x.push_back(p);
          particles.id.push_back(ParticleId(i, j, k, s));
        }
      }
  return particles;
}

SampledParticles Sample(const Shape& shape, double dx, int ppc, uint64_t seed) {
  SampledParticles particles = SampleInside([&shape](const Vec3& p) { return shape.Inside(p); },
                                            shape.Bounds(), dx, ppc, seed, shape.Name());
  if (particles.x.empty())
    throw InputError(shape.Name() + ": holds no particle at dx = " + Text(dx) + " m, ppc = " +
                     std::to_string(ppc) + ": shape smaller than a cell?");
  return particles;
}

// ---- TetMeshShape ------------------------------------------------------------------

namespace {

/// The tets' bounding boxes, after ValidateTets (which the grid and inverses rely on).
std::vector<Aabb> TetBoxes(const TetMeshData& mesh, const std::string& name) {
  ValidateTets(mesh, name);
  return ElementBounds(mesh.nodes, mesh.tets);
}

}  // namespace

TetMeshShape::TetMeshShape(const TetMeshData& mesh, std::string name)
    : name_(std::move(name)), grid_(TetBoxes(mesh, name_), /*items_per_bin=*/2.0) {
  tets_.reserve(mesh.tets.size());
  for (const auto& tet : mesh.tets) {
    const Vec3& x0 = mesh.nodes[tet[0]];
    Mat3 edges;
    for (int c = 0; c < 3; ++c) edges.col(c) = mesh.nodes[tet[c + 1]] - x0;
    tets_.push_back({x0, edges.inverse()});
    volume_ += std::abs(edges.determinant()) / 6.0;
  }
}

bool TetMeshShape::Inside(const Vec3& x) const {
  const Aabb& box = grid_.Bounds();
  if ((x.array() <= box.lo.array()).any() || (x.array() >= box.hi.array()).any()) return false;
  constexpr double kTolerance = 1e-12;
  const int b = grid_.Index(grid_.BinOf(x));
  for (const int* it = grid_.Begin(b); it != grid_.End(b); ++it) {
    const Tet& tet = tets_[*it];
    const Vec3 lambda = tet.inverse_edges * (x - tet.x0);  // barycentric coordinates 1..3
    if (lambda.minCoeff() >= -kTolerance && lambda.sum() <= 1.0 + kTolerance) return true;
  }
  return false;
}

}  // namespace optistep::mpm
