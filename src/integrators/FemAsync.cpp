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

FemAsync::FemAsync(FemModel& model, Vec x, Vec v)
    : BackwardEuler(model.comm(), model.scene(), MinimizerDefaults{PCJACOBI}),
      model_(model),
      x_(x),
      v_(v),
      region_(SurfaceLayerTets(model, model.scene().async.surface_layers)),
      interior_(model, 0.0) {
  const SceneConfig& scene = model_.scene();
  const DistributedTetMesh& mesh = model_.mesh();
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
  semi_ = std::make_unique<FemSemiImplicit>(model_, x_, v_, region_, distribution_.get());
  std::vector<char> interior(region_.size());
  for (std::size_t e = 0; e < region_.size(); ++e) interior[e] = !region_[e];
  interior_.Restrict(std::move(interior), false);
  for (Vec* w : {&x_start_, &v_start_, &x_sub_, &zero_, &u_}) OPTISTEP_PETSC(VecDuplicate(x_, w));
  OPTISTEP_PETSC(VecSet(zero_, 0.0));
}

FemAsync::~FemAsync() {
  for (Vec* w : {&x_start_, &v_start_, &x_sub_, &zero_, &u_}) VecDestroy(w);
}

std::string FemAsync::Describe() const {
  std::ostringstream s;
  s << "async (Schroeder et al. 2010 Secs. 4-5), " << model_.scene().async.surface_layers
    << " surface layer(s), epsilon " << model_.scene().async.epsilon << ", substep limit "
    << semi_->MaxStep() << " s; interior by minimizer " << minimizer_->Describe();
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
    for (long k = 0; k < n; ++k) {
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

}  // namespace optistep
