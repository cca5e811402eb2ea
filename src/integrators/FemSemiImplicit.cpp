#include "integrators/FemSemiImplicit.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <sstream>

#include "core/Error.hpp"
#include "core/FiniteVector.hpp"
#include "core/GhostedVector.hpp"
#include "core/Phases.hpp"
#include "fem/TetElement.hpp"
#include "integrators/AsyncRegions.hpp"
#include "solvers/Initializer.hpp"

namespace optistep {
namespace {

const Phase kExplicitForcesPhase("ExplicitForces");
const Phase kDampingSolvePhase("DampingSolve");

}  // namespace

FemSemiImplicit::FemSemiImplicit(const IntegratorConfig& config, FemModel& model, Vec x, Vec v, std::vector<char> active,
                                 const RigidForceDistribution* distribution)
    : model_(model),
      x_(x),
      v_(v),
      active_(std::move(active)),
      distribution_(distribution),
      beta_(config.damping.stiffness_beta) {
  const ModelConfig& scene = model_.scene();
  // Element eigenvalue bound (file comment): w_e^2 = lambda_max(K_e) / (rho V / 4) at rest.
  const DistributedTetMesh& mesh = model_.mesh();
  double w2 = 0.0;
  for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
    if (!mesh.tet_counted[e] || (!active_.empty() && !active_[e])) continue;
    const int te = static_cast<int>(e);
    const double V = model_.RestVolume(te);
    const Eigen::Matrix<double, 9, 12> B = DeformationGradientJacobian(model_.Beta(te));
    const Eigen::Matrix<double, 12, 12> K =
        V * (B.transpose() * model_.MaterialOf(te).dPdF(Mat3::Identity(), false) * B);
    const double rho = scene.bodies[mesh.tet_body[e]].material.density;
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 12, 12>> eigen(K, Eigen::EigenvaluesOnly);
    w2 = std::max(w2, eigen.eigenvalues().maxCoeff() / (rho * V / 4.0));
  }
  MPI_Allreduce(MPI_IN_PLACE, &w2, 1, MPI_DOUBLE, MPI_MAX, model_.comm());
  w_max_ = std::sqrt(w2);
  dt_cfl_ = w_max_ > 0.0 ? std::sqrt(2.0) / w_max_ : INFINITY;

  f_.reset(model_.CreateNodeVector());
  for (Vec* w : {x_new_.out(), v_half_.out(), v_new_.out(), local_.out()})
    OPTISTEP_PETSC(VecDuplicate(f_, w));
  if (beta_ > 0.0) {
    stiffness_source_ = std::make_unique<FemIncrementalPotential>(model_, 0.0);
    K_.reset(stiffness_source_->CreateHessian());
    OPTISTEP_PETSC(VecDuplicate(f_, mass_diagonal_.out()));
    OPTISTEP_PETSC(VecDuplicate(f_, rhs_.out()));
    OPTISTEP_PETSC(VecDuplicate(f_, delta_.out()));
    {
      const VecArray m(mass_diagonal_);
      for (PetscInt l = 0; l < mesh.n_owned; ++l)
        for (int d = 0; d < 3; ++d) m[3 * l + d] = model_.Mass(static_cast<int>(l));
    }
    OPTISTEP_PETSC(KSPCreate(model_.comm(), ksp_.out()));
    OPTISTEP_PETSC(KSPSetOptionsPrefix(ksp_, "semi_implicit_"));
    OPTISTEP_PETSC(KSPSetType(ksp_, KSPCG));
    PC pc = nullptr;
    OPTISTEP_PETSC(KSPGetPC(ksp_, &pc));
    OPTISTEP_PETSC(PCSetType(pc, PCJACOBI));
    OPTISTEP_PETSC(KSPSetTolerances(ksp_, 1e-10, 1e-50, PETSC_DEFAULT, PETSC_DEFAULT));
    CallReadingOptions("semi_implicit_", [&] { return KSPSetFromOptions(ksp_); });
  }
}

FemSemiImplicit::~FemSemiImplicit() = default;

std::string FemSemiImplicit::Describe() const {
  std::ostringstream s;
  s << "semi_implicit (Schroeder et al. 2010 Sec. 3.1), CFL step " << dt_cfl_
    << " s (max element frequency " << w_max_ << " 1/s)";
  if (beta_ > 0.0) s << ", implicit Rayleigh damping beta " << beta_ << " s (CG, prefix semi_implicit_)";
  return s.str();
}

void FemSemiImplicit::Forces(Vec x, const std::vector<char>& active, Vec f, bool external) {
  ScopedPhase timed(kExplicitForcesPhase);
  const DistributedTetMesh& mesh = model_.mesh();
  if (x != local_) OPTISTEP_PETSC(VecCopy(x, local_));
  const GhostedLocalView local(local_);
  const PetscScalar* xl = local.data();
  OPTISTEP_PETSC(VecSet(f, 0.0));
  const VecArray fa(f);
  // f_e = -dPsi/dx_a = -V P beta_a, one loop over local tets (as FemIncrementalPotential).
  for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
    if (!active.empty() && !active[e]) continue;
    const auto& t = mesh.tets[e];
    const int te = static_cast<int>(e);
    const auto& beta = model_.Beta(te);
    Mat3 P;
    model_.MaterialOf(te).PsiAndP(DeformationGradient(TetPositions(xl, t), beta), &P);
    const Eigen::Matrix<double, 3, 4> forces = model_.RestVolume(te) * P * beta;
    for (int a = 0; a < 4; ++a)
      if (t[a] < mesh.n_owned)
        for (int d = 0; d < 3; ++d) fa[3 * t[a] + d] -= forces(d, a);
  }
  // Gravity and the penalty contact forces, node by node.
  const Vec3& g = model_.gravity();
  for (PetscInt l = 0; l < mesh.n_owned; ++l) {
    if (model_.IsConstrained(static_cast<int>(l))) {
      for (int d = 0; d < 3; ++d) fa[3 * l + d] = 0.0;
      continue;
    }
    if (!external) continue;
    const double m = model_.Mass(static_cast<int>(l));
    const Vec3 xi(xl[3 * l], xl[3 * l + 1], xl[3 * l + 2]);
    Vec3 grad = Vec3::Zero();
    for (const auto& c : model_.collision_objects()) c.Penalty(xi, m, &grad, nullptr);
    for (int d = 0; d < 3; ++d) fa[3 * l + d] += m * g[d] - grad[d];
  }
}

void FemSemiImplicit::SubstepForces(Vec x, Vec f) {
  Forces(x, active_, f);
  if (distribution_) distribution_->Apply(x, f);
}

void FemSemiImplicit::Kick(Vec v, Vec f, double h) const {
  const VecArray va(v);
  const VecArrayRead fa(f);
  for (PetscInt l = 0; l < model_.mesh().n_owned; ++l) {
    if (model_.IsConstrained(static_cast<int>(l))) continue;
    const double h_over_m = h / model_.Mass(static_cast<int>(l));
    for (int d = 0; d < 3; ++d) va[3 * l + d] += h_over_m * fa[3 * l + d];
  }
}

void FemSemiImplicit::Damp(Vec x, Vec v, double h) {
  if (!(beta_ > 0.0)) return;
  ScopedPhase timed(kDampingSolvePhase);
  // K(x) without its Dirichlet columns: the damping of a free node by a moving Dirichlet
  // neighbour is in the right-hand side -h beta K v through the element loop's full K v.
  stiffness_source_->Stiffness(x, K_);
  // rhs = -h beta K v on the free rows, with K v over all columns (Dirichlet ones too).
  OPTISTEP_PETSC(VecCopy(v, local_));
  const DistributedTetMesh& mesh = model_.mesh();
  {
    // K v element by element, K_e at x (SPD-projected, as the assembled matrix).
    const GhostedLocalView xv(x);
    const GhostedLocalView vv(local_);
    OPTISTEP_PETSC(VecSet(rhs_, 0.0));
    const VecArray r(rhs_);
    for (std::size_t e = 0; e < mesh.tets.size(); ++e) {
      const auto& t = mesh.tets[e];
      const int te = static_cast<int>(e);
      const auto& beta = model_.Beta(te);
      const Eigen::Matrix<double, 9, 12> B = DeformationGradientJacobian(beta);
      const Mat9 dPdF =
          model_.MaterialOf(te).dPdF(DeformationGradient(TetPositions(xv.data(), t), beta), true);
      Eigen::Matrix<double, 12, 1> ve;
      for (int a = 0; a < 4; ++a)
        for (int d = 0; d < 3; ++d) ve[3 * a + d] = vv.data()[3 * t[a] + d];
      const Eigen::Matrix<double, 12, 1> Kv = model_.RestVolume(te) * (B.transpose() * (dPdF * (B * ve)));
      for (int a = 0; a < 4; ++a)
        if (t[a] < mesh.n_owned && !model_.IsConstrained(t[a]))
          for (int d = 0; d < 3; ++d) r[3 * t[a] + d] -= h * beta_ * Kv[3 * a + d];
    }
  }
  OPTISTEP_PETSC(MatScale(K_, h * beta_));
  OPTISTEP_PETSC(MatDiagonalSet(K_, mass_diagonal_, ADD_VALUES));
  OPTISTEP_PETSC(KSPSetOperators(ksp_, K_, K_));
  damping_iterations_ += SolveCountingIterations(ksp_, rhs_, delta_);
  OPTISTEP_PETSC(VecAXPY(v, 1.0, delta_));
}

SolveReport FemSemiImplicit::TryStep(double dt) {
  const DistributedTetMesh& mesh = model_.mesh();
  const double t_next = t_ + dt;
  damping_iterations_ = 0;
  // v^(n+1/2) = v^n + dt/2 a(x^n, v^(n+1/2)); Dirichlet nodes at the velocity that takes
  // them to their targets at t^(n+1).
  if (!forces_current_) SubstepForces(x_, f_);
  forces_current_ = false;
  OPTISTEP_PETSC(VecCopy(v_, v_half_));
  Kick(v_half_, f_, 0.5 * dt);
  {
    const VecArray va(v_half_);
    const VecArrayRead xo(x_);
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      if (model_.IsConstrained(static_cast<int>(l))) {
        const Vec3 target = model_.DirichletTarget(static_cast<int>(l), t_next);
        for (int d = 0; d < 3; ++d) va[3 * l + d] = (target[d] - xo[3 * l + d]) / dt;
      }
  }
  // A PETSc error in a damping solve is a failed try (retried with dt/2); the state of the
  // step's start is untouched until the end.
  SolveReport report;
  const auto damped = [&](Vec x, Vec v, double h) {
    try {
      Damp(x, v, h);
      return true;
    } catch (const SolveError& e) {
      report.linear_iterations = static_cast<int>(damping_iterations_);
      report.reason = "the damping solve raised " + std::string(e.what());
      return false;
    }
  };
  if (!damped(x_, v_half_, 0.5 * dt)) return report;
  // x^(n+1) = x^n + dt v^(n+1/2); Dirichlet nodes exactly on their targets.
  OPTISTEP_PETSC(VecWAXPY(x_new_, dt, v_half_, x_));
  {
    const VecArray xa(x_new_);
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      if (model_.IsConstrained(static_cast<int>(l))) {
        const Vec3 target = model_.DirichletTarget(static_cast<int>(l), t_next);
        for (int d = 0; d < 3; ++d) xa[3 * l + d] = target[d];
      }
  }
  // v^(n+1) = v^n + dt a(x^(n+1), v^(n+1)); Dirichlet nodes keep the velocity of their move.
  SubstepForces(x_new_, f_);
  OPTISTEP_PETSC(VecCopy(v_, v_new_));
  Kick(v_new_, f_, dt);
  {
    const VecArray va(v_new_);
    const VecArrayRead vh(v_half_);
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      if (model_.IsConstrained(static_cast<int>(l)))
        for (int d = 0; d < 3; ++d) va[3 * l + d] = vh[3 * l + d];
  }
  if (!damped(x_new_, v_new_, dt)) return report;

  report.linear_iterations = static_cast<int>(damping_iterations_);
  if (!AllFinite(x_new_) || !AllFinite(v_new_)) {
    report.reason = "NaN or infinity in the new state (is dt above the CFL step?)";
    return report;
  }
  OPTISTEP_PETSC(VecCopy(x_new_, x_));
  OPTISTEP_PETSC(VecCopy(v_new_, v_));
  t_ = t_next;
  ++steps_;
  forces_current_ = true;  // f_ = f(x^(n+1)), the next step's f(x^n)
  report.converged = true;
  report.reason = "explicit step";
  return report;
}

}  // namespace optistep
