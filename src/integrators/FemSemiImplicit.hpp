#pragma once
// The semi-implicit scheme of Schroeder, Kwatra, Zheng, Fedkiw 2010, "Asynchronous Evolution
// for Fully-Implicit and Semi-Implicit Time Integration", Sec. 3.1 (after Su, Schroeder,
// Irving, Fedkiw 2009), on a tet mesh:
//   v^(n+1/2) = v^n + dt/2 a(t^(n+1/2), x^n, v^(n+1/2))
//   x^(n+1)   = x^n + dt v^(n+1/2)
//   v^(n+1)   = v^n + dt a(t^(n+1), x^(n+1), v^(n+1))
// a = M^-1 (f_e(x) + f_c(x) + f_d(v)) + g: elastic and penalty contact forces explicit,
// Rayleigh damping f_d = -beta K(x) v implicit (a CG solve, KSP prefix semi_implicit_, on
// M + h beta K(x)), gravity exact. Dirichlet nodes move to their targets at t^(n+1).
// Step limit (Integrator::MaxStep): dt_max = sqrt(2) / max_e w_e, w_e the largest element
// frequency at the rest shape (the element eigenvalue inequality).
// Contract: only x, v and the clock cross steps.
// The scheme's stability, the bound and the limits: docs/methods/semi-implicit.md.
#include <petscksp.h>

#include <memory>
#include <string>
#include <vector>

#include "core/PetscHandles.hpp"
#include "fem/FemIncrementalPotential.hpp"
#include "fem/FemModel.hpp"
#include "integrators/Integrator.hpp"

namespace optistep {

class RigidForceDistribution;

class FemSemiImplicit : public Integrator {
 public:
  /// Collective. x (m) and v (m/s) are the model's ghosted node vectors that TryStep
  /// advances in place. InputError (naming the scene and the key) for a collision object
  /// with friction: the scheme does not apply Coulomb friction.
  FemSemiImplicit(const IntegratorConfig& config, FemModel& model, Vec x, Vec v)
      : FemSemiImplicit(config, model, x, v, {}, nullptr) {}
  /// The surface-layer substeps of integrators/FemAsync: the elastic forces of the tets
  /// with active[e] != 0 only (all when empty), and, when distribution is not null, the
  /// forces on its nodes distributed by it (Schroeder et al. 2010 Sec. 5) before every
  /// kick; the CFL step is over the active tets. distribution must outlive this object.
  FemSemiImplicit(const IntegratorConfig& config, FemModel& model, Vec x, Vec v, std::vector<char> active,
                  const RigidForceDistribution* distribution);
  ~FemSemiImplicit() override;

  const char* Name() const override { return "semi_implicit"; }
  std::string Method() const override { return "semi_implicit"; }
  std::string Describe() const override;
  /// Collective. Never fails but for a NaN (the state is then unchanged).
  SolveReport TryStep(double dt) override;
  bool HasStepLimit() const override { return true; }
  /// sqrt(2) / max_e w_e (s), see the file comment; fixed by the rest shape.
  double MaxStep() const override { return dt_cfl_; }
  /// Also forgets the forces kept from the last step (a restart brings another state).
  void SetClock(double t, long steps) override {
    Integrator::SetClock(t, steps);
    forces_current_ = false;
  }

  /// Collective. Forces (N) on the owned nodes at positions x (a ghosted node vector, m):
  /// f_e + f_c + M g over the tets with active[e] (all when active is empty), zero rows at
  /// Dirichlet nodes. Into f (owned values). external false: f_e alone (no gravity, no
  /// penalty contacts).
  void Forces(Vec x, const std::vector<char>& active, Vec f, bool external = true);
  /// Collective. The substeps' forces: Forces(x, active tets, f), then the force
  /// distribution, if any (integrators/FemAsync).
  void SubstepForces(Vec x, Vec f);
  /// Largest element frequency w_e (1/s) over the (active) tets (collective in the constructor).
  double MaxElementFrequency() const { return w_max_; }
  /// Forgets the forces kept from the last step: x was changed by someone else.
  void ForgetForces() { forces_current_ = false; }

 private:
  /// v_owned += h M^-1 f at free nodes.
  void Kick(Vec v, Vec f, double h) const;
  /// Implicit Rayleigh damping: v <- v + delta, (M + h beta K(x)) delta = -h beta K(x) v on
  /// the free rows (delta = 0 at Dirichlet nodes).
  void Damp(Vec x, Vec v, double h);

  FemModel& model_;
  Vec x_;
  Vec v_;
  std::vector<char> active_;
  const RigidForceDistribution* distribution_ = nullptr;
  double beta_ = 0.0;
  double w_max_ = 0.0;
  double dt_cfl_ = 0.0;
  /// Forces at x_ (the end of the last step: they start the next one); a function of x_
  /// alone, recomputed bit for bit when forces_current_ is false, so not checkpointed.
  OwnedVec f_;
  bool forces_current_ = false;
  OwnedVec x_new_;
  OwnedVec v_half_;
  OwnedVec v_new_;
  OwnedVec local_;  ///< ghosted work vector for force evaluations
  // Damping only: its matrix, the mass diagonal, and CG.
  std::unique_ptr<FemIncrementalPotential> stiffness_source_;
  OwnedMat K_;
  OwnedVec mass_diagonal_;
  OwnedVec rhs_;
  OwnedVec delta_;
  OwnedKsp ksp_;
  long damping_iterations_ = 0;
};

}  // namespace optistep
