#include "integrators/MpmBackwardEuler.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "core/PetscHandles.hpp"
#include "model/TimeFunction.hpp"
#include "mpm/MpmIncrementalPotential.hpp"
#include "mpm/MpmLoads.hpp"

namespace optistep {
namespace {

const Phase kHaloExchangePhase("HaloExchange");
const Phase kP2GPhase("P2G");
const Phase kG2PPhase("G2P");
const Phase kMigrationPhase("Migration");

}  // namespace

MpmBackwardEuler::MpmBackwardEuler(const IntegratorConfig& scene, mpm::MpmDomain& domain,
                                   const mpm::MpmModel& model)
    // CG preconditioned by the inverse 3x3 diagonal blocks, as HOT's PN-PCG (reference
    // code, -Ainv 1).
    : BackwardEuler(domain.comm(), scene, MinimizerDefaults{PCPBJACOBI, true}), domain_(domain), model_(model) {}

double MpmBackwardEuler::MaxStep() const {
  const mpm::Particles& p = domain_.particles();
  double v_max = 0.0;
  for (std::size_t k = 0; k < domain_.n_owned(); ++k) {
    v_max = std::max(v_max, p.v[k].norm());
    // Moving objects near the particle count too (HOT Sec. 7.1: v_max includes them).
    for (const auto& o : model_.objects) {
      if (!o.moving()) continue;
      Vec3 n;
      if (o.SignedDistanceAt(p.x[k], t_, &n) < 2.0 * scene_.mpm.dx)
        v_max = std::max(v_max, o.VelocityAt(p.x[k], t_).norm());
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &v_max, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return v_max > 0.0 ? scene_.mpm.cfl * scene_.mpm.dx / v_max : INFINITY;
}

std::vector<mpm::NodeConstraint> MpmBackwardEuler::NodeConstraints(const mpm::StepGrid& step,
                                                                   double dt) const {
  std::vector<mpm::NodeConstraint> constraints(step.grid.NodeCount());
  const Vec3 gravity = UniformAcceleration(scene_, t_ + dt);
  for (int i = 0; i < step.grid.NodeCount(); ++i) {
    if (step.local_form[i] < 0) continue;
    const Vec3 x = mpm::NodePosition(step.grid.Node(i), scene_.mpm.dx);
    const Vec3 v(step.grid.v[3 * i], step.grid.v[3 * i + 1], step.grid.v[3 * i + 2]);
    for (const auto& o : model_.objects) {
      Vec3 n;
      if (o.SignedDistanceAt(x, t_, &n) > 0.0) continue;
      mpm::NodeConstraint& c = constraints[i];
      c.velocity = o.VelocityAt(x, t_ + 0.5 * dt);
      c.friction = o.friction();
      if (o.sticky()) {
        c.kind = mpm::NodeConstraint::Kind::kSticky;
      } else {
        // Slip only while approaching, judged by the velocity gravity alone would give at
        // the end of the step: a body resting on the object has grid velocities near zero
        // and must still be held, or it sinks by about dt^2 |g| per step.
        const double approach = -n.dot(v + dt * gravity - c.velocity);
        if (approach > 0.0) {
          c.kind = mpm::NodeConstraint::Kind::kSlip;
          c.normal = n;
        }
      }
      break;
    }
  }
  return constraints;
}

SolveReport MpmBackwardEuler::TryStep(double dt) {
  {
    ScopedPhase timed(kHaloExchangePhase);
    domain_.ExchangeHalo();
  }
  mpm::StepGrid step(scene_.mpm.dx);
  {
    ScopedPhase timed(kP2GPhase);
    domain_.BuildStepGrid(&step);
  }
  mpm::MpmIncrementalPotential potential(domain_, step, model_.materials, model_.plasticity,
                                         NodeConstraints(step, dt), dt,
                                         UniformAcceleration(scene_, t_ + dt),
                                         scene_.mpm.matrix_free, minimizer_->HessianType());
  if (mpm::HasPointLoads(scene_) || !model_.particle_forces.empty()) {
    std::vector<double> f = mpm::HasPointLoads(scene_)
                                ? mpm::NodalPointLoads(scene_, domain_, step, t_ + dt)
                                : std::vector<double>(3 * static_cast<std::size_t>(step.grid.NodeCount()), 0.0);
    mpm::AddNodalParticleForces(scene_, model_.particle_forces, domain_, step, t_ + dt, &f);
    potential.SetNodalForces(std::move(f));
  }
  // Owned: a StepFailure below (CheckReach, a NaN after G2P) unwinds past the step's end.
  OwnedVec dv(potential.CreateVector()), guess, bounded;
  OPTISTEP_PETSC(VecDuplicate(dv, guess.out()));
  potential.InitialGuess(dv, false);
  potential.InitialGuess(guess, true);
  TakeBetterStart(potential, dv, guess);
  SolveReport report = minimizer_->Minimize(potential, dv);
  // Friction as a potential (friction.model: potential): IPC's lagged friction on the slip
  // nodes (Li et al. 2020, Sec. 5), the normal impulses lagged at the frictionless solve
  // and then at each friction solve's result, lagged_updates friction solves in all; none
  // in a step without a slip node with friction (a body in flight).
  if (scene_.friction.model == FrictionModel::kPotential && potential.HasSlipFriction()) {
    report = LaggedFrictionSolves(potential, dv, scene_.friction.lagged_updates, report, [&] {
      const std::vector<double> normal_impulse = potential.NormalImpulses(dv);
      potential.SetFrictionPotential(normal_impulse, scene_.friction.epsilon_v);
      // Also from the Coulomb bound after the solve applied to that solve's result, and
      // from dv = 0 on the free components: nodes that stop start in the stiff static
      // regime of f_0 instead of reaching it by line-search cuts from the slide.
      if (!bounded) OPTISTEP_PETSC(VecDuplicate(dv, bounded.out()));
      OPTISTEP_PETSC(VecCopy(dv, bounded));
      potential.ApplyCoulombBound(normal_impulse, bounded);
      potential.InitialGuess(guess, false);
      TakeBetterStart(potential, guess, bounded);
      TakeBetterStart(potential, dv, guess);
    });
  }
  std::vector<double> v_new;
  if (report.converged) {
    potential.NewGridVelocities(dv, &v_new);
    // Reject a NaN before any particle changes: finite grid velocities give a finite G2P.
    int finite = std::all_of(v_new.begin(), v_new.end(), [](double x) { return std::isfinite(x); });
    MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, comm_);
    if (!finite) {
      report.converged = false;
      report.reason = "NaN in the new grid velocities";
    }
  }
  if (report.converged) CheckReach(step, v_new, dt);
  if (report.converged) {
    mpm::Particles& particles = domain_.particles();
    {
      ScopedPhase timed(kG2PPhase);
      mpm::G2P(step.cache, step.grid, v_new.data(), scene_.mpm.flip, &particles);
      mpm::UpdateDeformationGradients(step.cache, dt, v_new.data(), &particles);
    }
    mpm::ApplyReturnMapping(model_.materials, model_.plasticity, &particles);
    domain_.DropHalo();
    bool finite = true;
    for (std::size_t p = 0; p < domain_.n_owned(); ++p) {
      particles.x[p] += dt * particles.v[p];
      finite &= particles.x[p].allFinite() && particles.F[p].allFinite();
    }
    int all_finite = finite ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &all_finite, 1, MPI_INT, MPI_MIN, comm_);
    if (!all_finite)
      throw StepFailure("NaN in the particle state after the step at t = " + std::to_string(t_),
                        SmallerStepRemedy(false));
    {
      ScopedPhase timed(kMigrationPhase);
      balance_ = domain_.Rebalance();
    }
    t_ += dt;
    ++steps_;
    step_ = report;
  } else {
    domain_.DropHalo();
  }
  return report;
}

void MpmBackwardEuler::CheckReach(const mpm::StepGrid& step, const std::vector<double>& v_new,
                                  double dt) const {
  // G2P gives each particle a weighted mean of the new grid velocities (APIC) plus, for
  // FLIP, its old velocity and the old grid velocities' mean: |v_p| is at most
  // max |v_new| + flip (|v_p,old| + max |v_old|), so |x_p + dt v_p| is bounded by `reach`.
  auto max_speed = [](const std::vector<double>& v) {
    double most = 0.0;
    for (std::size_t i = 0; i + 2 < v.size(); i += 3)
      most = std::max(most, Vec3(v[i], v[i + 1], v[i + 2]).norm());
    return most;
  };
  const mpm::Particles& p = domain_.particles();
  double values[3] = {max_speed(v_new), max_speed(step.grid.v), 0.0};  // then max |x|, |v_p|
  double particle_speed = 0.0;
  for (std::size_t k = 0; k < domain_.n_owned(); ++k) {
    values[2] = std::max(values[2], p.x[k].norm());
    particle_speed = std::max(particle_speed, p.v[k].norm());
  }
  values[1] += particle_speed;
  MPI_Allreduce(MPI_IN_PLACE, values, 3, MPI_DOUBLE, MPI_MAX, comm_);
  const double speed = values[0] + scene_.mpm.flip * values[1];
  const double reach = values[2] + dt * speed;
  const double range = static_cast<double>(mpm::LocalGrid::kMaxBlockCoordinate) *
                       mpm::LocalGrid::kBlockWidth * scene_.mpm.dx;
  if (reach < 0.5 * range) return;
  std::ostringstream message;
  message.precision(3);
  message << "MPM: the step of dt = " << dt << " s to t = " << t_ + dt
          << " s would carry particles up to " << reach << " m from the origin (new grid speeds up to "
          << values[0] << " m/s), beyond half the sparse grid's range of " << range
          << " m (2^20 blocks of 4 dx; a free body under a net force F moves F dt^2 / M in a "
             "step)";
  throw StepFailure(message.str());
}

std::vector<std::string> MpmBackwardEuler::BalanceColumns() {
  return {"particles", "imbalance", "migrated", "repartitioned"};
}

std::vector<std::string> MpmBackwardEuler::StatsColumns() const {
  std::vector<std::string> columns = BalanceColumns();
  for (const std::string& c : minimizer_->StatsColumns()) columns.push_back(c);
  return columns;
}

std::vector<double> MpmBackwardEuler::StatsValues() const {
  const long long most = balance_.particles_per_rank.empty()
                             ? 0
                             : *std::max_element(balance_.particles_per_rank.begin(),
                                                 balance_.particles_per_rank.end());
  std::vector<double> values = {static_cast<double>(most), balance_.imbalance,
                                static_cast<double>(balance_.migrated), balance_.repartitioned ? 1.0 : 0.0};
  for (double v : BackwardEuler::StatsValues()) values.push_back(v);
  return values;
}

}  // namespace optistep
