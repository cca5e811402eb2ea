#include "fem/ConstraintCollisions.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>

#include "core/Error.hpp"
#include "core/GhostedVector.hpp"

namespace optistep {

ConstraintCollisions::ConstraintCollisions(const FemModel& model) : model_(model) {
  const auto& objects = model_.collision_objects();
  for (std::size_t k = 0; k < objects.size(); ++k)
    if (objects[k].constraint()) objects_.push_back(static_cast<int>(k));
  const std::size_t n_owned = static_cast<std::size_t>(model_.mesh().n_owned);
  active_.assign(n_owned, -1);
  projected_.assign(n_owned, -1);
  jacobian_.assign(n_owned, Mat3::Identity());
  lambda_.assign(n_owned, 0.0);
  curvature_.assign(n_owned, Mat3::Zero());
  normal_.assign(model_.mesh().local_to_global.size(), Vec3::Zero());
  normals_ = model_.CreateNodeVector();
}

ConstraintCollisions::~ConstraintCollisions() { VecDestroy(&normals_); }

bool ConstraintCollisions::Any(const FemModel& model) {
  for (const auto& c : model.collision_objects())
    if (c.constraint()) return true;
  return false;
}

void ConstraintCollisions::Clear() {
  std::fill(active_.begin(), active_.end(), -1);
  std::fill(lambda_.begin(), lambda_.end(), 0.0);
  std::fill(normal_.begin(), normal_.end(), Vec3::Zero());
}

void ConstraintCollisions::Project(Vec x, Vec xp) {
  if (x != xp) OPTISTEP_PETSC(VecCopy(x, xp));
  const auto& objects = model_.collision_objects();
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(xp, &a));
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    projected_[l] = -1;
    if (model_.IsConstrained(static_cast<int>(l))) continue;
    const Vec3 xi(a[3 * l], a[3 * l + 1], a[3 * l + 2]);
    // Its active object, else the one it penetrates most.
    int chosen = active_[l];
    double phi = 0.0;
    Vec3 n;
    if (chosen >= 0) {
      phi = objects[chosen].SignedDistance(xi, &n);
    } else {
      for (int k : objects_) {
        Vec3 nk;
        const double phik = objects[k].SignedDistance(xi, &nk);
        if (phik < phi) {
          phi = phik;
          n = nk;
          chosen = k;
        }
      }
    }
    if (chosen < 0) continue;
    projected_[l] = chosen;
    // dP/dx of P(x) = x - phi(x) grad phi(x).
    jacobian_[l] = Mat3::Identity() - n * n.transpose() - phi * objects[chosen].DistanceHessian(xi);
    const Vec3 p = xi - phi * n;
    for (int d = 0; d < 3; ++d) a[3 * l + d] = p[d];
  }
  OPTISTEP_PETSC(VecRestoreArray(xp, &a));
}

void ConstraintCollisions::ChainRule(Vec g) const {
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(g, &a));
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    if (projected_[l] < 0) continue;
    const Vec3 q(a[3 * l], a[3 * l + 1], a[3 * l + 2]);
    const Vec3 gl = jacobian_[l].transpose() * q;
    for (int d = 0; d < 3; ++d) a[3 * l + d] = gl[d];
  }
  OPTISTEP_PETSC(VecRestoreArray(g, &a));
}

void ConstraintCollisions::Register(Vec x, Vec g) {
  const auto& objects = model_.collision_objects();
  const PetscScalar* xa = nullptr;
  PetscScalar *ga = nullptr, *na = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x, &xa));
  OPTISTEP_PETSC(VecGetArray(g, &ga));
  OPTISTEP_PETSC(VecGetArray(normals_, &na));
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    active_[l] = -1;
    lambda_[l] = 0.0;
    Vec3 n = Vec3::Zero();
    if (!model_.IsConstrained(static_cast<int>(l))) {
      const Vec3 xi(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]);
      int touching = projected_[l];
      if (touching >= 0) {
        objects[touching].SignedDistance(xi, &n);
      } else {
        for (int k : objects_)
          if (objects[k].SignedDistance(xi, &n) <= 0.0) {
            touching = k;
            break;
          }
      }
      const Vec3 q(ga[3 * l], ga[3 * l + 1], ga[3 * l + 2]);
      // Active: touching, and the unconstrained descent -q would push the node in.
      if (touching >= 0 && q.dot(n) >= 0.0) {
        active_[l] = touching;
        lambda_[l] = q.dot(n);
        curvature_[l] = objects[touching].DistanceHessian(xi);
        const Vec3 t = q - lambda_[l] * n;
        for (int d = 0; d < 3; ++d) ga[3 * l + d] = t[d];
      } else {
        n = Vec3::Zero();
      }
    }
    for (int d = 0; d < 3; ++d) na[3 * l + d] = n[d];
  }
  OPTISTEP_PETSC(VecRestoreArray(normals_, &na));
  OPTISTEP_PETSC(VecRestoreArray(g, &ga));
  OPTISTEP_PETSC(VecRestoreArrayRead(x, &xa));
  // The Hessian's columns need the normals of ghost nodes too.
  const GhostedLocalView local(normals_);
  const PetscScalar* nl = local.data();
  for (std::size_t l = 0; l < normal_.size(); ++l) normal_[l] = Vec3(nl[3 * l], nl[3 * l + 1], nl[3 * l + 2]);
}

void ConstraintCollisions::ProjectDirection(Vec d) const {
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(d, &a));
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    if (active_[l] < 0) continue;
    const Vec3& n = normal_[l];
    const Vec3 dl(a[3 * l], a[3 * l + 1], a[3 * l + 2]);
    const Vec3 t = dl - dl.dot(n) * n;
    for (int c = 0; c < 3; ++c) a[3 * l + c] = t[c];
  }
  OPTISTEP_PETSC(VecRestoreArray(d, &a));
}

void ConstraintCollisions::ProjectHessian(const std::vector<PetscInt>& row_start,
                                          const std::vector<PetscInt>& local_cols,
                                          const std::vector<int>& diagonal_slot, double dt,
                                          bool project_spd, std::vector<double>* values) const {
  const auto tangent = [&](std::size_t l) { return Mat3(Mat3::Identity() - normal_[l] * normal_[l].transpose()); };
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    const bool row_active = active_[l] >= 0;
    const Mat3 Tl = tangent(static_cast<std::size_t>(l));
    for (PetscInt s = row_start[l]; s < row_start[l + 1]; ++s) {
      const std::size_t c = static_cast<std::size_t>(local_cols[s]);
      const bool column_active = normal_[c].squaredNorm() > 0.0;
      if (!row_active && !column_active) continue;
      Eigen::Map<Mat3> block(&(*values)[9 * static_cast<std::size_t>(s)]);
      const Mat3 projected = Tl * block * tangent(c);
      block = projected;
    }
    if (!row_active) continue;
    Eigen::Map<Mat3> diagonal(&(*values)[9 * static_cast<std::size_t>(diagonal_slot[l])]);
    const Vec3& n = normal_[l];
    diagonal += model_.Mass(static_cast<int>(l)) / (dt * dt) * n * n.transpose();
    // d^2 P/dx^2 contracted with q, on the tangent plane: -lambda Hess phi (Sec. 3.2).
    Mat3 curvature = -lambda_[l] * curvature_[l];
    if (project_spd) {
      Eigen::SelfAdjointEigenSolver<Mat3> eigen(curvature);
      curvature = eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() *
                  eigen.eigenvectors().transpose();
    }
    diagonal += curvature;
  }
}

double ConstraintCollisions::NormalForce(int l, Vec3* normal, int* object) const {
  *object = active_[l];
  *normal = normal_[l];
  return active_[l] >= 0 ? lambda_[l] : 0.0;
}

PetscInt ConstraintCollisions::ActiveCount() const {
  PetscInt count = 0;
  for (int a : active_) count += a >= 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPIU_INT, MPI_SUM, model_.comm());
  return count;
}

}  // namespace optistep
