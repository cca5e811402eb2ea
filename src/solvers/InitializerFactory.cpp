#include "solvers/InitializerFactory.hpp"

#include "core/Error.hpp"
#include "solvers/LaggedHessianInitializer.hpp"
#include "solvers/MultigridInitializer.hpp"
#include "solvers/ProjectiveDynamicsInitializer.hpp"
#include "solvers/SubdomainInitializer.hpp"

namespace optistep {
namespace {

class IdentityInitializer : public InverseHessianInitializer {
 public:
  const char* Type() const override { return "identity"; }
  void SetUp(IncrementalPotential&, Vec) override {}
  int Apply(Vec q, Vec r) override {
    OPTISTEP_PETSC(VecCopy(q, r));
    return 0;
  }
  void View(PetscViewer viewer) const override {
    OPTISTEP_PETSC(PetscViewerASCIIPrintf(viewer, "initializer identity (H0 = I)\n"));
  }
};

}  // namespace

const std::vector<std::string>& InitializerTypes() {
  static const std::vector<std::string> types = {"lagged_hessian", "projective_dynamics", "subdomains",
                                                 "jacobi", "identity", "vcycle"};
  return types;
}

std::unique_ptr<InverseHessianInitializer> CreateInitializer(MPI_Comm comm, const std::string& type,
                                                             const SolverConfig& config,
                                                             const MinimizerDefaults& defaults,
                                                             const std::string& source) {
  if (type == "identity") return std::make_unique<IdentityInitializer>();
  if (type == "vcycle") return std::make_unique<MultigridInitializer>(comm, config, defaults);
  if (type == "lagged_hessian" || type == "jacobi")
    return std::make_unique<LaggedHessianInitializer>(comm, defaults, type == "jacobi");
  if (type == "projective_dynamics") return std::make_unique<ProjectiveDynamicsInitializer>(comm);
  if (type == "subdomains") return std::make_unique<SubdomainInitializer>(comm, config.dot, defaults);
  std::string known;
  for (const auto& t : InitializerTypes()) known += (known.empty() ? "" : ", ") + t;
  throw InputError(source + ": '" + type + "' is not an L-BFGS initializer (" + known + ")");
}


}  // namespace optistep
