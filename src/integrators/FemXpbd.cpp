#include "integrators/FemXpbd.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/Error.hpp"
#include "core/FiniteVector.hpp"
#include "core/GhostedVector.hpp"
#include "core/Phases.hpp"
#include "fem/TetElement.hpp"
#include "partition/GreedyColoring.hpp"
#include "particles/XpbdParticles.hpp"

namespace optistep {
namespace {

using Vec2 = Eigen::Vector2d;
using Mat2 = Eigen::Matrix2d;

const Phase kXpbdColorPhase("XpbdColoring");
const Phase kXpbdProjectPhase("XpbdProject");
const Phase kXpbdHaloPhase("XpbdHalo");

}  // namespace

FemXpbd::FemXpbd(const IntegratorConfig& config, FemModel& model, Vec x, Vec v)
    : Xpbd(config.xpbd),
      model_(model),
      x_(x),
      v_(v),
      damping_beta_(config.damping.stiffness_beta),
      max_depenetration_speed_(config.xpbd.max_depenetration_speed),
      jacobi_(config.xpbd.order == XpbdOrder::kJacobi) {
  const DistributedTetMesh& mesh = model_.mesh();
  OPTISTEP_PETSC(VecDuplicate(x_, xs_.out()));
  OPTISTEP_PETSC(VecDuplicate(x_, dx_.out()));
  OPTISTEP_PETSC(VecDuplicate(x_, vs_.out()));
  // Inverse masses of every local node: owners' lumped masses, ghosts through a scatter.
  {
    const OwnedVec w(model_.CreateNodeVector());
    {
      VecArray wa(w);
      for (PetscInt l = 0; l < mesh.n_owned; ++l) {
        const double m = model_.Mass(static_cast<int>(l));
        const double inverse = model_.IsConstrained(static_cast<int>(l)) || !(m > 0.0) ? 0.0 : 1.0 / m;
        for (int d = 0; d < 3; ++d) wa[3 * l + d] = inverse;
      }
    }
    const GhostedLocalView local(w);
    w_.resize(mesh.n_local);
    for (PetscInt l = 0; l < mesh.n_local; ++l) w_[l] = local.data()[3 * l];
  }
  if (jacobi_)
    ListTetsForJacobi();
  else
    ColorTets();
  lambda_.assign(kLambdas * tets_.size(), 0.0);
  x_prev_.resize(3 * static_cast<size_t>(mesh.n_local));
}

FemXpbd::~FemXpbd() = default;

void FemXpbd::ColorTets() {
  ScopedPhase timed(kXpbdColorPhase);
  const DistributedTetMesh& mesh = model_.mesh();
  MPI_Comm comm = mesh.comm;
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Rank 0 gathers every counted tet as (original id, 4 original node ids).
  std::vector<long long> mine;
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    if (!mesh.tet_counted[e]) continue;
    mine.push_back(mesh.tet_original_id[e]);
    for (int a = 0; a < 4; ++a) mine.push_back(mesh.node_original_id[mesh.tets[e][a]]);
  }
  const int count = static_cast<int>(mine.size());
  std::vector<int> counts(size), offsets(size, 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm);
  std::vector<long long> all;
  if (rank == 0) {
    for (int r = 1; r < size; ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    all.resize(static_cast<size_t>(offsets[size - 1] + counts[size - 1]));
  }
  MPI_Gatherv(mine.data(), count, MPI_LONG_LONG, all.data(), counts.data(), offsets.data(),
              MPI_LONG_LONG, 0, comm);
  // Greedy coloring in original tet id order: the smallest color no tet at a shared node
  // has yet. The order, and so the colors, do not depend on the rank count.
  std::vector<int> color(static_cast<size_t>(mesh.n_global_tets), -1);
  int n_colors = 0;
  if (rank == 0) {
    std::vector<std::int64_t> tet_nodes(4 * color.size());
    std::int64_t n_nodes = 0;
    for (size_t k = 0; k < all.size(); k += 5)
      for (int a = 0; a < 4; ++a) {
        tet_nodes[4 * all[k] + a] = all[k + 1 + a];
        n_nodes = std::max<std::int64_t>(n_nodes, all[k + 1 + a] + 1);
      }
    color = GreedyColors(tet_nodes, 4, n_nodes, &n_colors);
  }
  MPI_Bcast(color.data(), static_cast<int>(color.size()), MPI_INT, 0, comm);
  MPI_Bcast(&n_colors, 1, MPI_INT, 0, comm);
  n_colors_ = n_colors;

  // This rank's counted tets by (color, original id), with their compliances.
  std::vector<std::pair<int, size_t>> order;
  for (size_t e = 0; e < mesh.tets.size(); ++e)
    if (mesh.tet_counted[e]) order.emplace_back(color[mesh.tet_original_id[e]], e);
  std::sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return mesh.tet_original_id[a.second] < mesh.tet_original_id[b.second];
  });
  color_begin_.assign(n_colors_ + 1, 0);
  for (const auto& [c, e] : order) {
    tets_.push_back(MakeConstraint(e));
    ++color_begin_[c + 1];
  }
  for (int c = 0; c < n_colors_; ++c) color_begin_[c + 1] += color_begin_[c];
}

FemXpbd::TetConstraint FemXpbd::MakeConstraint(size_t e) const {
  const DistributedTetMesh& mesh = model_.mesh();
  const int ie = static_cast<int>(e);
  const BodyConfig& body = model_.scene().bodies[mesh.tet_body[e]];
  const LameParameters lame = LameParameters::FromYoungPoisson(body.material.E, body.material.nu);
  const double lambda_H = lame.lambda + lame.mu;
  TetConstraint tc;
  tc.nodes = mesh.tets[e];
  tc.tet = e;
  tc.beta = model_.Beta(ie);
  tc.alpha_D = 1.0 / (lame.mu * model_.RestVolume(ie));
  tc.alpha_H = 1.0 / (lambda_H * model_.RestVolume(ie));
  tc.gamma_H = 1.0 + lame.mu / lambda_H;
  return tc;
}

void FemXpbd::ListTetsForJacobi() {
  const DistributedTetMesh& mesh = model_.mesh();
  // Every local tet (all tets at the owned nodes: partition/TetPartition.hpp), by original
  // id, so each owned node sums its tets' corrections in an order no rank count changes.
  std::vector<size_t> order(mesh.tets.size());
  for (size_t e = 0; e < order.size(); ++e) order[e] = e;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return mesh.tet_original_id[a] < mesh.tet_original_id[b];
  });
  node_tets_.assign(mesh.n_owned, 0.0);
  for (size_t e : order) {
    tets_.push_back(MakeConstraint(e));
    tet_counted_.push_back(mesh.tet_counted[e]);
    for (int n : mesh.tets[e])
      if (n < mesh.n_owned) node_tets_[n] += 1.0;
  }
  jacobi_delta_.assign(3 * static_cast<size_t>(mesh.n_owned), 0.0);
}

std::string FemXpbd::Describe() const {
  if (jacobi_) return DescribeSubsteps() + ", Jacobi with averaged corrections";
  return DescribeSubsteps() + ", Gauss-Seidel over " +
         std::to_string(n_colors_) + " tet colors";
}

std::vector<std::string> FemXpbd::StatsColumns() const {
  return {"substeps", "colors", "projections", "volume_change", "halo_exchanges"};
}

std::vector<double> FemXpbd::StatsValues() const {
  return {static_cast<double>(substeps_), static_cast<double>(n_colors_), projections_,
          volume_change_, halo_exchanges_};
}

std::vector<std::pair<std::string, std::vector<double>>> FemXpbd::FrameCellFields() const {
  const DistributedTetMesh& mesh = model_.mesh();
  std::vector<double> by_tet(2 * mesh.tets.size(), 0.0);
  if (dt_s_ > 0.0) {  // a step of this run has been taken: xs_ holds its end, ghosts current
    const double inv_dt2 = 1.0 / (dt_s_ * dt_s_);
    Vec xl = nullptr;
    const PetscScalar* x = nullptr;
    OPTISTEP_PETSC(VecGhostGetLocalForm(xs_, &xl));
    OPTISTEP_PETSC(VecGetArrayRead(xl, &x));
    for (size_t t = 0; t < tets_.size(); ++t) {
      // Lambda_D's component along d|F|/dF = F / |F|: the force conjugate to |F|.
      const Mat3 F = DeformationGradient(TetPositions(x, tets_[t].nodes), tets_[t].beta);
      const Eigen::Map<const Mat3> lambda_D(&lambda_[kLambdas * t]);
      const double norm_F = F.norm();
      by_tet[2 * tets_[t].tet] = norm_F > 0.0 ? lambda_D.cwiseProduct(F).sum() / norm_F * inv_dt2 : 0.0;
      by_tet[2 * tets_[t].tet + 1] = lambda_[kLambdas * t + 9] * inv_dt2;
    }
    OPTISTEP_PETSC(VecRestoreArrayRead(xl, &x));
    OPTISTEP_PETSC(VecGhostRestoreLocalForm(xs_, &xl));
  }
  std::vector<double> deviatoric, hydrostatic;
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    if (!mesh.tet_counted[e]) continue;
    deviatoric.push_back(by_tet[2 * e]);
    hydrostatic.push_back(by_tet[2 * e + 1]);
  }
  return {{"force_deviatoric", deviatoric}, {"force_hydrostatic", hydrostatic}};
}

std::vector<Mat3> FemXpbd::DeviatoricForceEstimates() const {
  const DistributedTetMesh& mesh = model_.mesh();
  std::vector<Mat3> by_tet(mesh.tets.size(), Mat3::Zero());
  if (dt_s_ > 0.0)
    for (size_t t = 0; t < tets_.size(); ++t)
      by_tet[tets_[t].tet] = Eigen::Map<const Mat3>(&lambda_[kLambdas * t]) / (dt_s_ * dt_s_);
  std::vector<Mat3> counted;
  for (size_t e = 0; e < mesh.tets.size(); ++e)
    if (mesh.tet_counted[e]) counted.push_back(by_tet[e]);
  return counted;
}

void FemXpbd::KeepState() { kept_.Keep(x_, v_, t_, steps_); }

void FemXpbd::RestoreKeptState() { kept_.Restore(x_, v_, &t_, &steps_); }

void FemXpbd::RefreshGhosts() {
  ScopedPhase timed(kXpbdHaloPhase);
  halo_exchanges_ += 1.0;
  OPTISTEP_PETSC(VecGhostUpdateBegin(xs_, INSERT_VALUES, SCATTER_FORWARD));
  OPTISTEP_PETSC(VecGhostUpdateEnd(xs_, INSERT_VALUES, SCATTER_FORWARD));
}

void FemXpbd::FindContacts(double dt) {
  contacts_.clear();
  const auto& objects = model_.collision_objects();
  if (objects.empty()) return;
  const PetscScalar *xa = nullptr, *va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x_, &xa));
  OPTISTEP_PETSC(VecGetArrayRead(v_, &va));
  const Vec3 g = model_.Gravity(t_ + dt);  // gravity_time_function at the step's end
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    if (w_[l] == 0.0) continue;
    const Vec3 x(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]);
    const Vec3 v(va[3 * l], va[3 * l + 1], va[3 * l + 2]);
    const Vec3 predicted = x + dt * v + dt * dt * g;
    const double reach = (predicted - x).norm();
    for (size_t k = 0; k < objects.size(); ++k) {
      Vec3 n;
      const double phi = std::min(objects[k].SignedDistance(x, &n),
                                  objects[k].SignedDistance(predicted, &n));
      if (phi < reach) contacts_.emplace_back(static_cast<int>(l), static_cast<int>(k));
    }
  }
  OPTISTEP_PETSC(VecRestoreArrayRead(x_, &xa));
  OPTISTEP_PETSC(VecRestoreArrayRead(v_, &va));
}

void FemXpbd::ProjectTet(const TetConstraint& c, double dt_s, double* lambda, const double* x,
                         std::array<Vec3, 4>* delta) const {
  std::array<Vec3, 4> p;
  double w[4];
  for (int a = 0; a < 4; ++a) {
    const int n = c.nodes[a];
    p[a] = Vec3(x[3 * n], x[3 * n + 1], x[3 * n + 2]);
    w[a] = w_[n];
  }
  const Mat3 F = DeformationGradient(p, c.beta);
  // C_D = F (9 rows, linear in x: dF_ij/dx_ak = delta_ik beta_aj); C_H = det F - gamma_H,
  // dC_H/dx_a = h_a = cof(F) beta_a.
  Mat3 cof;
  cof.col(0) = F.col(1).cross(F.col(2));
  cof.col(1) = F.col(2).cross(F.col(0));
  cof.col(2) = F.col(0).cross(F.col(1));
  // The 10 rows as one XPBD update (XPBD Eq. 26 with damping gamma per row):
  //   ((1 + gamma) G W G^T + diag(alpha~)) dlambda = -C - alpha~ lambda - gamma G (x - x_prev),
  // dlambda = (Lambda, dlambda_H), Lambda 3x3, and the correction dx_a = w_a (Lambda beta_a +
  // dlambda_H h_a). With B = sum_a w_a beta_a beta_a^T, H = sum_a w_a h_a beta_a^T and
  // q = sum_a w_a |h_a|^2 the rows read
  //   (1 + gamma) (Lambda B + dlambda_H H) + alpha~_D Lambda = R_D,
  //   (1 + gamma) (Lambda : H + dlambda_H q) + alpha~_H dlambda_H = R_H,
  // solved by the Schur complement of the SPD 3x3 S = (1 + gamma) B + alpha~_D I.
  Mat3 B = Mat3::Zero(), H = Mat3::Zero(), dF_motion = Mat3::Zero();
  std::array<Vec3, 4> h;
  double q = 0.0, dH_motion = 0.0;
  for (int a = 0; a < 4; ++a) {
    const Vec3 beta_a = c.beta.col(a);
    h[a] = cof * beta_a;
    const int n = c.nodes[a];
    const Vec3 motion = p[a] - Vec3(x_prev_[3 * n], x_prev_[3 * n + 1], x_prev_[3 * n + 2]);
    B += w[a] * beta_a * beta_a.transpose();
    H += w[a] * h[a] * beta_a.transpose();
    q += w[a] * h[a].squaredNorm();
    dF_motion += motion * beta_a.transpose();
    dH_motion += h[a].dot(motion);
  }
  const double gamma = damping_beta_ / dt_s;
  const double inv_dt2 = 1.0 / (dt_s * dt_s);
  const double alpha_D = c.alpha_D * inv_dt2, alpha_H = c.alpha_H * inv_dt2;
  Eigen::Map<Mat3> lambda_D(lambda);
  const Mat3 R_D = -F - alpha_D * lambda_D - gamma * dF_motion;
  const double R_H = -(F.determinant() - c.gamma_H) - alpha_H * lambda[9] - gamma * dH_motion;
  const Mat3 S = (1.0 + gamma) * B + alpha_D * Mat3::Identity();
  const Mat3 S_inv = S.inverse();  // SPD: B is a Gram matrix, alpha~_D > 0
  const double schur = (1.0 + gamma) * q + alpha_H - (1.0 + gamma) * (1.0 + gamma) * (H * S_inv).cwiseProduct(H).sum();
  for (int a = 0; a < 4; ++a) (*delta)[a].setZero();
  if (!(schur > 0.0)) return;
  const double dlambda_H = (R_H - (1.0 + gamma) * (R_D * S_inv).cwiseProduct(H).sum()) / schur;
  const Mat3 Lambda = (R_D - (1.0 + gamma) * dlambda_H * H) * S_inv;
  lambda_D += Lambda;
  lambda[9] += dlambda_H;
  for (int a = 0; a < 4; ++a) (*delta)[a] = w[a] * (Lambda * c.beta.col(a) + dlambda_H * h[a]);
}

void FemXpbd::ProjectContacts(double* x, double dt_s) const {
  const auto& objects = model_.collision_objects();
  const bool limited = std::isfinite(max_depenetration_speed_);
  for (const auto& [l, k] : contacts_) {
    Vec3 p(x[3 * l], x[3 * l + 1], x[3 * l + 2]);
    const Vec3 p_prev(x_prev_[3 * l], x_prev_[3 * l + 1], x_prev_[3 * l + 2]);
    Vec3 n;
    // Sec. 4.2: at most v_max dt_s out of the object per substep, C = phi - floor >= 0.
    double floor = 0.0;
    if (limited) {
      Vec3 n_prev;
      floor = std::min(0.0, objects[k].SignedDistance(p_prev, &n_prev) + max_depenetration_speed_ * dt_s);
    }
    const double phi = objects[k].SignedDistance(p, &n);
    if (!ProjectPointContact(&p, p_prev, phi, n, floor, objects[k].friction())) continue;
    for (int d = 0; d < 3; ++d) x[3 * l + d] = p[d];
  }
}

void FemXpbd::ConstraintPass(double dt_s) {
  const PetscInt n_owned = model_.mesh().n_owned;
  for (int c = 0; c < n_colors_; ++c) {
    {
      ScopedPhase timed(kXpbdProjectPhase);
      Vec xl = nullptr, dl = nullptr;
      PetscScalar *x = nullptr, *d = nullptr;
      OPTISTEP_PETSC(VecGhostGetLocalForm(xs_, &xl));
      OPTISTEP_PETSC(VecGhostGetLocalForm(dx_, &dl));
      OPTISTEP_PETSC(VecSet(dl, 0.0));
      OPTISTEP_PETSC(VecGetArray(xl, &x));
      OPTISTEP_PETSC(VecGetArray(dl, &d));
      std::array<Vec3, 4> delta;
      for (size_t t = color_begin_[c]; t < color_begin_[c + 1]; ++t) {
        const TetConstraint& tc = tets_[t];
        ProjectTet(tc, dt_s, &lambda_[kLambdas * t], x, &delta);
        // Owned nodes move here; a ghost's correction goes to its owner.
        for (int a = 0; a < 4; ++a) {
          const int n = tc.nodes[a];
          double* target = n < n_owned ? x : d;
          for (int k = 0; k < 3; ++k) target[3 * n + k] += delta[a][k];
        }
      }
      projections_ += 2.0 * static_cast<double>(color_begin_[c + 1] - color_begin_[c]);
      OPTISTEP_PETSC(VecRestoreArray(dl, &d));
      OPTISTEP_PETSC(VecRestoreArray(xl, &x));
      OPTISTEP_PETSC(VecGhostRestoreLocalForm(dx_, &dl));
      OPTISTEP_PETSC(VecGhostRestoreLocalForm(xs_, &xl));
    }
    {
      ScopedPhase timed(kXpbdHaloPhase);
      halo_exchanges_ += 1.0;
      OPTISTEP_PETSC(VecGhostUpdateBegin(dx_, ADD_VALUES, SCATTER_REVERSE));
      OPTISTEP_PETSC(VecGhostUpdateEnd(dx_, ADD_VALUES, SCATTER_REVERSE));
    }
    // A node has at most one correction per color: adding it is exact, so the owner
    // ends where the projecting rank would have put it. Exact zeros are skipped (-0.0).
    PetscScalar* x = nullptr;
    const PetscScalar* d = nullptr;
    OPTISTEP_PETSC(VecGetArray(xs_, &x));
    OPTISTEP_PETSC(VecGetArrayRead(dx_, &d));
    for (PetscInt i = 0; i < 3 * n_owned; ++i)
      if (d[i] != 0.0) x[i] += d[i];
    OPTISTEP_PETSC(VecRestoreArrayRead(dx_, &d));
    OPTISTEP_PETSC(VecRestoreArray(xs_, &x));
    RefreshGhosts();
  }
  if (!model_.collision_objects().empty()) {  // collective: the same on every rank
    PetscScalar* x = nullptr;
    OPTISTEP_PETSC(VecGetArray(xs_, &x));
    ProjectContacts(x, dt_s);
    OPTISTEP_PETSC(VecRestoreArray(xs_, &x));
    RefreshGhosts();
  }
}

void FemXpbd::JacobiPass(double dt_s) {
  const PetscInt n_owned = model_.mesh().n_owned;
  {
    ScopedPhase timed(kXpbdProjectPhase);
    Vec xl = nullptr;
    PetscScalar* x = nullptr;
    OPTISTEP_PETSC(VecGhostGetLocalForm(xs_, &xl));
    OPTISTEP_PETSC(VecGetArray(xl, &x));
    std::fill(jacobi_delta_.begin(), jacobi_delta_.end(), 0.0);
    std::array<Vec3, 4> delta;
    for (size_t t = 0; t < tets_.size(); ++t) {
      const TetConstraint& tc = tets_[t];
      ProjectTet(tc, dt_s, &lambda_[kLambdas * t], x, &delta);
      for (int a = 0; a < 4; ++a) {
        const int n = tc.nodes[a];
        if (n >= n_owned) continue;  // its owner projects this tet too
        for (int k = 0; k < 3; ++k) jacobi_delta_[3 * n + k] += delta[a][k];
      }
      if (tet_counted_[t]) projections_ += 2.0;
    }
    // x_i += mean of its tets' corrections (Macklin et al. 2014, Sec. 4.2, omega = 1).
    for (PetscInt i = 0; i < n_owned; ++i)
      if (node_tets_[i] > 0.0)
        for (int k = 0; k < 3; ++k) x[3 * i + k] += jacobi_delta_[3 * i + k] / node_tets_[i];
    if (!model_.collision_objects().empty()) ProjectContacts(x, dt_s);
    OPTISTEP_PETSC(VecRestoreArray(xl, &x));
    OPTISTEP_PETSC(VecGhostRestoreLocalForm(xs_, &xl));
  }
  RefreshGhosts();
}

SolveReport FemXpbd::TryStep(double dt) {
  const DistributedTetMesh& mesh = model_.mesh();
  const PetscInt n_owned = mesh.n_owned;
  const double dt_s = dt / substeps_;
  const Vec3 g = model_.Gravity(t_ + dt);  // gravity_time_function at the step's end
  dt_s_ = dt_s;
  projections_ = 0.0;
  halo_exchanges_ = 0.0;
  FindContacts(dt);
  OPTISTEP_PETSC(VecCopy(x_, xs_));
  OPTISTEP_PETSC(VecCopy(v_, vs_));
  RefreshGhosts();
  for (int s = 0; s < substeps_; ++s) {
    // The substep's end time, as the controller would reach it (no drift across substeps).
    const double t_end = s + 1 == substeps_ ? t_ + dt : t_ + (s + 1) * dt_s;
    {
      Vec xl = nullptr;
      const PetscScalar* x = nullptr;
      OPTISTEP_PETSC(VecGhostGetLocalForm(xs_, &xl));
      OPTISTEP_PETSC(VecGetArrayRead(xl, &x));
      std::copy(x, x + x_prev_.size(), x_prev_.begin());
      OPTISTEP_PETSC(VecRestoreArrayRead(xl, &x));
      OPTISTEP_PETSC(VecGhostRestoreLocalForm(xs_, &xl));
    }
    {
      PetscScalar *x = nullptr, *v = nullptr;
      OPTISTEP_PETSC(VecGetArray(xs_, &x));
      OPTISTEP_PETSC(VecGetArray(vs_, &v));
      for (PetscInt l = 0; l < n_owned; ++l) {
        if (model_.IsConstrained(static_cast<int>(l))) {
          const Vec3 target = model_.DirichletTarget(static_cast<int>(l), t_end);
          for (int d = 0; d < 3; ++d) x[3 * l + d] = target[d];
          continue;
        }
        for (int d = 0; d < 3; ++d) {
          v[3 * l + d] += dt_s * g[d];
          x[3 * l + d] += dt_s * v[3 * l + d];
        }
      }
      OPTISTEP_PETSC(VecRestoreArray(vs_, &v));
      OPTISTEP_PETSC(VecRestoreArray(xs_, &x));
    }
    RefreshGhosts();
    std::fill(lambda_.begin(), lambda_.end(), 0.0);
    for (int it = 0; it < iterations_; ++it) {
      if (jacobi_)
        JacobiPass(dt_s);
      else
        ConstraintPass(dt_s);
    }
    {
      const PetscScalar* x = nullptr;
      PetscScalar* v = nullptr;
      OPTISTEP_PETSC(VecGetArrayRead(xs_, &x));
      OPTISTEP_PETSC(VecGetArray(vs_, &v));
      for (PetscInt i = 0; i < 3 * n_owned; ++i) v[i] = (x[i] - x_prev_[i]) / dt_s;
      OPTISTEP_PETSC(VecRestoreArray(vs_, &v));
      OPTISTEP_PETSC(VecRestoreArrayRead(xs_, &x));
    }
  }
  SolveReport report;
  report.iterations = substeps_ * iterations_;
  if (!AllFinite(xs_) || !AllFinite(vs_)) {
    report.reason = "NaN in the XPBD positions or velocities";
    return report;
  }
  // The largest volume change |det F - 1| over the tets, for stats.csv.
  double volume_error = 0.0;
  {
    Vec xl = nullptr;
    const PetscScalar* x = nullptr;
    OPTISTEP_PETSC(VecGhostGetLocalForm(xs_, &xl));
    OPTISTEP_PETSC(VecGetArrayRead(xl, &x));
    for (const TetConstraint& tc : tets_)  // Jacobi: the ghost layer's tets too (max: no matter)
      volume_error = std::max(
          volume_error,
          std::abs(DeformationGradient(TetPositions(x, tc.nodes), tc.beta).determinant() - 1.0));
    OPTISTEP_PETSC(VecRestoreArrayRead(xl, &x));
    OPTISTEP_PETSC(VecGhostRestoreLocalForm(xs_, &xl));
  }
  double sums[1] = {projections_};
  MPI_Allreduce(MPI_IN_PLACE, &volume_error, 1, MPI_DOUBLE, MPI_MAX, mesh.comm);
  MPI_Allreduce(MPI_IN_PLACE, sums, 1, MPI_DOUBLE, MPI_SUM, mesh.comm);
  projections_ = sums[0];
  volume_change_ = volume_error;
  OPTISTEP_PETSC(VecCopy(xs_, x_));
  OPTISTEP_PETSC(VecCopy(vs_, v_));
  report.converged = true;
  report.reason = "substeps done";
  t_ += dt;
  ++steps_;
  return report;
}

}  // namespace optistep
