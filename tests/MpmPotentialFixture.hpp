#pragma once
// A distributed MPM step on a small grid for the suites that test the step's potential and
// what is built on it (test_mpm_potential.cpp, test_hot_multigrid.cpp): particles in a cube,
// with sticky, slip and free grid nodes, P2G done on 1, 2 or 4 ranks.
#include <gtest/gtest.h>
#include <petscmat.h>

#include <memory>
#include <random>

#include "TestUtil.hpp"
#include "core/Error.hpp"
#include "materials/Material.hpp"
#include "mpm/BSpline.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/MpmIncrementalPotential.hpp"

namespace optistep::test {

using mpm::MpmDomain;
using mpm::MpmIncrementalPotential;
using mpm::NodeConstraint;
using mpm::StepGrid;

constexpr double kDx = 0.1;   // m
constexpr double kDt = 0.01;  // s
constexpr int kParticles = 2000;

/// Rank 0: particles in the cube [0, 0.8]^3 m with random v, C, mass about 1e-3 kg, V0 =
/// 2.5e-4 m^3 (4 per cell) and F within 0.02 of 1.15 I. Stretched by 15%, the
/// fixed-corotated tangent is positive definite, so its SPD projection leaves the true
/// Hessian (near I its twist eigenvalues 2 mu (1 - 2 / (s_i + s_j)) + lambda (J - 1) s_k
/// are about 0, and the projection clips them under compression).
inline mpm::Particles CubeParticles() {
  mpm::Particles all;
  if (test::Rank() != 0) return all;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> position(0.0, 0.8), unit(-1.0, 1.0);
  for (int p = 0; p < kParticles; ++p) {
    mpm::Particle q;
    q.id = p;
    q.x = Vec3(position(rng), position(rng), position(rng));
    q.v = 0.5 * Vec3(unit(rng), unit(rng), unit(rng));
    for (int k = 0; k < 9; ++k) {
      q.C(k) = 0.5 * unit(rng);
      q.F(k) = (k % 4 == 0 ? 1.15 : 0.0) + 0.02 * unit(rng);
    }
    q.mass = 1e-3 * (1.0 + 0.5 * unit(rng));
    q.V0 = 2.5e-4;
    all.Append(q);
  }
  return all;
}

/// The constraint of a grid node at x: sticky (moving at 0.1 m/s along x) behind
/// x = 0.25 m, slip on z = 0.25 m (normal +z) elsewhere below it, free otherwise. A
/// function of the position only, so owners and ghosts agree.
inline NodeConstraint ConstraintAt(const Vec3& x) {
  NodeConstraint c;
  if (x.x() < 0.25) {
    c.kind = NodeConstraint::Kind::kSticky;
    c.velocity = Vec3(0.1, 0.0, 0.0);
  } else if (x.z() < 0.25) {
    c.kind = NodeConstraint::Kind::kSlip;
    c.normal = Vec3::UnitZ();
  }
  return c;
}

class MpmPotentialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    material_ = MakeMaterial("fixed_corotated", LameParameters::FromYoungPoisson(1e4, 0.3));
    materials_ = {material_.get()};
    plasticity_.resize(1);
    domain_ = std::make_unique<MpmDomain>(MPI_COMM_WORLD, kDx, 1.2);
    domain_->Distribute(CubeParticles());
    domain_->ExchangeHalo();
    step_ = std::make_unique<StepGrid>(kDx);
    domain_->BuildStepGrid(step_.get());
    constraints_.resize(step_->grid.NodeCount());
    for (int i = 0; i < step_->grid.NodeCount(); ++i)
      constraints_[i] = ConstraintAt(mpm::NodePosition(step_->grid.Node(i), kDx));
  }

  /// hessian_type: the assembled Hessian's storage (null: the potential's default, BAIJ).
  std::unique_ptr<MpmIncrementalPotential> Potential(bool matrix_free, const char* hessian_type = nullptr) {
    return std::make_unique<MpmIncrementalPotential>(*domain_, *step_, materials_, plasticity_,
                                                     constraints_, kDt, Vec3(0.0, -9.81, 0.0),
                                                     matrix_free, hessian_type);
  }

  /// A random vector of the step's layout, scaled by `scale`; with `admissible`, zero on
  /// sticky nodes and without the normal component on slip nodes (the directions the
  /// constrained minimization moves in).
  Vec RandomVector(const MpmIncrementalPotential& potential, unsigned seed, double scale,
                   bool admissible) {
    Vec x = potential.CreateVector();
    std::mt19937 rng(seed + 101 * static_cast<unsigned>(test::Rank()));
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArray(x, &a));
    for (std::size_t k = 0; k < step_->owned_nodes.size(); ++k) {
      Vec3 v(unit(rng), unit(rng), unit(rng));
      const NodeConstraint& c = constraints_[step_->owned_nodes[k]];
      if (admissible && c.kind == NodeConstraint::Kind::kSticky) v.setZero();
      if (admissible && c.kind == NodeConstraint::Kind::kSlip) v -= c.normal.dot(v) * c.normal;
      for (int d = 0; d < 3; ++d) a[3 * k + d] = scale * v[d];
    }
    OPTISTEP_PETSC(VecRestoreArray(x, &a));
    return x;
  }

  /// The number of sticky and slip nodes over all ranks.
  std::pair<long, long> ConstrainedNodeCounts() const {
    long counts[2] = {0, 0};
    for (int i : step_->owned_nodes) {
      counts[0] += constraints_[i].kind == NodeConstraint::Kind::kSticky;
      counts[1] += constraints_[i].kind == NodeConstraint::Kind::kSlip;
    }
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return {counts[0], counts[1]};
  }

  std::unique_ptr<ElasticMaterial> material_;
  mpm::MaterialTable materials_;
  std::vector<mpm::PlasticityParameters> plasticity_;
  std::unique_ptr<MpmDomain> domain_;
  std::unique_ptr<StepGrid> step_;
  std::vector<NodeConstraint> constraints_;
};

inline double Norm(Vec x) {
  PetscReal n = 0.0;
  OPTISTEP_PETSC(VecNorm(x, NORM_2, &n));
  return n;
}

/// |a - b| / |b|.
inline double RelativeDifference(Vec a, Vec b) {
  Vec diff = nullptr;
  OPTISTEP_PETSC(VecDuplicate(a, &diff));
  OPTISTEP_PETSC(VecWAXPY(diff, -1.0, b, a));
  const double r = Norm(diff) / Norm(b);
  VecDestroy(&diff);
  return r;
}

}  // namespace optistep::test
