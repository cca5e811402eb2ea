#pragma once
// Seeding MPM particles inside a shape, a given number per grid cell. The grid has its nodes
// at (i, j, k) dx and its cells [i dx, (i+1) dx) x ... (m). Each cell draws ppc candidate
// points from a random stream seeded by (seed, i, j, k) alone; a candidate is a particle when
// it lies inside the shape (and the sampled region), so sampling a region in pieces gives
// exactly the particles of the whole, on any rank count.
// Particle ids: id = (((k + 2^17) 2^18 + (j + 2^17)) 2^18 + (i + 2^17)) 2^9 + s, s the
// candidate's index in its cell; unique within one body and rank-count independent, not
// contiguous; increasing id is (k, j, i, s) order. Limits: cell indices in [-2^17, 2^17),
// ppc <= 512. Two bodies that share a cell reuse the same ids, so a scene of several bodies
// must tell them apart itself and should give each body its own seed.
// Each particle stands for V0_p = dx^3 / ppc (ParticleVolume): the particles' volume is a
// Monte Carlo estimate of the body's. More: docs/methods/mpm.md.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/Types.hpp"
#include "io/TetMesh.hpp"
#include "mpm/Shapes.hpp"

namespace optistep::mpm {

/// Particles seeded in a shape: positions x (m, one Vec3 per particle) and global ids
/// (see the file comment), both in increasing-id order.
struct SampledParticles {
  std::vector<Vec3> x;
  std::vector<int64_t> id;
};

/// Largest particles-per-cell count the ids can encode.
inline constexpr int kMaxParticlesPerCell = 512;

/// Initial particle volume V0_p = dx^3 / ppc (m^3), dx in m.
inline double ParticleVolume(double dx, int ppc) { return dx * dx * dx / ppc; }

/// The generic core: every particle of the cells that meet `region` whose position p
/// satisfies region.lo <= p < region.hi (half-open, so boxes that tile space split the
/// particles exactly) and inside(p). Candidate offsets within a cell are multiples of
/// 2^-32 dx plus 2^-33 dx, so no candidate lies on a cell face. An empty result is not an
/// error here: a rank's piece of a body may hold no particle (the caller sampling a whole
/// body checks, as Sample does). Rank-local, not collective; inside is called once per
/// candidate, from this thread.
/// Throws InputError, naming `name`, unless 0 < dx < inf, 1 <= ppc <= 512, the region
/// is finite with lo <= hi, and its cells have indices in [-2^17, 2^17).
SampledParticles SampleInside(const std::function<bool(const Vec3&)>& inside, const Aabb& region,
                              double dx, int ppc, uint64_t seed,
                              const std::string& name = "particle sampling");

/// Particles inside shape: SampleInside over shape.Bounds(). Throws what SampleInside
/// throws and InputError "<shape>: holds no particle ..." when none falls inside.
SampledParticles Sample(const Shape& shape, double dx, int ppc, uint64_t seed);

/// The solid covered by the tets of a mesh. Inside test: barycentric coordinates in the
/// tets listed in x's bin of a uniform grid of tets (about 2 tets per bin), inside when
/// all 4 are >= -1e-12 (the tolerance keeps points on a face shared by two tets from
/// falling between them).
class TetMeshShape : public Shape {
 public:
  /// Validates mesh (ValidateTets; errors name `name`, e.g. the file) and builds the
  /// grid. Keeps 12 doubles per tet. Rank-local.
  TetMeshShape(const TetMeshData& mesh, std::string name);

  bool Inside(const Vec3& x) const override;
  /// The nodes' bounding box, padded by 1e-9 of its largest extent.
  Aabb Bounds() const override { return grid_.Bounds(); }
  /// The sum of the tets' volumes.
  double Volume() const override { return volume_; }
  const std::string& Name() const override { return name_; }

 private:
  /// Corner x0 of a tet and the inverse of its edge matrix [x1-x0, x2-x0, x3-x0].
  struct Tet {
    Vec3 x0;
    Mat3 inverse_edges;
  };

  std::string name_;
  std::vector<Tet> tets_;
  double volume_ = 0.0;
  AabbGrid grid_;
};

}  // namespace optistep::mpm
