#pragma once
// The rank-local MPM particles, as a structure of arrays (one std::vector per quantity,
// indexed by the rank-local particle index p), and their flat packing for migration.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/Types.hpp"
#include "materials/Material.hpp"

namespace optistep::mpm {

/// The plastic state of a particle; each plasticity model (mpm/Plasticity.hpp) uses its
/// own field and leaves the other at its default.
struct PlasticState {
  double Jp = 1.0;              ///< snow: J_P = det F_P, plastic volume ratio (-)
  double plastic_strain = 0.0;  ///< von Mises: accumulated equivalent plastic strain (-)
};

/// One particle, for appending and packing (the storage is Particles).
struct Particle {
  std::int64_t id = 0;        ///< global, rank-count-independent id
  Vec3 x = Vec3::Zero();      ///< position x_p (m)
  Vec3 v = Vec3::Zero();      ///< velocity v_p (m/s)
  Mat3 C = Mat3::Zero();      ///< APIC affine velocity C_p = B_p D_p^{-1} (1/s)
  Mat3 F = Mat3::Identity();  ///< elastic deformation gradient F_p (-)
  PlasticState plastic;
  double mass = 0.0;  ///< m_p (kg)
  double V0 = 0.0;    ///< initial volume V0_p (m^3)
  int material = 0;   ///< index into the MaterialTable
};

/// The material of each material index: particle p is made of materials[material[p]].
using MaterialTable = std::vector<const ElasticMaterial*>;

/// Rank-local particles, structure of arrays: every vector has size() entries, the
/// quantities and units of Particle. Not thread-safe for writes.
struct Particles {
  std::vector<std::int64_t> id;
  std::vector<Vec3> x;
  std::vector<Vec3> v;
  std::vector<Mat3> C;
  std::vector<Mat3> F;
  std::vector<PlasticState> plastic;
  std::vector<double> mass;
  std::vector<double> V0;
  std::vector<int> material;

  /// Doubles per particle in Pack/Unpack. Layout, in order:
  ///   [0] id (its 64 bits copied, not converted: ids beyond 2^53 stay exact; move the
  ///       buffer as raw doubles, e.g. MPI_DOUBLE, without arithmetic on it),
  ///   [1, 4) x, [4, 7) v, [7, 16) C and [16, 25) F (column-major), [25] Jp,
  ///   [26] plastic_strain, [27] mass, [28] V0, [29] material (an exactly representable
  ///   integer).
  static constexpr int kPackedDoubles = 30;

  std::size_t size() const { return id.size(); }

  /// Grows or shrinks to n particles; new ones are Particle{}.
  void Resize(std::size_t n) {
    const std::size_t old = size();
    ForEachField([n](auto& field) { field.resize(n); });
    for (std::size_t p = old; p < n; ++p) Set(p, Particle{});
  }

  void Append(const Particle& q) {
    Resize(size() + 1);
    Set(size() - 1, q);
  }

  Particle Get(std::size_t p) const {
    return {id[p], x[p], v[p], C[p], F[p], plastic[p], mass[p], V0[p], material[p]};
  }

  void Set(std::size_t p, const Particle& q) {
    id[p] = q.id;
    x[p] = q.x;
    v[p] = q.v;
    C[p] = q.C;
    F[p] = q.F;
    plastic[p] = q.plastic;
    mass[p] = q.mass;
    V0[p] = q.V0;
    material[p] = q.material;
  }

  /// Removes the particles p with erase[p] != 0, keeping the order of the others (so a
  /// migration stays deterministic). Throws std::invalid_argument if erase.size() != size().
  void EraseIf(const std::vector<char>& erase) {
    if (erase.size() != size())
      throw std::invalid_argument("Particles::EraseIf: the mask has " +
                                  std::to_string(erase.size()) + " entries for " +
                                  std::to_string(size()) + " particles");
    ForEachField([&erase](auto& field) {
      std::size_t kept = 0;
      for (std::size_t p = 0; p < field.size(); ++p)
        if (!erase[p]) field[kept++] = field[p];
      field.resize(kept);
    });
  }

  /// Writes particle p to out[0, kPackedDoubles) in the layout above.
  void Pack(std::size_t p, double* out) const {
    const Particle q = Get(p);
    std::memcpy(out, &q.id, sizeof(double));
    Eigen::Map<Vec3>(out + 1) = q.x;
    Eigen::Map<Vec3>(out + 4) = q.v;
    Eigen::Map<Mat3>(out + 7) = q.C;
    Eigen::Map<Mat3>(out + 16) = q.F;
    out[25] = q.plastic.Jp;
    out[26] = q.plastic.plastic_strain;
    out[27] = q.mass;
    out[28] = q.V0;
    out[29] = q.material;
  }

  /// Appends the particle packed at in[0, kPackedDoubles).
  void AppendPacked(const double* in) {
    Particle q;
    std::memcpy(&q.id, in, sizeof(double));
    q.x = Eigen::Map<const Vec3>(in + 1);
    q.v = Eigen::Map<const Vec3>(in + 4);
    q.C = Eigen::Map<const Mat3>(in + 7);
    q.F = Eigen::Map<const Mat3>(in + 16);
    q.plastic.Jp = in[25];
    q.plastic.plastic_strain = in[26];
    q.mass = in[27];
    q.V0 = in[28];
    q.material = static_cast<int>(in[29]);
    Append(q);
  }

 private:
  template <class Apply>
  void ForEachField(Apply&& apply) {
    apply(id);
    apply(x);
    apply(v);
    apply(C);
    apply(F);
    apply(plastic);
    apply(mass);
    apply(V0);
    apply(material);
  }
};

static_assert(sizeof(std::int64_t) == sizeof(double), "Pack copies an id into one double");

}  // namespace optistep::mpm
