#pragma once
// Asynchronous evolution on a tet mesh (Schroeder, Kwatra, Zheng, Fedkiw 2010, "Asynchronous
// Evolution for Fully-Implicit and Semi-Implicit Time Integration", Secs. 4-5), integrator:
// async. One step of size Dt from (x^n, v^n): n = ceil(Dt / dt_cfl) semi-implicit substeps
// (integrators/FemSemiImplicit) with the elastic forces of the surface-layer tets only
// (integrators/AsyncRegions, async.surface_layers), gravity and penalty contacts on every
// node, the forces on the fully implicit region distributed (async.epsilon); then a coupled
// step: the interior tets' elastic forces over the whole step, x minimizing
// |x - x_S|_M^2 / Dt^2 + sum_(e interior) V_e Psi(F_e(x)) by the scene's minimizer, and
// v = v_S + 2 (x - x_S) / Dt. async.coupling: paper replaces it by the paper's coupled last
// substep (by our reading of the authors' PhysBAM code).
// Contract: on failure the state is as before; only x, v and the clock cross steps, so a
// checkpoint of x and v restarts bit for bit. Free fall is exact under both couplings.
// The scheme, what we do differently from the paper and why, and the limits:
// docs/methods/async.md.
#include <memory>
#include <vector>

#include "fem/FemIncrementalPotential.hpp"
#include "fem/FemModel.hpp"
#include "integrators/AsyncRegions.hpp"
#include "integrators/BackwardEuler.hpp"
#include "integrators/KeptState.hpp"
#include "integrators/FemSemiImplicit.hpp"

namespace optistep {

class FemAsync : public BackwardEuler {
 public:
  /// Collective. x (m) and v (m/s): the model's ghosted node vectors that TryStep advances
  /// in place. InputError (scene path and key) for a mesh without interior tets
  /// (async.surface_layers: use semi_implicit), and as FemSemiImplicit (friction).
  FemAsync(const IntegratorConfig& config, FemModel& model, Vec x, Vec v);
  ~FemAsync() override;

  const char* Name() const override { return "async"; }
  std::string Describe() const override;
  /// Collective. On failure (the coupled minimization, a NaN) the state is as before.
  SolveReport TryStep(double dt) override;
  void KeepState() override;
  void RestoreKeptState() override;

  /// The substeps of the last accepted step (stats.csv column "substeps").
  std::vector<std::string> StatsColumns() const override { return {"substeps"}; }
  std::vector<double> StatsValues() const override { return {static_cast<double>(substeps_)}; }
  /// Per-tet "async_region": 1 semi-implicit (surface layer), 0 fully implicit.
  std::vector<std::pair<std::string, std::vector<double>>> FrameCellFields() const override;

  /// Per local tet: 1 in the semi-implicit region.
  const std::vector<char>& region() const { return region_; }
  /// CFL step of the surface-layer tets (s).
  double SubstepLimit() const { return semi_->MaxStep(); }
  /// Per owned node: 1 when no surface-layer tet holds it (async.coupling: paper places
  /// these from the step's start).
  const std::vector<char>& interior_only() const { return interior_only_; }

 private:
  FemModel& model_;
  Vec x_;
  Vec v_;
  std::vector<char> region_;
  std::unique_ptr<RigidForceDistribution> distribution_;
  std::unique_ptr<FemSemiImplicit> semi_;
  FemIncrementalPotential interior_;
  Vec x_start_ = nullptr;
  Vec v_start_ = nullptr;
  Vec x_sub_ = nullptr;
  Vec zero_ = nullptr;
  Vec u_ = nullptr;
  KeptFemState kept_;
  long substeps_ = 0;
  // async.coupling: paper only.
  bool paper_ = false;
  std::vector<char> interior_tets_;
  std::vector<char> interior_only_;
  Vec v_sub_ = nullptr;
  Vec force_ = nullptr;
  Vec interior_force_ = nullptr;

  /// The paper's last substep (file comment, a-d) of size h from (x_, v_) = (x_S, v_S);
  /// x_start_ holds x^n. On failure the caller rewinds.
  SolveReport PaperCoupledSubstep(double dt, double h, double t_next);
};

}  // namespace optistep
