#include "fem/ConstraintCollisions.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>

#include "core/Error.hpp"
#include "core/GhostedVector.hpp"

namespace optistep {
namespace {

/// A node left off an active object's surface (or inside another) by more than
/// kOffSurface (1 m + |x|) after a sweep of projections is swept again: a few times the
/// round-off of one projection, eps_mach |x|. Alternating projections onto surfaces that
/// meet at an angle theta converge by cos^2 theta per sweep.
constexpr double kOffSurface = 1e-15;
constexpr int kMaxSweeps = 8;

}  // namespace

ConstraintCollisions::ConstraintCollisions(const FemModel& model) : model_(model) {
  const auto& objects = model_.collision_objects();
  for (std::size_t k = 0; k < objects.size(); ++k)
    if (objects[k].constraint()) objects_.push_back(static_cast<int>(k));
  const std::size_t n_owned = static_cast<std::size_t>(model_.mesh().n_owned);
  active_.assign(n_owned, Set());
  projected_.assign(n_owned, Set());
  jacobian_.assign(n_owned, Mat3::Identity());
  lambda_.assign(n_owned, {0.0, 0.0, 0.0});
  normal_.assign(n_owned, {Vec3::Zero(), Vec3::Zero(), Vec3::Zero()});
  curvature_.assign(n_owned, Mat3::Zero());
  normal_projection_.assign(model_.mesh().local_to_global.size(), Mat3::Zero());
  for (OwnedVec& c : columns_) c.reset(model_.CreateNodeVector());
}

ConstraintCollisions::~ConstraintCollisions() = default;

bool ConstraintCollisions::Any(const FemModel& model) {
  for (const auto& c : model.collision_objects())
    if (c.constraint()) return true;
  return false;
}

void ConstraintCollisions::Clear() {
  std::fill(active_.begin(), active_.end(), Set());
  std::fill(normal_projection_.begin(), normal_projection_.end(), Mat3::Zero());
}

void ConstraintCollisions::Project(Vec x, Vec xp) {
  if (x != xp) OPTISTEP_PETSC(VecCopy(x, xp));
  const auto& objects = model_.collision_objects();
  const VecArray a(xp);
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    projected_[l] = Set();
    if (model_.IsConstrained(static_cast<int>(l))) continue;
    Vec3 xi(a[3 * l], a[3 * l + 1], a[3 * l + 2]);
    Mat3 J = Mat3::Identity();
    const double off = kOffSurface * (1.0 + xi.norm());
    // Active objects always, the others when penetrated; again while one is left off.
    for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
      bool moved = false;
      for (int k : objects_) {
        Vec3 n;
        const double phi = objects[k].SignedDistance(xi, &n);
        const bool held = active_[l].Has(k) || projected_[l].Has(k);
        if (!(phi < 0.0 || (held && (sweep == 0 || std::abs(phi) > off)))) continue;
        if (sweep > 0 && phi > -off && phi < off) continue;
        projected_[l].Add(k);
        // dP/dx of P(x) = x - phi(x) grad phi(x), chained.
        J = (Mat3::Identity() - n * n.transpose() - phi * objects[k].DistanceHessian(xi)) * J;
        xi -= phi * n;
        moved = true;
      }
      if (!moved || projected_[l].count <= 1) break;
    }
    if (projected_[l].count == 0) continue;
    jacobian_[l] = J;
    for (int d = 0; d < 3; ++d) a[3 * l + d] = xi[d];
  }
}

void ConstraintCollisions::ChainRule(Vec g) const {
  const VecArray a(g);
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    if (projected_[l].count == 0) continue;
    const Vec3 q(a[3 * l], a[3 * l + 1], a[3 * l + 2]);
    const Vec3 gl = jacobian_[l].transpose() * q;
    for (int d = 0; d < 3; ++d) a[3 * l + d] = gl[d];
  }
}

void ConstraintCollisions::Register(Vec x, Vec g) {
  const auto& objects = model_.collision_objects();
  {
    const VecArrayRead xa(x);
    const VecArray ga(g), column0(columns_[0]), column1(columns_[1]), column2(columns_[2]);
    PetscScalar* const ca[3] = {column0.data(), column1.data(), column2.data()};
    for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
      Set& set = active_[l];
      set = Set();
      Mat3 Q = Mat3::Zero();
      if (!model_.IsConstrained(static_cast<int>(l))) {
        const Vec3 xi(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]);
        // Touching: projected by the last Project, or on or inside an object, within the
        // round-off a projection onto a curved surface leaves (phi ~ 1e-17 m: such a node
        // pushed in but left out of the set would stall the line search).
        Set touching = projected_[l];
        const double off = kOffSurface * (1.0 + xi.norm());
        for (int k : objects_) {
          Vec3 n;
          if (objects[k].SignedDistance(xi, &n) <= off) touching.Add(k);
        }
        const Vec3 q(ga[3 * l], ga[3 * l + 1], ga[3 * l + 2]);
        std::array<Vec3, 3> normals;
        for (int i = 0; i < touching.count; ++i) objects[touching.object[i]].SignedDistance(xi, &normals[i]);
        // q = sum_k lambda_k n_k (least squares) with every lambda_k >= 0: the unconstrained
        // descent -q pushes the node into each active object. The most negative leaves first.
        Eigen::VectorXd lambda;
        Eigen::MatrixXd N;
        while (touching.count > 0) {
          N.resize(3, touching.count);
          for (int i = 0; i < touching.count; ++i) N.col(i) = normals[i];
          const Eigen::MatrixXd gram = N.transpose() * N;
          lambda = touching.count == 1 ? Eigen::VectorXd::Constant(1, q.dot(normals[0]))
                                       : Eigen::VectorXd(gram.ldlt().solve(N.transpose() * q));
          int worst = 0;
          lambda.minCoeff(&worst);
          if (lambda[worst] >= 0.0) break;
          for (int i = worst; i + 1 < touching.count; ++i) {
            touching.object[i] = touching.object[i + 1];
            normals[i] = normals[i + 1];
          }
          --touching.count;
        }
        if (touching.count > 0) {
          set = touching;
          Mat3 curvature = Mat3::Zero();
          for (int i = 0; i < set.count; ++i) {
            lambda_[l][i] = lambda[i];
            normal_[l][i] = normals[i];
            curvature -= lambda[i] * objects[set.object[i]].DistanceHessian(xi);
          }
          if (set.count == 1) {
            Q = normals[0] * normals[0].transpose();
          } else {
            Q = N * (N.transpose() * N).ldlt().solve(N.transpose());
            const Mat3 T = Mat3::Identity() - Q;
            curvature = T * curvature * T;  // Hess phi_k need not lie in the common tangent space
          }
          curvature_[l] = curvature;
          const Vec3 t = q - Q * q;
          for (int d = 0; d < 3; ++d) ga[3 * l + d] = t[d];
        }
      }
      for (int c = 0; c < 3; ++c)
        for (int d = 0; d < 3; ++d) ca[c][3 * l + d] = Q(d, c);
    }
  }
  // The Hessian's columns need Q of ghost nodes too.
  for (int c = 0; c < 3; ++c) {
    const GhostedLocalView local(columns_[c]);
    const PetscScalar* cl = local.data();
    for (std::size_t l = 0; l < normal_projection_.size(); ++l)
      normal_projection_[l].col(c) = Vec3(cl[3 * l], cl[3 * l + 1], cl[3 * l + 2]);
  }
}

void ConstraintCollisions::ProjectDirection(Vec d) const {
  const VecArray a(d);
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    if (active_[l].count == 0) continue;
    const Vec3 dl(a[3 * l], a[3 * l + 1], a[3 * l + 2]);
    const Vec3 t = dl - normal_projection_[l] * dl;
    for (int c = 0; c < 3; ++c) a[3 * l + c] = t[c];
  }
}

void ConstraintCollisions::ProjectHessian(const std::vector<PetscInt>& row_start,
                                          const std::vector<PetscInt>& local_cols,
                                          const std::vector<int>& diagonal_slot, double dt,
                                          bool project_spd, std::vector<double>* values) const {
  const auto tangent = [&](std::size_t l) { return Mat3(Mat3::Identity() - normal_projection_[l]); };
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    const bool row_active = active_[l].count > 0;
    const Mat3 Tl = tangent(static_cast<std::size_t>(l));
    for (PetscInt s = row_start[l]; s < row_start[l + 1]; ++s) {
      const std::size_t c = static_cast<std::size_t>(local_cols[s]);
      const bool column_active = normal_projection_[c].squaredNorm() > 0.0;
      if (!row_active && !column_active) continue;
      Eigen::Map<Mat3> block(&(*values)[9 * static_cast<std::size_t>(s)]);
      const Mat3 projected = Tl * block * tangent(c);
      block = projected;
    }
    if (!row_active) continue;
    Eigen::Map<Mat3> diagonal(&(*values)[9 * static_cast<std::size_t>(diagonal_slot[l])]);
    diagonal += model_.Mass(static_cast<int>(l)) / (dt * dt) * normal_projection_[l];
    // d^2 P/dx^2 contracted with q, on the tangent space: -sum_k lambda_k Hess phi_k (Sec. 3.2).
    Mat3 curvature = curvature_[l];
    if (project_spd) {
      Eigen::SelfAdjointEigenSolver<Mat3> eigen(curvature);
      curvature = eigen.eigenvectors() * eigen.eigenvalues().cwiseMax(0.0).asDiagonal() *
                  eigen.eigenvectors().transpose();
    }
    diagonal += curvature;
  }
}

double ConstraintCollisions::NormalForce(int l, int which, Vec3* normal, int* object) const {
  if (which >= active_[l].count) {
    *object = -1;
    *normal = Vec3::Zero();
    return 0.0;
  }
  *object = active_[l].object[which];
  *normal = normal_[l][which];
  return lambda_[l][which];
}

PetscInt ConstraintCollisions::ActiveCount() const {
  PetscInt count = 0;
  for (const Set& s : active_) count += s.count > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &count, 1, MPIU_INT, MPI_SUM, model_.comm());
  return count;
}

}  // namespace optistep
