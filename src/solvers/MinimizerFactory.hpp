#pragma once
// Picks the minimizer of a time step by name: the scene's solver.method, overridden by
// -solver_method. Names: newton (projected Newton, PN-PCG), newton_mg (PN-MGPCG: newton
// preconditioned by HOT's grid multigrid on MPM, by the embedded-grid multigrid on FEM),
// lbfgs (L-BFGS with an initializer; LBFGS-H
// by default), hot (L-BFGS with HOT's V-cycle initializer; MPM), dot (DOT: L-BFGS with
// subdomain back-solves; FEM).
#include <memory>
#include <string>
#include <vector>

#include "solvers/Minimizer.hpp"

namespace optistep {

/// The method names CreateMinimizer knows.
const std::vector<std::string>& MinimizerTypes();

/// Collective on comm: Create, SetFromOptions and SetUp of the minimizer that -solver_method
/// names, or else config.method; when neither names one (config.method_given false), a FEM
/// mesh (defaults.grid false) of one body and at least kNewtonMgDefaultTets tets
/// (defaults.mesh_tets, mesh_bodies) takes newton_mg. InputError for an unknown name (naming -solver_method or
/// scene_path's solver.method) or a bad option value.
std::unique_ptr<Minimizer> CreateMinimizer(MPI_Comm comm, const SolverConfig& config,
                                           const MinimizerDefaults& defaults,
                                           const std::string& scene_path);

}  // namespace optistep
