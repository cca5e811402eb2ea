#pragma once
// Projected Newton with line search (PN-PCG), Gast, Schroeder, Stomakhin, Jiang, Teran
// 2015, "Optimization Integrator for Large Time Steps", Sec. 3.1: the Newton direction from a
// KSP (CG by default, Jacobi for FEM, point-block Jacobi for MPM) started at zero with the
// adaptive forcing term rtol = min(1/2, sigma sqrt(max(|g|, floor))), |g| as solver.forcing
// says; CG stops early on indefiniteness; a downhill check (kappa), a step clamp (l); the
// shared strong-Wolfe line search (solvers/LineSearch.hpp) and termination
// (solvers/ConvergenceTest.hpp), after at least one iteration.
// Options prefix "newton_" (-newton_max_it, -newton_kappa, -newton_forcing, ...; the KSP's
// -newton_ksp_*, -newton_pc_*; the line search's -newton_tao_ls_*); -help lists them.
// With the PC type mg (solver.method: newton_mg) the preconditioner is a multigrid V-cycle
// (PN-MGPCG): on MPM HOT's grid multigrid (solvers/GridMultigrid.hpp), on FEM the
// embedded-grid one (solvers/TetGridMultigrid.hpp) behind a PCSHELL timed as VCycle.
// The method, its defaults and their sources: docs/methods/newton.md; the options:
// docs/user/solver-options.md.
#include <petscksp.h>

#include <memory>
#include <string>

#include "core/PetscHandles.hpp"
#include "solvers/GridMultigrid.hpp"
#include "solvers/Minimizer.hpp"
#include "solvers/TetGridMultigrid.hpp"

namespace optistep {

extern const Phase kLinearSolvePhase;

class NewtonMinimizer : public Minimizer {
 public:
  /// Collective on comm: Create. Defaults come from the scene's solver block and the
  /// discretization's defaults; call SetFromOptions and SetUp before Minimize. type:
  /// kNewton or kNewtonMg (newton_mg's default PC is the grid multigrid, on a tet mesh the
  /// embedded-grid one).
  NewtonMinimizer(MPI_Comm comm, const SolverConfig& config, const MinimizerDefaults& defaults,
                  MinimizerMethod type = MinimizerMethod::kNewton);
  ~NewtonMinimizer() override;

  const char* Type() const override { return ToString(type_).c_str(); }
  const char* HessianType() const override { return multigrid_ ? MATBAIJ : tet_multigrid_ ? MATAIJ : nullptr; }
  SolveReport Minimize(IncrementalPotential& potential, Vec u) override;

 private:
  PetscErrorCode AddOptions(PetscOptionItems* PetscOptionsObject) override;
  void SetUpObjects() override;
  void ViewMethod(PetscViewer viewer) const override;
  /// Collective. CG relative tolerance for the Newton direction at gradient g (after
  /// KSPSetOperators), per forcing_; scratch is a vector of g's layout that is overwritten.
  double ForcingTerm(Vec g, double gnorm, double cn, double tolerance_norm, Vec scratch);

  MinimizerMethod type_;
  MinimizerDefaults defaults_;
  SolverConfig config_;
  /// The grid multigrid when the PC type is mg on an MPM grid.
  std::unique_ptr<GridMultigrid> multigrid_;
  /// The embedded-grid multigrid when the PC type is mg on a tet mesh.
  std::unique_ptr<TetGridMultigrid> tet_multigrid_;
  double kappa_;
  double step_clamp_;
  double forcing_sigma_;
  Forcing forcing_;
  OwnedKsp ksp_;
  /// PC gamg without -<prefix>pc_gamg_reuse_interpolation: its aggregates and interpolation
  /// are built from each step's first Hessian and kept for the step's later Newton
  /// iterations, which form only the Galerkin products again (built per step, so a restart
  /// takes the same preconditioners).
  bool gamg_reuse_in_step_ = false;
};

}  // namespace optistep
