#include "integrators/FemAsync.hpp"

#include <cmath>
#include <sstream>

#include "core/Error.hpp"
#include "core/FiniteVector.hpp"
#include "core/Phases.hpp"

namespace optistep {
namespace {

const Phase kSubstepsPhase("AsyncSubsteps");

}  // namespace

FemAsync::FemAsync(const IntegratorConfig& config, FemModel& model, Vec x, Vec v)
    : BackwardEuler(model.comm(), config, model.SolverDefaults()),
      model_(model),
      x_(x),
      v_(v),
      region_(SurfaceLayerTets(model, config.async.surface_layers)),
      interior_(model, 0.0) {
  const IntegratorConfig& scene = config;
  const DistributedTetMesh& mesh = model_.mesh();
  paper_ = scene.async.coupling == AsyncCoupling::kPaper;
  if (paper_) {  // before the region checks: these keys are wrong whatever the mesh
    long dirichlet = 0;
    for (PetscInt l = 0; l < mesh.n_owned; ++l) dirichlet += model_.IsConstrained(static_cast<int>(l));
    MPI_Allreduce(MPI_IN_PLACE, &dirichlet, 1, MPI_LONG, MPI_SUM, model_.comm());
    if (dirichlet > 0)
      throw InputError(scene.path + ": async.coupling: 'paper' takes no Dirichlet nodes (its coupled "
                       "last substep does not move them to their targets); use coupling: frame");
    if (scene.damping.stiffness_beta > 0.0)
      throw InputError(scene.path + ": async.coupling: 'paper' applies no damping in its coupled "
                       "last substep; set damping.stiffness_beta to 0 or use coupling: frame");
  }
  long interior_tets = 0;
  for (std::size_t e = 0; e < mesh.tets.size(); ++e) interior_tets += mesh.tet_counted[e] && !region_[e];
  MPI_Allreduce(MPI_IN_PLACE, &interior_tets, 1, MPI_LONG, MPI_SUM, model_.comm());
  if (interior_tets == 0)
    throw InputError(scene.path + ": async.surface_layers: every tet is within " +
                     std::to_string(scene.async.surface_layers) +
                     " layer(s) of the surface, so no tet is fully implicit; use integrator: "
                     "semi_implicit (or a finer mesh)");
  distribution_ = std::make_unique<RigidForceDistribution>(model_, ImplicitRegionNodes(model_, region_),
                                                           scene.async.epsilon);
  semi_ = std::make_unique<FemSemiImplicit>(config, model_, x_, v_, region_, distribution_.get());
  interior_tets_.resize(region_.size());
  for (std::size_t e = 0; e < region_.size(); ++e) interior_tets_[e] = !region_[e];
  interior_.Restrict(interior_tets_, false);
  for (Vec* w : {&x_start_, &v_start_, &x_sub_, &zero_, &u_}) OPTISTEP_PETSC(VecDuplicate(x_, w));
  OPTISTEP_PETSC(VecSet(zero_, 0.0));
  if (paper_) {
    // Nodes of surface-layer tets (the tets with interior_tets_[e] == 0), then the rest.
    interior_only_ = ImplicitRegionNodes(model_, interior_tets_);
    for (char& c : interior_only_) c = !c;
    for (Vec* w : {&v_sub_, &force_, &interior_force_}) OPTISTEP_PETSC(VecDuplicate(x_, w));
  }
}

FemAsync::~FemAsync() {
  for (Vec* w : {&x_start_, &v_start_, &x_sub_, &zero_, &u_, &v_sub_, &force_, &interior_force_})
    VecDestroy(w);
}

std::string FemAsync::Describe() const {
  std::ostringstream s;
  s << "async (Schroeder et al. 2010 Secs. 4-5), " << scene_.async.surface_layers
    << " surface layer(s), epsilon " << scene_.async.epsilon << ", substep limit "
    << semi_->MaxStep() << " s; " << (paper_ ? "paper's coupled last substep (Sec. 4.3)" : "coupled frame step")
    << ", interior by minimizer " << minimizer_->Describe();
  return s.str();
}

void FemAsync::KeepState() { kept_.Keep(x_, v_, t_, steps_); }

void FemAsync::RestoreKeptState() { kept_.Restore(x_, v_, &t_, &steps_); }

std::vector<std::pair<std::string, std::vector<double>>> FemAsync::FrameCellFields() const {
  std::vector<double> values;
  const DistributedTetMesh& mesh = model_.mesh();
  for (std::size_t e = 0; e < mesh.tets.size(); ++e)
    if (mesh.tet_counted[e]) values.push_back(region_[e] ? 1.0 : 0.0);
  return {{"async_region", std::move(values)}};
}

SolveReport FemAsync::TryStep(double dt) {
  OPTISTEP_PETSC(VecCopy(x_, x_start_));
  OPTISTEP_PETSC(VecCopy(v_, v_start_));
  auto rewind = [&] {
    OPTISTEP_PETSC(VecCopy(x_start_, x_));
    OPTISTEP_PETSC(VecCopy(v_start_, v_));
  };
  const double t_next = t_ + dt;
  // 1. Substeps of the surface layer: n equal steps no longer than its CFL step.
  const long n = std::max(1L, static_cast<long>(std::ceil(dt / semi_->MaxStep() * (1.0 - 1e-12))));
  const double h = dt / static_cast<double>(n);
  semi_->SetClock(t_, 0);  // also forgets kept forces: each step starts from x, v alone
  int linear = 0;
  {
    ScopedPhase timed(kSubstepsPhase);
    // async.coupling: paper: the last substep is the coupled one.
    for (long k = 0; k < (paper_ ? n - 1 : n); ++k) {
      const SolveReport sub = semi_->TryStep(h);
      linear += sub.linear_iterations;
      if (!sub.converged) {
        rewind();
        SolveReport report;
        report.reason = "substep " + std::to_string(k + 1) + " of " + std::to_string(n) + ": " + sub.reason;
        return report;
      }
    }
  }
  if (paper_) {
    SolveReport report = PaperCoupledSubstep(dt, h, t_next);
    report.linear_iterations += linear;
    if (!report.converged || !AllFinite(x_) || !AllFinite(v_)) {
      rewind();
      if (report.converged) report.reason = "NaN in the new state";
      report.converged = false;
      return report;
    }
    t_ = t_next;
    ++steps_;
    substeps_ = n;
    return report;
  }
  // 2. Coupled step: x = argmin |x - x_S|_M^2 / (2 (dt^2 / 2)) + Psi_interior(x), from x_S.
  OPTISTEP_PETSC(VecCopy(x_, x_sub_));
  interior_.BeginStep(x_sub_, zero_, dt / std::sqrt(2.0), t_next);  // x_hat = x_S + 0 = x_S
  OPTISTEP_PETSC(VecCopy(x_sub_, u_));
  interior_.ApplyDirichlet(u_);
  SolveReport report = minimizer_->Minimize(interior_, u_);
  report.linear_iterations += linear;
  if (!report.converged) {
    rewind();
    return report;
  }
  // v = v_S + dt M^-1 f_I(x) = v_S + 2 (x - x_S) / dt (zero at Dirichlet rows); x = u.
  OPTISTEP_PETSC(VecAXPY(x_sub_, -1.0, u_));  // x_S - x
  OPTISTEP_PETSC(VecAXPY(v_, -2.0 / dt, x_sub_));
  if (!AllFinite(v_)) {
    rewind();
    report.converged = false;
    report.reason = "NaN in the new velocity";
    return report;
  }
  OPTISTEP_PETSC(VecCopy(u_, x_));
  t_ = t_next;
  ++steps_;
  substeps_ = n;
  return report;
}

SolveReport FemAsync::PaperCoupledSubstep(double dt, double h, double t_next) {
  const DistributedTetMesh& mesh = model_.mesh();
  const double r = dt / h, alpha = 2.0 * r - 1.0;
  OPTISTEP_PETSC(VecCopy(x_, x_sub_));
  OPTISTEP_PETSC(VecCopy(v_, v_sub_));
  // a. z = x^n + alpha h v_B minimizes |z - x_hat|_M^2 / (2 (alpha h)^2) + Psi_I(z) with
  //    x_hat = x^n + alpha h (v_S + h M^-1 f_S(x_S)); from x_hat.
  semi_->SubstepForces(x_sub_, force_);
  {
    const VecArray u(u_);
    const VecArrayRead xn(x_start_);
    const VecArrayRead vs(v_sub_);
    const VecArrayRead f(force_);
    for (PetscInt l = 0; l < mesh.n_owned; ++l) {
      const double h_over_m = h / model_.Mass(static_cast<int>(l));
      for (int d = 0; d < 3; ++d) {
        const PetscInt i = 3 * l + d;
        u[i] = xn[i] + alpha * h * (vs[i] + h_over_m * f[i]);
      }
    }
  }
  interior_.BeginStep(u_, zero_, alpha * h, t_next);
  SolveReport report = minimizer_->Minimize(interior_, u_);
  if (!report.converged) return report;
  // b, c. v_B = (z - x^n) / (alpha h), v_H = (v_S + v_B) / 2; x = x_S + h v_H, the
  //    interior-only nodes x^n + Dt (v^n + v_B) / 2 (not the paper's x^n + Dt v_H: file
  //    comment).
  {
    const VecArray x(x_);
    const VecArrayRead z(u_);
    const VecArrayRead xn(x_start_);
    const VecArrayRead vn(v_start_);
    const VecArrayRead xs(x_sub_);
    const VecArrayRead vs(v_sub_);
    for (PetscInt l = 0; l < mesh.n_owned; ++l)
      for (int d = 0; d < 3; ++d) {
        const PetscInt i = 3 * l + d;
        const double v_b = (z[i] - xn[i]) / (alpha * h);
        x[i] = interior_only_[l] ? xn[i] + dt * (0.5 * (vn[i] + v_b)) : xs[i] + h * (0.5 * (vs[i] + v_b));
      }
  }
  // d. v = v_S + h M^-1 (f_S(x) + r f_I(z)): the interior forces of the implicit update a.
  semi_->ForgetForces();
  semi_->SubstepForces(x_, force_);
  semi_->Forces(u_, interior_tets_, interior_force_, false);
  {
    const VecArray v(v_);
    const VecArrayRead vs(v_sub_);
    const VecArrayRead f(force_);
    const VecArrayRead fi(interior_force_);
    for (PetscInt l = 0; l < mesh.n_owned; ++l) {
      const double h_over_m = h / model_.Mass(static_cast<int>(l));
      for (int d = 0; d < 3; ++d) {
        const PetscInt i = 3 * l + d;
        v[i] = vs[i] + h_over_m * (f[i] + r * fi[i]);
      }
    }
  }
  return report;
}

}  // namespace optistep
