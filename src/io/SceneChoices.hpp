#pragma once
// The scene's closed choices as enums: each key whose value is one of a fixed list of names
// is read once into its enum (io/SceneSections.cpp, MapView::Read), and the code that acts on
// it switches on the enum. The names are the scene's spelling, in the order of the enum:
// ToString gives back the name for messages, the step line, stats.csv and the schema, so
// that every text that printed the string prints the same bytes. They live here, beside
// SceneSections, because the structs that hold them do; each enum's comment names the layer
// that acts on it.
#include <cstddef>
#include <string>
#include <vector>

namespace optistep {

/// discretization: tet meshes (fem/), MPM particles on a grid (mpm/), chains and cloths
/// (particles/). The checkpoint header stores the name.
enum class Discretization { kFem, kMpm, kParticles };
/// integrator (integrators/IntegratorFactory.hpp; which discretization takes which:
/// io/SceneCompatibility.hpp).
enum class IntegratorKind { kBackwardEuler, kQuasiStatic, kXpbd, kSemiImplicit, kAsync };
/// friction.model (fem/FemIncrementalPotential, integrators/MpmBackwardEuler).
enum class FrictionModel { kAfterSolve, kPotential };
/// async.coupling (integrators/FemAsync).
enum class AsyncCoupling { kFrame, kPaper };
/// xpbd.order (integrators/FemXpbd).
enum class XpbdOrder { kColoring, kJacobi };
/// solver.method, the default of -solver_method (solvers/MinimizerFactory).
enum class MinimizerMethod { kNewton, kNewtonMg, kLbfgs, kHot, kDot };
/// solver.termination, the default of -<prefix>termination (solvers/ConvergenceTest).
enum class Termination { kCharacteristicNorm, kAbsolute };
/// solver.forcing, the default of -newton_forcing (solvers/NewtonMinimizer).
enum class Forcing { kGradient, kCharacteristicNorm, kPreconditioned };
/// solver.hessian_projection (integrators/FemBackwardEuler, FemQuasiStatic).
enum class HessianProjection { kElement, kNone };
/// collision_objects[].method, FEM (model/CollisionObject, fem/ConstraintCollisions).
enum class CollisionMethod { kPenalty, kConstraint };
/// collision_objects[].boundary, MPM grid nodes at the object (model/CollisionObject).
enum class GridBoundary { kSticky, kSlip };

/// The scene's names of each enum's values, in the enum's order.
inline const std::vector<std::string>& ChoiceNames(Discretization) {
  static const std::vector<std::string> names = {"fem", "mpm", "particles"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(IntegratorKind) {
  static const std::vector<std::string> names = {"backward_euler", "quasi_static", "xpbd",
                                                 "semi_implicit", "async"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(FrictionModel) {
  static const std::vector<std::string> names = {"after_solve", "potential"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(AsyncCoupling) {
  static const std::vector<std::string> names = {"frame", "paper"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(XpbdOrder) {
  static const std::vector<std::string> names = {"coloring", "jacobi"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(MinimizerMethod) {
  static const std::vector<std::string> names = {"newton", "newton_mg", "lbfgs", "hot", "dot"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(Termination) {
  static const std::vector<std::string> names = {"characteristic_norm", "absolute"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(Forcing) {
  static const std::vector<std::string> names = {"gradient", "characteristic_norm", "preconditioned"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(HessianProjection) {
  static const std::vector<std::string> names = {"element", "none"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(CollisionMethod) {
  static const std::vector<std::string> names = {"penalty", "constraint"};
  return names;
}
inline const std::vector<std::string>& ChoiceNames(GridBoundary) {
  static const std::vector<std::string> names = {"sticky", "slip"};
  return names;
}

/// The scene's name of a value ("backward_euler" for IntegratorKind::kBackwardEuler).
template <class Choice>
const std::string& ToString(Choice value) {
  return ChoiceNames(value)[static_cast<std::size_t>(value)];
}

/// The value whose name is `name`; false (and *value unchanged) if none is.
template <class Choice>
bool FromString(const std::string& name, Choice* value) {
  const std::vector<std::string>& names = ChoiceNames(Choice{});
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) {
      *value = static_cast<Choice>(i);
      return true;
    }
  return false;
}

}  // namespace optistep
