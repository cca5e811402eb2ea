// Regions and force distribution of asynchronous evolution (Schroeder, Kwatra, Zheng, Fedkiw
// 2010, Secs. 4-5; integrators/AsyncRegions.hpp), on 1, 2 and 4 ranks:
//  - surface layers of a 6 x 6 x 6 Kuhn-split box: layer 1 is the tets with three boundary
//    nodes, 456 (the 396 tets of the 432 boundary triangles, and 60 in the cells along the
//    box's edges whose three boundary nodes lie on two sides; enumerated apart); for L >= 2
//    every hex cell touching a node within L - 1 node rings of the boundary holds 6 region
//    tets, so the region has 6 (n^3 - max(0, n - 2L)^3) tets: 1248 and 1296 (all) for L = 2, 3;
//  - the projection P onto rigid motions keeps the net force and torque to round-off, is a
//    projection (P^2 = P), is mass-symmetric (u . M^-1 P w = w . M^-1 P u); epsilon = 1 gives
//    accelerations of a rigid motion (a skew velocity gradient in every implicit tet);
//    epsilon = 0 leaves the forces bitwise unchanged; epsilon blends linearly.
#include <gtest/gtest.h>

#include <cmath>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "app/FemSimulation.hpp"
#include "core/Error.hpp"
#include "core/GhostedVector.hpp"
#include "fem/TetElement.hpp"
#include "integrators/AsyncRegions.hpp"

namespace optistep {
namespace {

SceneConfig CubeScene(const std::string& tag, const std::vector<std::string>& overrides = {}) {
  const std::string dir = test::SharedTempDir(tag);
  test::WriteBoxMesh(dir + "/cube", 6, 6, 6, Vec3(1.2, 1.2, 1.2));
  return test::MakeScene(dir + "/cube.yaml", R"(
time: {dt: 0.01, frame_dt: 0.01, frames: 1}
bodies:
  - mesh: cube.node
    material: {E: 1.0e5, nu: 0.3, density: 1000}
)", overrides);
}

long CountedRegionTets(const FemModel& model, const std::vector<char>& region) {
  long count = 0;
  for (std::size_t e = 0; e < region.size(); ++e) count += region[e] && model.mesh().tet_counted[e];
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return count;
}

TEST(AsyncRegions, SurfaceLayersOfABox) {
  const SceneConfig scene = CubeScene("regions");
  FemSimulation sim(PETSC_COMM_WORLD, scene);
  for (int L = 1; L <= 3; ++L) {
    const int inner = std::max(0, 6 - 2 * L);
    EXPECT_EQ(CountedRegionTets(sim.model(), SurfaceLayerTets(sim.model(), L)),
              L == 1 ? 456L : 6L * (216 - inner * inner * inner))
        << L << " layers";
  }
}

/// Deterministic pseudo-random value in [-1, 1] of (node original id, component, salt).
double Noise(PetscInt id, int d, unsigned salt) {
  const unsigned k = (static_cast<unsigned>(3 * id + d) + 7919u * salt) * 2654435761u;
  return (k % 2001u) / 1000.0 - 1.0;
}

struct Fixture {
  explicit Fixture(const std::string& tag)
      : sim(PETSC_COMM_WORLD, CubeScene(tag)),
        model(sim.model()),
        region(SurfaceLayerTets(model, 1)),
        P(model, ImplicitRegionNodes(model, region), 1.0) {
    x = sim.positions();
    // Positions off the grid (a rotated, sheared cube) so that the inertia is generic.
    PetscScalar* xa = nullptr;
    OPTISTEP_PETSC(VecGetArray(x, &xa));
    for (PetscInt l = 0; l < model.mesh().n_owned; ++l)
      for (int d = 0; d < 3; ++d)
        xa[3 * l + d] += 0.05 * Noise(model.mesh().node_original_id[l], d, 1) + 0.2 * d * xa[3 * l];
    OPTISTEP_PETSC(VecRestoreArray(x, &xa));
  }
  /// A new node vector of noise (salt), zero outside the implicit nodes.
  Vec Forces(unsigned salt) const {
    Vec f = model.CreateNodeVector();
    PetscScalar* fa = nullptr;
    OPTISTEP_PETSC(VecGetArray(f, &fa));
    for (PetscInt l = 0; l < model.mesh().n_owned; ++l)
      for (int d = 0; d < 3; ++d)
        fa[3 * l + d] = P.implicit_nodes()[l] ? Noise(model.mesh().node_original_id[l], d, salt) : 0.0;
    OPTISTEP_PETSC(VecRestoreArray(f, &fa));
    return f;
  }
  /// Net force and torque about the origin of f, summed over all ranks.
  std::array<double, 6> Moments(Vec f) const {
    std::array<double, 6> s{};
    const PetscScalar *xa = nullptr, *fa = nullptr;
    OPTISTEP_PETSC(VecGetArrayRead(x, &xa));
    OPTISTEP_PETSC(VecGetArrayRead(f, &fa));
    for (PetscInt l = 0; l < model.mesh().n_owned; ++l) {
      const Vec3 xi(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]), fi(fa[3 * l], fa[3 * l + 1], fa[3 * l + 2]);
      const Vec3 t = xi.cross(fi);
      for (int d = 0; d < 3; ++d) {
        s[d] += fi[d];
        s[3 + d] += t[d];
      }
    }
    OPTISTEP_PETSC(VecRestoreArrayRead(f, &fa));
    OPTISTEP_PETSC(VecRestoreArrayRead(x, &xa));
    MPI_Allreduce(MPI_IN_PLACE, s.data(), 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return s;
  }
  /// u . M^-1 w over all ranks.
  double MassInverseDot(Vec u, Vec w) const {
    const PetscScalar *ua = nullptr, *wa = nullptr;
    OPTISTEP_PETSC(VecGetArrayRead(u, &ua));
    OPTISTEP_PETSC(VecGetArrayRead(w, &wa));
    double s = 0.0;
    for (PetscInt l = 0; l < model.mesh().n_owned; ++l)
      for (int d = 0; d < 3; ++d) s += ua[3 * l + d] * wa[3 * l + d] / model.Mass(static_cast<int>(l));
    OPTISTEP_PETSC(VecRestoreArrayRead(w, &wa));
    OPTISTEP_PETSC(VecRestoreArrayRead(u, &ua));
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return s;
  }
  double Norm(Vec f) const {
    PetscReal n = 0.0;
    OPTISTEP_PETSC(VecNorm(f, NORM_2, &n));
    return n;
  }

  FemSimulation sim;
  FemModel& model;
  std::vector<char> region;
  RigidForceDistribution P;
  Vec x = nullptr;
};

TEST(AsyncRegions, ProjectionKeepsForceAndTorque) {
  const Fixture fx("proj_moments");
  Vec f = fx.Forces(2);
  const auto before = fx.Moments(f);
  const double scale = fx.Norm(f);
  fx.P.Apply(fx.x, f);
  const auto after = fx.Moments(f);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(after[k], before[k], 1e-12 * scale) << "moment " << k;
  EXPECT_GT(std::abs(before[3]) + std::abs(before[4]) + std::abs(before[5]), 1e-3 * scale)
      << "the test forces should carry a torque";
  VecDestroy(&f);
}

TEST(AsyncRegions, ProjectionIsIdempotent) {
  const Fixture fx("proj_square");
  Vec f = fx.Forces(3), g = nullptr;
  fx.P.Apply(fx.x, f);
  OPTISTEP_PETSC(VecDuplicate(f, &g));
  OPTISTEP_PETSC(VecCopy(f, g));
  fx.P.Apply(fx.x, g);
  OPTISTEP_PETSC(VecAXPY(g, -1.0, f));
  EXPECT_LT(fx.Norm(g), 1e-13 * fx.Norm(f)) << "|P P f - P f| / |P f|";
  EXPECT_GT(fx.Norm(f), 0.0);
  VecDestroy(&f);
  VecDestroy(&g);
}

TEST(AsyncRegions, MassInverseTimesProjectionIsSymmetric) {
  const Fixture fx("proj_symmetric");
  Vec u = fx.Forces(4), w = fx.Forces(5), Pu = nullptr, Pw = nullptr;
  OPTISTEP_PETSC(VecDuplicate(u, &Pu));
  OPTISTEP_PETSC(VecDuplicate(w, &Pw));
  OPTISTEP_PETSC(VecCopy(u, Pu));
  OPTISTEP_PETSC(VecCopy(w, Pw));
  fx.P.Apply(fx.x, Pu);
  fx.P.Apply(fx.x, Pw);
  const double uPw = fx.MassInverseDot(u, Pw), wPu = fx.MassInverseDot(w, Pu);
  EXPECT_NEAR(uPw, wPu, 1e-12 * std::max(std::abs(uPw), 1e-300));
  EXPECT_GT(std::abs(uPw), 0.0);
  for (Vec* v : {&u, &w, &Pu, &Pw}) VecDestroy(v);
}

TEST(AsyncRegions, EpsilonOneIsARigidMotionEpsilonZeroNothing) {
  const Fixture fx("proj_rigid");
  const DistributedTetMesh& mesh = fx.model.mesh();
  // epsilon = 1: a = f / m is a rigid acceleration field, so its gradient over every tet of
  // the implicit region (on the positions x) is skew.
  Vec f = fx.Forces(6);
  fx.P.Apply(fx.x, f);
  PetscScalar* fa = nullptr;
  OPTISTEP_PETSC(VecGetArray(f, &fa));
  for (PetscInt l = 0; l < mesh.n_owned; ++l)
    for (int d = 0; d < 3; ++d) fa[3 * l + d] /= fx.model.Mass(static_cast<int>(l));
  OPTISTEP_PETSC(VecRestoreArray(f, &fa));
  double worst = 0.0, scale = 0.0;
  {
    const GhostedLocalView a(f), xv(fx.x);
    for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
      if (fx.region[e]) continue;
      bool all_implicit = true;
      for (int c = 0; c < 4; ++c)
        all_implicit &= mesh.tets[e][c] >= mesh.n_owned || fx.P.implicit_nodes()[mesh.tets[e][c]];
      if (!all_implicit) continue;
      // Gradient of a over the deformed tet: (sum_c a_c beta_c^T) F^-1.
      const auto& beta = fx.model.Beta(static_cast<int>(e));
      const Mat3 F = DeformationGradient(TetPositions(xv.data(), mesh.tets[e]), beta);
      const Mat3 G = DeformationGradient(TetPositions(a.data(), mesh.tets[e]), beta) * F.inverse();
      worst = std::max(worst, (G + G.transpose()).norm());
      scale = std::max(scale, G.norm());
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_GT(scale, 0.0) << "the rigid motion should rotate";
  EXPECT_LT(worst, 1e-12 * scale) << "symmetric part of the acceleration gradient";
  // epsilon = 0: bitwise the input; epsilon = 0.25: the blend 0.25 P f + 0.75 f.
  Vec g = fx.Forces(7), h = fx.Forces(7), Pg = fx.Forces(7), f7 = fx.Forces(7);
  fx.P.Apply(fx.x, g, 0.0);
  OPTISTEP_PETSC(VecAXPY(h, -1.0, g));
  EXPECT_EQ(fx.Norm(h), 0.0);
  fx.P.Apply(fx.x, Pg, 1.0);
  fx.P.Apply(fx.x, g, 0.25);
  OPTISTEP_PETSC(VecAXPBYPCZ(g, -0.25, -0.75, 1.0, Pg, f7));
  EXPECT_LT(fx.Norm(g), 1e-14 * fx.Norm(Pg) + 1e-14);
  for (Vec* v : {&f, &g, &h, &Pg, &f7}) VecDestroy(v);
}

}  // namespace
}  // namespace optistep
