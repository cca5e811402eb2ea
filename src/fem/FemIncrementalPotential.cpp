#include "fem/FemIncrementalPotential.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/Error.hpp"
#include "core/GhostedVector.hpp"
#include "core/Phases.hpp"
#include "fem/TetElement.hpp"

namespace optistep {

FemIncrementalPotential::FemIncrementalPotential(FemModel& model, double damping_beta)
    : model_(model), beta_(damping_beta), loads_(model) {
  const DistributedTetMesh& mesh = model_.mesh();
  elements_.n_owned = static_cast<int>(mesh.n_owned);
  elements_.local_to_global = mesh.local_to_global;
  elements_.tets = mesh.tets;
  elements_.counted.assign(mesh.tet_counted.begin(), mesh.tet_counted.end());
  elements_.node_original_id = mesh.node_original_id;
  elements_.tet_original_id = mesh.tet_original_id;
  std::vector<int> held(model_.scene().bodies.size(), 0);
  for (PetscInt l = 0; l < mesh.n_owned; ++l)
    if (model_.IsConstrained(static_cast<int>(l))) held[mesh.node_body[l]] = 1;
  MPI_Allreduce(MPI_IN_PLACE, held.data(), static_cast<int>(held.size()), MPI_INT, MPI_MAX,
                model_.comm());
  body_held_.assign(held.begin(), held.end());
  nodes_.X.resize(mesh.n_owned);
  nodes_.body.resize(mesh.n_owned);
  nodes_.held.resize(mesh.n_owned);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    for (int d = 0; d < 3; ++d) nodes_.X[l][d] = mesh.X[l][d];
    nodes_.body[l] = mesh.node_body[l];
    nodes_.held[l] = model_.IsConstrained(static_cast<int>(l)) ? 1 : 0;
  }
  nodes_.first_global = mesh.node_begin;
  nodes_.n_global = mesh.n_global_nodes;
  nodes_.n_bodies = static_cast<int>(held.size());
  double counted_volume = 0.0;
  for (size_t e = 0; e < mesh.tets.size(); ++e)
    if (mesh.tet_counted[e]) counted_volume += model_.RestVolume(static_cast<int>(e));
  MPI_Allreduce(&counted_volume, &nodes_.volume, 1, MPI_DOUBLE, MPI_SUM, model_.comm());
  body_stiffness_volume_.assign(held.size(), 0.0);
  for (size_t e = 0; e < mesh.tets.size(); ++e)
    if (mesh.tet_counted[e])
      body_stiffness_volume_[mesh.tet_body[e]] +=
          model_.RestVolume(static_cast<int>(e)) *
          model_.MaterialOf(static_cast<int>(e)).dPdF(Mat3::Identity(), false).norm();
  MPI_Allreduce(MPI_IN_PLACE, body_stiffness_volume_.data(),
                static_cast<int>(body_stiffness_volume_.size()), MPI_DOUBLE, MPI_SUM, model_.comm());
  x_n_.reset(model_.CreateNodeVector());
  OPTISTEP_PETSC(VecDuplicate(x_n_, x_hat_.out()));
  OPTISTEP_PETSC(VecDuplicate(x_n_, x_local_.out()));
  OPTISTEP_PETSC(VecDuplicate(x_n_, work_.out()));
  OPTISTEP_PETSC(VecDuplicate(x_n_, work2_.out()));
  // Only with an object that has friction: a frictionless scene then runs the same
  // solves, to the bit, under either friction model.
  bool any_friction = false;
  for (const auto& c : model_.collision_objects()) any_friction |= c.friction() > 0.0;
  if (model_.friction().model == FrictionModel::kPotential && any_friction)
    friction_ = std::make_unique<FrictionPotential>(model_, model_.friction().epsilon_v);
  if (ContactDamping::Wanted(model_)) contact_damping_ = std::make_unique<ContactDamping>(model_);
  const SelfContactConfig& contact = model_.self_contact();
  if (contact.enabled) self_contact_ = std::make_unique<SelfContact>(model_, contact.stiffness);
  if (ConstraintCollisions::Any(model_)) {
    constraints_ = std::make_unique<ConstraintCollisions>(model_);
    OPTISTEP_PETSC(VecDuplicate(x_n_, cached_point_.out()));
    OPTISTEP_PETSC(VecDuplicate(x_n_, cached_gradient_.out()));
  }
  guard_contact_ = contact.line_search_guard;
}

FemIncrementalPotential::~FemIncrementalPotential() = default;

std::unique_ptr<GhostedLocalView> FemIncrementalPotential::LoadLocal(Vec x) {
  if (x != x_local_) OPTISTEP_PETSC(VecCopy(x, x_local_));
  return std::make_unique<GhostedLocalView>(x_local_);
}

void FemIncrementalPotential::BeginStep(Vec x_n, Vec v_n, double dt, double t_next) {
  dt_ = dt;
  t_next_ = t_next;
  gravity_ = model_.Gravity(t_next);
  loads_.SetTime(t_next);
  model_.SetCollisionTime(t_next);  // penalties against the objects at t_{n+1}
  OPTISTEP_PETSC(VecCopy(x_n, x_n_));
  OPTISTEP_PETSC(VecWAXPY(x_hat_, dt, v_n, x_n));
  if (beta_ > 0.0) {
    if (!stiffness_n_) stiffness_n_.reset(NewHessianMatrix());
    const auto local = LoadLocal(x_n_);
    AccumulateElasticHessian(local->data());
    rows_.Insert(stiffness_n_);
    if (constraints_) damping_rows_ = rows_.values();
  }
  if (constraints_) constraints_->Clear();  // before lagging: no constraint force yet
  cached_ = false;
  if (friction_) LagFriction(x_n_);
  if (contact_damping_) {
    const VecArrayRead xn(x_n_);
    contact_damping_->Lag(xn.data(), dt_);
  }
  contact_counts_ = {};
}

FemIncrementalPotential::ContactCounts FemIncrementalPotential::StepContactCounts() const {
  ContactCounts counts = contact_counts_;
  if (self_contact_) counts.pairs = self_contact_->PairCount();
  return counts;
}

void FemIncrementalPotential::LagFriction(Vec x) {
  cached_ = false;
  const VecArrayRead xa(x), xn(x_n_);
  friction_->Lag(xa.data(), xn.data(), dt_, constraints_.get());
}

double FemIncrementalPotential::ExternalLoadNorm() const {
  double sum = 0.0;
  const double g2 = (load_scale_ * model_.gravity()).squaredNorm();
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l)
    if (!model_.IsConstrained(static_cast<int>(l))) {
      const double m = model_.Mass(static_cast<int>(l));
      sum += m * m * g2;
    }
  if (!loads_.empty()) sum += loads_.PeakForceSquaredNorm();
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, model_.comm());
  return std::sqrt(sum);
}

void FemIncrementalPotential::ApplyDirichlet(Vec x) const {
  const VecArray xa(x);
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l)
    if (model_.IsConstrained(static_cast<int>(l))) {
      const Vec3 target = model_.DirichletTarget(static_cast<int>(l), t_next_);
      for (int d = 0; d < 3; ++d) xa[3 * l + d] = target[d];
    }
}

void FemIncrementalPotential::Project(Vec d) const {
  {
    const VecArray da(d);
    for (PetscInt l = 0; l < model_.mesh().n_owned; ++l)
      if (model_.IsConstrained(static_cast<int>(l)))
        for (int c = 0; c < 3; ++c) da[3 * l + c] = 0.0;
  }
  if (constraints_) constraints_->ProjectDirection(d);
}

bool FemIncrementalPotential::ProjectIterate(Vec u, Vec g, PetscReal* energy) {
  if (!constraints_) return false;
  constraints_->Project(u, u);
  // u = P(u): E'(u) and its unconstrained gradient, for the active set. When the last
  // gradient evaluation (the line search's accepted trial, as a rule) projected to this
  // very point under the same active set, it computed them already: bitwise the same.
  PetscBool same = PETSC_FALSE;
  if (cached_) OPTISTEP_PETSC(VecEqual(u, cached_point_, &same));
  if (same == PETSC_TRUE) {
    OPTISTEP_PETSC(VecCopy(cached_gradient_, g));
    *energy = cached_energy_;
  } else {
    raw_ = true;
    *energy = EnergyAndGradient(u, g);
    raw_ = false;
  }
  cached_ = false;  // the active set changes
  constraints_->Register(u, g);
  return true;
}

void FemIncrementalPotential::ProjectOntoConstraints(Vec x) {
  if (constraints_) constraints_->Project(x, x);
}

PetscReal FemIncrementalPotential::Evaluate(Vec x, Vec g) {
  const DistributedTetMesh& mesh = model_.mesh();
  const bool projected = constraints_ && !raw_;
  if (projected) {  // E(x) = E'(P(x)) (Gast Sec. 3.2)
    constraints_->Project(x, x_local_);
    x = x_local_;
  }
  const auto local = LoadLocal(x);
  const PetscScalar* xl = local->data();
  // Restored (reset) before the gradient's vector operations below.
  std::optional<VecArray> g_view;
  if (g) {
    OPTISTEP_PETSC(VecSet(g, 0.0));
    g_view.emplace(g);
  }
  PetscScalar* ga = g_view ? g_view->data() : nullptr;
  double energy = 0.0;
  // Elastic term, eq. 5's sum_e V_e Psi(F_e): one loop over local tets.
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    if (!active_tets_.empty() && !active_tets_[e]) continue;
    const auto& t = mesh.tets[e];
    const auto& beta = model_.Beta(static_cast<int>(e));
    const Mat3 F = DeformationGradient(TetPositions(xl, t), beta);
    const double V = model_.RestVolume(static_cast<int>(e));
    double psi = 0.0;
    if (ga) {
      Mat3 P;
      psi = model_.MaterialOf(static_cast<int>(e)).PsiAndP(F, &P);
      const Eigen::Matrix<double, 3, 4> forces = V * P * beta;  // dPsi/dx_a = V P beta_a
      for (int a = 0; a < 4; ++a)
        if (t[a] < mesh.n_owned)
          for (int d = 0; d < 3; ++d) ga[3 * t[a] + d] += forces(d, a);
    } else {
      psi = model_.MaterialOf(static_cast<int>(e)).Psi(F);
    }
    if (mesh.tet_counted[e]) energy += V * psi;
  }
  // Inertia, gravity, collision penalties, friction and contact damping, node by node
  // (owned nodes).
  const VecArrayRead xh(x_hat_);
  const Vec3 gravity = load_scale_ * gravity_;
  const double inv_dt2 = inertia_ / (dt_ * dt_);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    const double m = model_.Mass(static_cast<int>(l));
    const Vec3 xi(xl[3 * l], xl[3 * l + 1], xl[3 * l + 2]);
    const Vec3 dx = xi - Vec3(xh[3 * l], xh[3 * l + 1], xh[3 * l + 2]);
    if (!external_) {
      energy += 0.5 * m * inv_dt2 * dx.squaredNorm();
      if (ga)
        for (int d = 0; d < 3; ++d) ga[3 * l + d] += m * inv_dt2 * dx[d];
      continue;
    }
    energy += 0.5 * m * inv_dt2 * dx.squaredNorm() - m * gravity.dot(xi);
    Vec3 grad = m * inv_dt2 * dx - m * gravity;
    for (const auto& c : model_.collision_objects()) energy += c.Penalty(xi, m, &grad, nullptr);
    if (friction_) energy += friction_->NodeTerm(static_cast<int>(l), xi, &grad, nullptr);
    if (contact_damping_) energy += contact_damping_->NodeTerm(static_cast<int>(l), xi, &grad, nullptr);
    if (ga)
      for (int d = 0; d < 3; ++d) ga[3 * l + d] += grad[d];
  }
  if (external_ && !loads_.empty()) energy += loads_.Energy(xl, ga);
  const double damping = beta_ > 0.0 ? DampingEnergy(x) : 0.0;
  double total = 0.0;
  bool complete = true;
  if (external_ && self_contact_) {  // Gast et al. 2015 Sec. 5.3
    if (guard_contact_ && std::isfinite(energy_guard_)) {
      // Sec. 3.3: the rest of E first; above the line search's guard the trial is
      // rejected whatever Phi >= 0 adds, and detection is skipped.
      MPI_Allreduce(&energy, &total, 1, MPI_DOUBLE, MPI_SUM, model_.comm());
      complete = !(total + damping > energy_guard_);
    }
    if (complete) {
      ++contact_counts_.evaluations;
      self_contact_->Update(x);
      energy += self_contact_->Energy();
      if (ga) self_contact_->AddGradient(ga);
    } else {
      ++contact_counts_.skipped;
    }
  }
  if (complete) MPI_Allreduce(&energy, &total, 1, MPI_DOUBLE, MPI_SUM, model_.comm());
  g_view.reset();
  ga = nullptr;
  if (beta_ > 0.0) {
    total += damping;
    if (g) OPTISTEP_PETSC(VecAXPY(g, beta_ / dt_, work2_));
  }
  if (g) {  // Dirichlet rows are projected out
    {
      const VecArray gv(g);
      for (PetscInt l = 0; l < mesh.n_owned; ++l)
        if (model_.IsConstrained(static_cast<int>(l)))
          for (int d = 0; d < 3; ++d) gv[3 * l + d] = 0.0;
    }
    if (projected) {  // kept for ProjectIterate at P(x): E'(P(x)) and q before the chain rule
      OPTISTEP_PETSC(VecCopy(x_local_, cached_point_));
      OPTISTEP_PETSC(VecCopy(g, cached_gradient_));
      cached_energy_ = total;
      cached_ = true;
      constraints_->ChainRule(g);
    }
  }
  return total;
}

double FemIncrementalPotential::DampingEnergy(Vec x) {
  OPTISTEP_PETSC(VecWAXPY(work_, -1.0, x_n_, x));
  OPTISTEP_PETSC(MatMult(stiffness_n_, work_, work2_));
  PetscScalar yKy = 0.0;
  OPTISTEP_PETSC(VecDot(work_, work2_, &yKy));
  return 0.5 * beta_ / dt_ * yKy;
}

void FemIncrementalPotential::BuildRowLayout() {
  // Row l (owned node): the nodes sharing a tet with it, sorted by global id, minus
  // constrained columns; a constrained row keeps only its diagonal. tet_slots_ maps each
  // (tet, row corner, column corner) to its block in the row buffers, so assembly sums
  // into them directly and hands PETSc one sorted row at a time.
  const DistributedTetMesh& mesh = model_.mesh();
  std::vector<std::vector<PetscInt>> neighbours(mesh.n_owned);
  for (const auto& t : mesh.tets)
    for (int a = 0; a < 4; ++a)
      if (t[a] < mesh.n_owned)
        for (int b = 0; b < 4; ++b) neighbours[t[a]].push_back(t[b]);
  rows_.Reset(mesh.node_begin);
  row_local_cols_.clear();
  diagonal_slot_.assign(mesh.n_owned, -1);
  std::vector<std::vector<std::pair<PetscInt, int>>> row_slots(mesh.n_owned);  // (local col, slot)
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    auto& n = neighbours[l];
    n.push_back(l);
    std::sort(n.begin(), n.end(), [&](PetscInt a, PetscInt b) {
      return mesh.local_to_global[a] < mesh.local_to_global[b];
    });
    n.erase(std::unique(n.begin(), n.end()), n.end());
    const bool fixed_row = model_.IsConstrained(static_cast<int>(l));
    for (PetscInt c : n) {
      if (c != l && (fixed_row || model_.IsConstrainedLocal(static_cast<int>(c)))) continue;
      const int slot = static_cast<int>(rows_.AddColumn(mesh.local_to_global[c]));
      if (c == l) diagonal_slot_[l] = slot;
      row_slots[l].emplace_back(c, slot);
      row_local_cols_.push_back(c);
    }
    std::sort(row_slots[l].begin(), row_slots[l].end());
    rows_.EndRow();
  }
  tet_slots_.assign(16 * mesh.tets.size(), -1);
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    const auto& t = mesh.tets[e];
    for (int a = 0; a < 4; ++a) {
      if (t[a] >= mesh.n_owned) continue;
      const auto& slots = row_slots[t[a]];
      for (int b = 0; b < 4; ++b) {
        const auto it = std::lower_bound(slots.begin(), slots.end(), std::pair<PetscInt, int>(t[b], -1));
        if (it != slots.end() && it->first == t[b]) tet_slots_[16 * e + 4 * a + b] = it->second;
      }
    }
  }
  rows_.Zero();
}

void FemIncrementalPotential::AccumulateElasticHessian(const PetscScalar* xl) {
  if (!rows_.laid_out()) BuildRowLayout();
  rows_.Zero();
  const DistributedTetMesh& mesh = model_.mesh();
  Eigen::Matrix<double, 12, 12> block;
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    if (xl && !active_tets_.empty() && !active_tets_[e]) continue;
    const int* slots = &tet_slots_[16 * e];
    bool any_row = false;
    for (int k = 0; k < 16; ++k) any_row |= slots[k] >= 0;
    if (!any_row) continue;
    const auto& beta = model_.Beta(static_cast<int>(e));
    const ElasticMaterial& material = model_.MaterialOf(static_cast<int>(e));
    Mat9 dPdF;
    if (xl) {
      dPdF = material.dPdF(DeformationGradient(TetPositions(xl, mesh.tets[e]), beta), project_spd_);
    } else {
      // B^T (w I_9) B = w (beta^T beta) (x) I_3: the weighted Laplacian of RestShapeMatrix.
      dPdF = (2.0 * material.Lame().mu + material.Lame().lambda) * Mat9::Identity();
    }
    const Eigen::Matrix<double, 9, 12> B = DeformationGradientJacobian(beta);
    block.noalias() = model_.RestVolume(static_cast<int>(e)) * (B.transpose() * dPdF * B);
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        const int slot = slots[4 * a + b];
        if (slot < 0) continue;
        Eigen::Map<Mat3>(rows_.block(slot)) += block.block<3, 3>(3 * a, 3 * b);
      }
  }
}

void FemIncrementalPotential::Hessian(Vec x, Mat H) {
  const DistributedTetMesh& mesh = model_.mesh();
  {
    ScopedPhase phase(kHessianPhase);
    const auto local = LoadLocal(x);
    const PetscScalar* xl = local->data();
    AccumulateElasticHessian(xl);
    // Inertia m_i/dt^2 I, the (Gauss-Newton) collision penalty, friction and contact
    // damping on the diagonal blocks; Dirichlet rows keep m_i/dt^2 I without inertia (quasi-static).
    const double inv_dt2 = 1.0 / (dt_ * dt_);
    for (PetscInt l = 0; l < mesh.n_owned; ++l) {
      const double m = model_.Mass(static_cast<int>(l));
      Eigen::Map<Mat3> block(rows_.block(diagonal_slot_[l]));
      const bool held = model_.IsConstrained(static_cast<int>(l));
      block += m * (held ? inv_dt2 : inertia_ * inv_dt2) * Mat3::Identity();
      if (external_ && !held) {
        const Vec3 xi(xl[3 * l], xl[3 * l + 1], xl[3 * l + 2]);
        Mat3 penalty = Mat3::Zero();
        for (const auto& c : model_.collision_objects()) c.Penalty(xi, m, nullptr, &penalty);
        if (friction_) friction_->NodeTerm(static_cast<int>(l), xi, nullptr, &penalty);
        if (contact_damping_) contact_damping_->NodeTerm(static_cast<int>(l), xi, nullptr, &penalty);
        block += penalty;
      }
    }
    if (external_ && !loads_.empty())
      loads_.AddHessian(xl, project_spd_, [&](int e, int a, int b, const Mat3& block) {
        const int slot = tet_slots_[16 * static_cast<size_t>(e) + 4 * a + b];
        if (slot >= 0) Eigen::Map<Mat3>(rows_.block(slot)) += block;
      });
  }
  if (constraints_) {  // T H' T on active rows and columns (Gast Sec. 3.2)
    if (beta_ > 0.0)
      for (std::size_t k = 0; k < rows_.values().size(); ++k) rows_.values()[k] += beta_ / dt_ * damping_rows_[k];
    constraints_->ProjectHessian(rows_.row_start(), row_local_cols_, diagonal_slot_, dt_, project_spd_, &rows_.values());
  }
  // Contact blocks add nonzeros outside the tets' pattern: H goes back to the tets'
  // pattern first, so that its pattern (which ILU and ICC follow) is a function of x
  // alone, as after a restart.
  if (self_contact_) Preallocate(H);
  rows_.Insert(H);
  if (external_ && self_contact_) {
    self_contact_->Update(x);
    self_contact_->AddHessian(H, project_spd_);
  }
  if (beta_ > 0.0 && !constraints_) {
    ScopedPhase phase(kAssemblyPhase);
    OPTISTEP_PETSC(MatAXPY(H, beta_ / dt_, stiffness_n_,
                           self_contact_ ? SUBSET_NONZERO_PATTERN : SAME_NONZERO_PATTERN));
  }
}

void FemIncrementalPotential::Stiffness(Vec x, Mat K) {
  {
    ScopedPhase phase(kHessianPhase);
    const auto local = LoadLocal(x);
    AccumulateElasticHessian(local->data());
  }
  rows_.Insert(K);
}

Mat FemIncrementalPotential::RestShapeMatrix() {
  Mat A = NewHessianMatrix();
  AccumulateElasticHessian(nullptr);
  const double inv_dt2 = 1.0 / (dt_ * dt_);
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l)
    Eigen::Map<Mat3>(rows_.block(diagonal_slot_[l])) +=
        model_.Mass(static_cast<int>(l)) * inv_dt2 * Mat3::Identity();
  rows_.Insert(A);
  return A;
}

Mat FemIncrementalPotential::CreateHessian() {
  if (!hessian_) hessian_.reset(NewHessianMatrix());
  return OwnedMat::Shared(hessian_).release();
}

void FemIncrementalPotential::Preallocate(Mat H) {
  if (!rows_.laid_out()) BuildRowLayout();
  rows_.Preallocate(H);
}

Mat FemIncrementalPotential::NewHessianMatrix() {
  if (!rows_.laid_out()) BuildRowLayout();
  // AIJ with block size 3 by default: every PC works on it (GAMG and hypre do not take
  // BAIJ in PETSc 3.18); -hessian_mat_type baij|sbaij selects the blocked formats.
  OwnedMat H(rows_.NewMatrix(model_.comm(), MATAIJ));
  const DistributedTetMesh& mesh = model_.mesh();
  // Local (owned + ghost) numbering, for anything that sets values by local index.
  OPTISTEP_PETSC(MatSetLocalToGlobalMapping(H, model_.LocalToGlobal(), model_.LocalToGlobal()));
  // Rigid-body modes from the reference positions, for algebraic multigrid
  // (-newton_pc_type gamg).
  OwnedVec coords;
  OPTISTEP_PETSC(VecCreateMPI(model_.comm(), 3 * mesh.n_owned, PETSC_DETERMINE, coords.out()));
  OPTISTEP_PETSC(VecSetBlockSize(coords, 3));
  {
    VecArray ca(coords);
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      for (int d = 0; d < 3; ++d) ca[3 * l + d] = mesh.X[l][d];
  }
  OwnedMatNullSpace rigid;
  OPTISTEP_PETSC(MatNullSpaceCreateRigidBody(coords, rigid.out()));
  OPTISTEP_PETSC(MatSetNearNullSpace(H, rigid));
  return H.release();
}

double FemIncrementalPotential::RigidMotionResidual(double epsilon, Vec x, Vec g) {
  // Per body, summed over owned nodes: M, sum m x, sum m |x|^2, sum m |v_n|, the net force
  // R = sum g and sum x cross g; the torque about the center c is sum x cross g - c cross R.
  constexpr int kSums = 12;
  const DistributedTetMesh& mesh = model_.mesh();
  std::vector<double> sums(kSums * body_held_.size(), 0.0);
  const VecArrayRead xa(x), ga(g), xn(x_n_), xh(x_hat_);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    const int b = mesh.node_body[l];
    if (body_held_[b]) continue;
    const double m = model_.Mass(static_cast<int>(l));
    const Vec3 xi(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]);
    const Vec3 gi(ga[3 * l], ga[3 * l + 1], ga[3 * l + 2]);
    const Vec3 step(xh[3 * l] - xn[3 * l], xh[3 * l + 1] - xn[3 * l + 1], xh[3 * l + 2] - xn[3 * l + 2]);
    const Vec3 moment = xi.cross(gi);
    double* s = &sums[kSums * b];
    s[0] += m;
    for (int d = 0; d < 3; ++d) {
      s[1 + d] += m * xi[d];
      s[5 + d] += gi[d];
      s[9 + d] += moment[d];
    }
    s[4] += m * xi.squaredNorm();
    s[8] += m * step.norm() / dt_;
  }
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM,
                model_.comm());
  double worst = 0.0;
  for (std::size_t b = 0; b < body_held_.size(); ++b) {
    const double* s = &sums[kSums * b];
    const double M = s[0];
    if (body_held_[b] || !(M > 0.0)) continue;
    const Vec3 c = Vec3(s[1], s[2], s[3]) / M;
    const Vec3 R(s[5], s[6], s[7]);
    const Vec3 T = Vec3(s[9], s[10], s[11]) - c.cross(R);
    const double r = std::sqrt(std::max(0.0, s[4] / M - c.squaredNorm()));
    // a_b: gravity plus the mean speed at the step's start over dt (what stops the body in
    // one step), the speed counted only when the body moves by more than epsilon of its
    // size in a step: slower motion (round-off velocities of a body at rest) is for the
    // characteristic norm to judge, and a body at rest without gravity has no rigid
    // motion to get wrong.
    const double speed = s[8] / M;
    const double a = gravity_.norm() + (speed * dt_ > epsilon * r ? speed / dt_ : 0.0);
    if (!(a > 0.0)) continue;
    worst = std::max(worst, R.norm() / (epsilon * M * a));
    if (r > 0.0) {
      // Elastic forces carry no net torque in exact arithmetic, but the rotation in P
      // (fixed corotated's polar decomposition, say) is exact only to round-off: their
      // net torque is noise of at most about eps_mach sum_e V_e |dP/dF(I)|_e, which no solve
      // can reduce (docs/methods/newton.md, "Termination"). For very stiff
      // bodies (E ~ 1e17 Pa at dt = 1/40 s) that is the floor of the torque test.
      const double floor = std::numeric_limits<double>::epsilon() * body_stiffness_volume_[b];
      worst = std::max(worst, T.norm() / std::max(epsilon * M * a * r, floor));
    }
  }
  return worst;
}

void FemIncrementalPotential::CharacteristicNormWeights(double epsilon, Vec w) {
  // Node-wise characteristic norm (HOT, Wang et al. 2020, Sec. 5.2, after DOT's CN,
  // Li et al. 2019): tol_i = eps * s_i * A_i with s_i the volume-weighted |dP/dF(I)|_F
  // of the tets around node i (Pa) and A_i = V_i^(2/3) its characteristic area (m^2),
  // V_i = sum_e V_e / 4. tol_i is the force (N) that a 100% strain of the node's
  // surroundings would produce, scaled by eps.
  const DistributedTetMesh& mesh = model_.mesh();
  std::vector<double> stiffness_volume(mesh.n_owned, 0.0), volume(mesh.n_owned, 0.0);
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    const double V = model_.RestVolume(static_cast<int>(e));
    const double s = model_.MaterialOf(static_cast<int>(e)).dPdF(Mat3::Identity(), false).norm();
    for (int a = 0; a < 4; ++a) {
      const int n = mesh.tets[e][a];
      if (n < mesh.n_owned) {
        stiffness_volume[n] += s * V;
        volume[n] += V;
      }
    }
  }
  const VecArray wa(w);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    double tol = PETSC_INFINITY;
    if (!model_.IsConstrained(static_cast<int>(l)) && volume[l] > 0.0)
      tol = epsilon * stiffness_volume[l] / volume[l] * std::pow(volume[l] / 4.0, 2.0 / 3.0);
    for (int d = 0; d < 3; ++d) wa[3 * l + d] = tol;
  }
}

std::vector<std::int64_t> FemIncrementalPotential::PenaltyContacts(Vec x) {
  std::vector<std::int64_t> keys;
  if (!external_) return keys;
  const DistributedTetMesh& mesh = model_.mesh();
  const auto& objects = model_.collision_objects();
  const std::int64_t n_objects = static_cast<std::int64_t>(objects.size());
  if (n_objects > 0) {
    const VecArrayRead xa(x);
    for (PetscInt l = 0; l < mesh.n_owned; ++l) {
      if (model_.IsConstrained(static_cast<int>(l))) continue;
      const Vec3 xi(xa[3 * l], xa[3 * l + 1], xa[3 * l + 2]);
      const double m = model_.Mass(static_cast<int>(l));
      for (std::int64_t k = 0; k < n_objects; ++k)
        if (objects[k].Penalty(xi, m, nullptr, nullptr) > 0.0)
          keys.push_back(static_cast<std::int64_t>(mesh.local_to_global[l]) * n_objects + k);
    }
  }
  if (self_contact_) {
    self_contact_->Update(x);
    const std::int64_t base = static_cast<std::int64_t>(mesh.n_global_nodes) * std::max<std::int64_t>(n_objects, 1);
    for (const SelfContact::Pair& pair : self_contact_->pairs()) keys.push_back(base + pair.p);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace optistep
