#pragma once
// Helpers of the distributed MPM suites (test_mpm_*.cpp, test_hot_multigrid.cpp): totals
// over the owned particles of an MpmDomain, reduced over its communicator, so every rank
// gets the same numbers; a whole scene's run.
#include <mpi.h>

#include <Eigen/Geometry>
#include <string>
#include <vector>

#include "app/MpmSimulation.hpp"
#include "core/Types.hpp"
#include "mpm/MpmDomain.hpp"

namespace optistep::test {

/// [omega]_x, so that [omega]_x r = omega x r.
inline Mat3 Skew(const Vec3& omega) {
  Mat3 S;
  S << 0.0, -omega.z(), omega.y(), omega.z(), 0.0, -omega.x(), -omega.y(), omega.x(), 0.0;
  return S;
}

/// Collective: the sum over ranks of each entry of `values`.
inline std::vector<double> SumOverRanks(MPI_Comm comm, std::vector<double> values) {
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                comm);
  return values;
}

struct Momenta {
  Vec3 linear = Vec3::Zero();   ///< kg m/s
  Vec3 angular = Vec3::Zero();  ///< kg m^2/s, about the origin
};

/// Collective: total momenta of the owned particles. The angular momentum includes the
/// part carried by the affine velocity, m_p (C_p D_p)^T : epsilon with D_p = dx^2/4 I
/// (Jiang et al. 2015, Sec. 5.3).
inline Momenta ParticleMomenta(const mpm::MpmDomain& domain) {
  const mpm::Particles& p = domain.particles();
  const double D = 0.25 * domain.dx() * domain.dx();
  std::vector<double> sums(6, 0.0);
  for (std::size_t k = 0; k < domain.n_owned(); ++k) {
    const Mat3& C = p.C[k];
    const Vec3 linear = p.mass[k] * p.v[k];
    const Vec3 angular = p.mass[k] * p.x[k].cross(p.v[k]) +
                         p.mass[k] * D * Vec3(C(2, 1) - C(1, 2), C(0, 2) - C(2, 0), C(1, 0) - C(0, 1));
    for (int d = 0; d < 3; ++d) {
      sums[d] += linear[d];
      sums[3 + d] += angular[d];
    }
  }
  sums = SumOverRanks(domain.comm(), sums);
  return {Vec3(sums[0], sums[1], sums[2]), Vec3(sums[3], sums[4], sums[5])};
}

/// Collective: total mass (kg) of the owned particles.
inline double ParticleMass(const mpm::MpmDomain& domain) {
  double mass = 0.0;
  for (std::size_t k = 0; k < domain.n_owned(); ++k) mass += domain.particles().mass[k];
  return SumOverRanks(domain.comm(), {mass})[0];
}

/// Collective on comm: runs every frame of scene; the positions (m) then the velocities (m/s)
/// of the particles, in id order, on every rank. method: the integrator's Method() (what
/// solved the steps), if wanted.
inline std::vector<double> RunMpmScene(MPI_Comm comm, const SceneConfig& scene, std::string* method = nullptr) {
  MpmSimulation sim(comm, scene);
  if (method) *method = sim.integrator().Method();
  for (int f = 0; f < scene.time.frames; ++f) sim.AdvanceFrame(nullptr);
  std::vector<double> x, v;
  sim.GatherParticles(&x, &v);
  x.insert(x.end(), v.begin(), v.end());
  return x;
}

}  // namespace optistep::test
