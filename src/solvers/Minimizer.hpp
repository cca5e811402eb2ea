#pragma once
// A minimizer drives an IncrementalPotential from a start vector to a minimizer. Every
// minimizer is a PETSc-style object with an options prefix and one life cycle
// (docs/dev/ARCHITECTURE.md):
//
//   auto m = CreateMinimizer(comm, scene.solver, defaults);  // Create (solvers/MinimizerFactory)
//   m->SetFromOptions();   // the scene's solver block gives the defaults, the options
//                          // database (-<prefix>...) overrides them; -help lists them all
//   m->SetUp();            // KSPs, line search, initializer; -<prefix>view prints View()
//   m->Minimize(potential, u);   // once per time step (and per retry)
//   // destruction is Destroy
//
// Shared pieces: ConvergenceTest (termination), LineSearch (strong Wolfe), the finite
// checks and the reset when the vector layout changes (MPM: every step).
#include <petscksp.h>
#include <petscvec.h>
#include <petscviewer.h>

#include <string>
#include <vector>

#include "io/SceneSections.hpp"
#include "solvers/ConvergenceTest.hpp"
#include "solvers/IncrementalPotential.hpp"
#include "solvers/LineSearch.hpp"

namespace optistep {

class CheckpointReader;
class CheckpointWriter;

/// What one minimization did.
struct SolveReport {
  bool converged = false;
  int iterations = 0;                ///< outer (Newton / L-BFGS) iterations
  int linear_iterations = 0;         ///< inner Krylov iterations, summed (Newton's CG, an initializer's)
  int initializer_applications = 0;  ///< L-BFGS: applications of H0^-1; 0 for Newton
  double energy = 0.0;               ///< E at the returned iterate
  double cn_residual = 0.0;          ///< sqrt(sum_i |g_i|^2 / tol_i^2 / n_nodes); < 1 means converged
  double rigid_residual = 0.0;       ///< IncrementalPotential::RigidMotionResidual over rigid_epsilon; < 1 means met
  double gradient_norm = 0.0;        ///< |g|_2 at the returned iterate
  int refreshes = 0;                 ///< L-BFGS: set-ups of H0^-1 within the solve (refresh)
  std::string reason;                ///< "converged", "line search found no decrease", "NaN", ...
  /// A stop signal ended the solve (core/StopSignals.hpp): the step is to be abandoned, not
  /// retried.
  bool abandoned = false;
};

/// Defaults that depend on the discretization rather than on the scene.
struct MinimizerDefaults {
  /// Preconditioner of the linear solves (Newton's CG, LBFGS-H's initializer): Jacobi for
  /// FEM, the inverse 3x3 diagonal blocks for MPM (HOT's PN-PCG, -Ainv 1).
  std::string pc = "jacobi";
  /// The potentials offer IncrementalPotential::Grid() (MPM), on which the multigrid of
  /// methods hot and newton_mg is HOT's grid multigrid; otherwise (FEM) they offer
  /// IncrementalPotential::Nodes() and the multigrid is the embedded-grid one.
  bool grid = false;
  /// FEM: the scene's tets on all ranks and its bodies (copies counted), which pick the
  /// method when the scene names none (kNewtonMgDefaultTets, io/SceneSections.hpp); 0 for MPM.
  double mesh_tets = 0.0;
  int mesh_bodies = 0;
};

/// Collective: makes ksp poll for a step to abandon every 16 iterations
/// (StopSignals::StepMustBeAbandoned) and end early when it is; its own convergence test
/// is kept and decides otherwise. Call after KSPSetFromOptions.
void AbandonableKrylov(KSP ksp);

class Minimizer {
 public:
  virtual ~Minimizer();
  Minimizer(const Minimizer&) = delete;
  Minimizer& operator=(const Minimizer&) = delete;

  /// The method's name as in solver.method ("newton", "newton_mg", "lbfgs", "hot").
  virtual const char* Type() const = 0;
  /// After SetUp: the Hessian storage the method needs (MATBAIJ for the grid multigrid,
  /// which reads 3x3 blocks), or null for the discretization's default; -hessian_mat_type overrides
  /// either (src/mpm/MpmIncrementalPotential.hpp).
  virtual const char* HessianType() const { return nullptr; }
  const std::string& prefix() const { return prefix_; }
  /// "newton, termination characteristic_norm (epsilon 1e-05)": the type and its
  /// termination, for a run's summary (View has the rest).
  std::string Describe() const { return std::string(Type()) + ", " + termination_.Describe(); }

  /// Collective. Reads -<prefix>... inside PetscOptionsBegin/End: -help lists every option
  /// with its current value (from the scene) and its scene key. Throws InputError for a
  /// bad value, naming the option (PETSc's own errors included: -newton_pc_type nonsense).
  void SetFromOptions();
  /// Collective, after SetFromOptions: creates the PETSc objects; with -<prefix>view,
  /// prints View() on rank 0.
  void SetUp();
  /// Collective: the configuration (method, parameters, sources, PETSc sub-objects).
  void View(PetscViewer viewer) const;

  /// Collective. u: start on entry (constraints satisfied), the minimizer on return when
  /// converged, otherwise the last accepted iterate. Never returns NaN in u: a NaN energy
  /// stops with reason "NaN ...".
  virtual SolveReport Minimize(IncrementalPotential& potential, Vec u) = 0;

  /// The method's own stats.csv columns and their values for a step whose solves `step`
  /// reports (summed over them when a step takes several: lagged friction); none by default.
  virtual std::vector<std::string> StatsColumns() const { return {}; }
  virtual std::vector<double> StatsValues(const SolveReport& step) const {
    (void)step;
    return {};
  }
  /// Collective: state that crosses steps into a checkpoint, and back (before the next
  /// Minimize; same_ranks: written on this rank count and partition). None by default:
  /// a minimizer keeps nothing between steps unless an initializer lags its factors.
  virtual void SaveState(CheckpointWriter& out) { (void)out; }
  virtual void LoadState(const CheckpointReader& in, bool same_ranks) {
    (void)in;
    (void)same_ranks;
  }

 protected:
  /// options_title: the heading -help prints for this minimizer's options;
  /// line_search_type: the TaoLineSearch type unless -<prefix>tao_ls_type says otherwise.
  Minimizer(MPI_Comm comm, std::string prefix, std::string options_title, const SolverConfig& config,
            const char* line_search_type = TAOLINESEARCHMT);

  /// The method's own options (inside the options block, after the shared ones).
  virtual PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject) = 0;
  /// Creates and configures the method's PETSc objects (KSPSetFromOptions ...).
  virtual void SetUpObjects() {}
  /// The method's own lines of View (ASCII viewer).
  virtual void ViewMethod(PetscViewer viewer) const = 0;
  /// Collective: true when u's layout differs from the previous solve's (the MPM grid
  /// changes every step); the line search is then reset (the method resets its own
  /// objects).
  bool LayoutChanged(Vec u);
  /// Collective: records an iterate's E and residual measures (ConvergenceTest::Measure)
  /// in report and says whether the solve stops there: a NaN, convergence by the shared
  /// test (after at least one iteration), a stop signal that abandons the step (Abandon,
  /// polling the ranks), or the iteration cap; report's converged, abandoned and reason say
  /// which.
  bool Stop(SolveReport* report, double energy, const Residual& residual) const;
  /// Collective. The end of an iteration's line search from the iterate with these
  /// measures: counts the iteration and takes the search's E (J) into *energy. When E fell,
  /// u is the new iterate (IncrementalPotential::ProjectIterate: with constraint
  /// collisions, u projected and E and g taken there) and the result is true. Otherwise
  /// the solve ends (false) with report->energy that E: converged if the measures meet the
  /// test anyway (a start already at the minimizer, e.g. a body at rest without gravity,
  /// has nothing to decrease), else failed, naming the reason (a NaN, no decrease, or
  /// PETSc's message when the search raised one, which is never converged).
  bool AcceptSearch(IncrementalPotential& potential, Vec u, Vec g, const LineSearch::Result& searched,
                    const Residual& residual, double* energy, SolveReport* report) const;
  /// Whether the step under way is to be abandoned (core/StopSignals.hpp); if so, report
  /// says so. poll: ask the ranks (collective, once per outer iteration); otherwise only
  /// look whether they have agreed already (after a Krylov solve that AbandonableKrylov
  /// cut short).
  bool Abandon(SolveReport* report, bool poll) const;
  /// Collective: prints one -<prefix>monitor line on rank 0.
  void Monitor(const char* format, ...) const;

  MPI_Comm comm_;
  std::string prefix_;
  std::string options_title_;
  ConvergenceTest termination_;
  LineSearch line_search_;
  int max_iterations_;
  /// Iterations the solve under way may take beyond max_iterations_ (L-BFGS's refresh at
  /// the cap); set by the method per solve.
  int iteration_cap_extension_ = 0;
  PetscBool monitor_ = PETSC_FALSE;
  PetscBool view_ = PETSC_FALSE;

 private:
  PetscErrorCode ReadOptions();
  PetscInt last_local_size_ = -1;
};

}  // namespace optistep
