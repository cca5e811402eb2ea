#include "solvers/MinimizerFactory.hpp"

#include <algorithm>

#include "core/Error.hpp"
#include "solvers/LbfgsMinimizer.hpp"
#include "solvers/NewtonMinimizer.hpp"

namespace optistep {
namespace {

/// -solver_method, inside its own options block so -help lists it.
PetscErrorCode ReadMethodOption(MPI_Comm comm, std::string* method, PetscBool* set) {
  char name[64];
  PetscStrncpy(name, method->c_str(), sizeof name);
  PetscOptionsBegin(comm, "solver_", "Minimizer of each time step", "Minimizer");
  PetscCall(PetscOptionsString("-method", "newton (PN-PCG, Gast et al. 2015), newton_mg (PN-MGPCG: on MPM HOT's "
                               "grid multigrid, on FEM the embedded-grid one), "
                               "lbfgs (L-BFGS; LBFGS-H by default), hot (Wang et al. 2020; MPM) or dot "
                               "(DOT, Li et al. 2019; FEM) (scene: solver.method)",
                               "", name, name, sizeof name, set));
  PetscOptionsEnd();
  *method = name;
  return 0;
}

std::string KnownNames() {
  std::string known;
  for (const auto& t : MinimizerTypes()) known += (known.empty() ? "" : ", ") + t;
  return known;
}

}  // namespace

const std::vector<std::string>& MinimizerTypes() {
  return ChoiceNames(MinimizerMethod{});
}

std::unique_ptr<Minimizer> CreateMinimizer(MPI_Comm comm, const SolverConfig& config,
                                           const MinimizerDefaults& defaults,
                                           const std::string& scene_path) {
  // The scene's method, or when it names none the one for the mesh's size; -help shows it.
  MinimizerMethod method = config.method;
  if (!config.method_given && !defaults.grid && defaults.mesh_tets >= kNewtonMgDefaultTets && defaults.mesh_bodies == 1)
    method = MinimizerMethod::kNewtonMg;
  std::string name = ToString(method);
  PetscBool set = PETSC_FALSE;
  OPTISTEP_PETSC(ReadMethodOption(comm, &name, &set));
  // Where the name came from, for the messages: the option or the scene key (which the
  // scene reader has checked).
  const std::string source = set ? std::string("-solver_method") : scene_path + ": solver.method";
  if (!FromString(name, &method))
    throw InputError(source + ": '" + name + "' is not a minimizer (" + KnownNames() + ")");
  if (method == MinimizerMethod::kHot && !defaults.grid)
    throw InputError(source + ": 'hot' needs the MPM grid (its multigrid embeds grid nodes); expected "
                     "discretization: mpm (on a tet mesh: newton_mg, or lbfgs with solver.initializer: vcycle)");
  if (method == MinimizerMethod::kDot && defaults.grid)
    throw InputError(source + ": 'dot' needs a tet mesh (its subdomains are sets of tets); "
                     "expected discretization: fem");
  std::unique_ptr<Minimizer> minimizer;
  if (method == MinimizerMethod::kLbfgs)
    minimizer = std::make_unique<LbfgsMinimizer>(comm, config, defaults, LbfgsMethod::Lbfgs(config));
  else if (method == MinimizerMethod::kHot)
    minimizer = std::make_unique<LbfgsMinimizer>(comm, config, defaults, LbfgsMethod::Hot(config));
  else if (method == MinimizerMethod::kDot)
    minimizer = std::make_unique<LbfgsMinimizer>(comm, config, defaults, LbfgsMethod::Dot());
  else
    minimizer = std::make_unique<NewtonMinimizer>(comm, config, defaults, method);
  minimizer->SetFromOptions();
  minimizer->SetUp();
  return minimizer;
}

}  // namespace optistep
