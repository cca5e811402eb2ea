#pragma once
// Picks the L-BFGS initializer H0^-1 by name (solver.initializer, -<minimizer>initializer;
// the types: solvers/Initializer.hpp).
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "solvers/Initializer.hpp"

namespace optistep {

/// Collective on comm: the initializer named type (InitializerTypes()) with the scene's
/// solver block and the discretization's defaults (subdomains: its dot block); InputError
/// naming `source` (the option or scene key) otherwise.
std::unique_ptr<InverseHessianInitializer> CreateInitializer(MPI_Comm comm, const std::string& type,
                                                             const SolverConfig& config,
                                                             const MinimizerDefaults& defaults,
                                                             const std::string& source);
/// The names CreateInitializer knows, for messages and -help.
const std::vector<std::string>& InitializerTypes();

}  // namespace optistep
