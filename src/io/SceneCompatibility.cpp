#include "io/SceneCompatibility.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/Error.hpp"

namespace optistep {
namespace {

using I = IntegratorKind;
using D = Discretization;

/// The scene's integrator in the potential-only rules' messages: " on particles" for chains
/// and cloths.
std::string With(const IntegratorConfig& scene) {
  return "is not available with integrator: " + ToString(scene.integrator) +
         (scene.discretization == D::kParticles ? " on particles" : "");
}

std::string Item(const char* list, std::size_t i, const char* key) {
  return std::string(list) + "[" + std::to_string(i) + "]." + key;
}

/// The first collision object with damping > 0, the message ending in `why`.
Refusal ContactDamping(const IntegratorConfig& scene, const std::string& why) {
  for (std::size_t i = 0; i < scene.collision_objects.size(); ++i)
    if (scene.collision_objects[i].damping > 0.0) return {Item("collision_objects", i, "damping"), why};
  return {};
}

/// A gravity_time_function other than the constant 1.
Refusal VaryingGravity(const IntegratorConfig& scene) {
  const TimeFunctionConfig& tau = scene.gravity_time_function;
  if (tau.kind == TimeFunctionConfig::Kind::kConstant && tau.value == 1.0) return {};
  return {"gravity_time_function", With(scene) + " (constant gravity only here)"};
}

/// The first collision object whose method is constraint.
const CollisionObjectConfig* FirstConstraint(const IntegratorConfig& scene, std::size_t* i) {
  for (*i = 0; *i < scene.collision_objects.size(); ++*i)
    if (scene.collision_objects[*i].method == CollisionMethod::kConstraint) return &scene.collision_objects[*i];
  return nullptr;
}

template <class Choice>
bool Among(const std::vector<Choice>& set, Choice value) {
  return set.empty() || std::find(set.begin(), set.end(), value) != set.end();
}

template <class Choice>
std::string JoinNames(const std::vector<Choice>& set, const std::string& all) {
  if (set.empty()) return all;
  std::string names;
  for (Choice value : set) names += (names.empty() ? "" : ", ") + ToString(value);
  return names;
}

const std::vector<I> kPotentialFree = {I::kXpbd, I::kSemiImplicit, I::kAsync};

}  // namespace

const std::vector<IntegratorAvailability>& IntegratorAvailabilities() {
  static const std::vector<IntegratorAvailability> table = {
      {D::kFem, "FEM", {I::kBackwardEuler, I::kQuasiStatic, I::kXpbd, I::kSemiImplicit, I::kAsync}},
      {D::kMpm, "MPM", {I::kBackwardEuler}},
      {D::kParticles, "particle", {I::kXpbd}},
  };
  return table;
}

const IntegratorAvailability& AvailabilityOf(Discretization discretization) {
  for (const IntegratorAvailability& a : IntegratorAvailabilities())
    if (a.discretization == discretization) return a;
  throw std::logic_error("AvailabilityOf: a discretization without a row");
}

std::string UnavailableIntegrator(const std::string& name, Discretization discretization) {
  const IntegratorAvailability& a = AvailabilityOf(discretization);
  return "'" + name + "' is not available for " + a.label + " scenes (available: " +
         JoinNames(a.integrators, "") + ")";
}

const std::vector<CombinationRule>& CombinationRules() {
  static const std::vector<CombinationRule> rules = {
      {{I::kXpbd, I::kSemiImplicit, I::kAsync}, {D::kFem, D::kParticles},
       "collision_objects[].motion", "a moving collision object",
       "backward_euler, quasi_static (they pose the objects at each step's end); MPM",
       [](const IntegratorConfig& scene) -> Refusal {
         for (std::size_t i = 0; i < scene.collision_objects.size(); ++i)
           if (!scene.collision_objects[i].motion.empty())
             return {Item("collision_objects", i, "motion"),
                     "FEM collision objects move only with integrator backward_euler or quasi_static, not '" +
                         ToString(scene.integrator) + "'"};
         return {};
       }},
      {{}, {D::kMpm}, "solver.method", "dot (its subdomains are sets of tets)", "FEM",
       [](const IntegratorConfig& scene) -> Refusal {
         if (scene.solver.method != MinimizerMethod::kDot) return {};
         return {"solver.method", "'dot' needs a tet mesh: only FEM scenes (discretization: fem) take it"};
       }},
      {{I::kQuasiStatic, I::kXpbd, I::kSemiImplicit, I::kAsync}, {D::kFem, D::kParticles},
       "collision_objects[].method", "constraint (it lives in backward Euler's minimization)",
       "backward_euler",
       [](const IntegratorConfig& scene) -> Refusal {
         std::size_t i = 0;
         if (!FirstConstraint(scene, &i)) return {};
         return {Item("collision_objects", i, "method"),
                 "'constraint' needs integrator: backward_euler (got '" + ToString(scene.integrator) + "')"};
       }},
      {{}, {D::kFem, D::kParticles}, "collision_objects[].method",
       "constraint with self_contact.enabled: true (self-contact adds nonzeros outside the "
       "Hessian pattern the constraints keep)",
       "method: penalty",
       [](const IntegratorConfig& scene) -> Refusal {
         std::size_t i = 0;
         if (!scene.self_contact.enabled || !FirstConstraint(scene, &i)) return {};
         return {Item("collision_objects", i, "method"),
                 "'constraint' cannot be combined with self_contact.enabled: true (use 'penalty')"};
       }},
      {{}, {}, "integrator", "an integrator the discretization does not take",
       "FEM: backward_euler, quasi_static, xpbd, semi_implicit, async; MPM: backward_euler; "
       "particles: xpbd",
       [](const IntegratorConfig& scene) -> Refusal {
         const std::vector<I>& available = AvailabilityOf(scene.discretization).integrators;
         if (std::find(available.begin(), available.end(), scene.integrator) != available.end()) return {};
         return {"integrator", UnavailableIntegrator(ToString(scene.integrator), scene.discretization)};
       }},
      {{I::kQuasiStatic}, {D::kFem}, "self_contact.friction", "friction > 0 (it acts on velocities)",
       "backward_euler",
       [](const IntegratorConfig& scene) -> Refusal {
         if (!(scene.self_contact.friction > 0.0)) return {};
         return {"self_contact.friction",
                 "is not available with integrator: quasi_static, which has no velocities (leave it out or 0)"};
       }},
      {{I::kQuasiStatic}, {D::kFem}, "collision_objects[].damping",
       "damping > 0 (a dashpot would only resist each load step)", "backward_euler",
       [](const IntegratorConfig& scene) {
         return ContactDamping(scene, "is not available with integrator: quasi_static (no velocities)");
       }},
      // XPBD steps by constraint projections, semi_implicit and async's substeps by forces of
      // x alone: none minimizes the incremental potential that carries these terms.
      {kPotentialFree, {D::kFem, D::kParticles}, "loads", "any load", "backward_euler, quasi_static",
       [](const IntegratorConfig& scene) -> Refusal {
         if (scene.loads.empty()) return {};
         return {"loads", With(scene) + " (backward_euler and quasi_static take them)"};
       }},
      {kPotentialFree, {D::kFem, D::kParticles}, "friction.model", "potential", "backward_euler, quasi_static",
       [](const IntegratorConfig& scene) -> Refusal {
         if (scene.friction.model != FrictionModel::kPotential) return {};
         return {"friction.model", "'" + ToString(scene.friction.model) + "' " + With(scene) +
                                       " (leave friction.model out)"};
       }},
      {kPotentialFree, {D::kFem, D::kParticles}, "self_contact.enabled", "true",
       "backward_euler, quasi_static",
       [](const IntegratorConfig& scene) -> Refusal {
         if (!scene.self_contact.enabled) return {};
         return {"self_contact.enabled", With(scene) + " (backward_euler and quasi_static take it)"};
       }},
      {kPotentialFree, {D::kFem, D::kParticles}, "collision_objects[].damping", "damping > 0",
       "backward_euler",
       [](const IntegratorConfig& scene) { return ContactDamping(scene, With(scene) + " (backward_euler takes it)"); }},
      // XPBD on tets takes gravity per step; semi_implicit, async and the particles' XPBD
      // keep forces that depend on x alone.
      {{I::kSemiImplicit, I::kAsync}, {D::kFem}, "gravity_time_function",
       "a gravity that varies in time", "backward_euler, quasi_static, xpbd",
       VaryingGravity},
      {{I::kXpbd}, {D::kParticles}, "gravity_time_function", "a gravity that varies in time",
       "FEM scenes",
       VaryingGravity},
      {{I::kSemiImplicit, I::kAsync}, {D::kFem}, "collision_objects[].friction",
       "friction > 0 (no Coulomb friction is applied)", "backward_euler",
       [](const IntegratorConfig& scene) -> Refusal {
         for (std::size_t i = 0; i < scene.collision_objects.size(); ++i)
           if (scene.collision_objects[i].friction > 0.0)
             return {Item("collision_objects", i, "friction"),
                     "integrator '" + ToString(scene.integrator) +
                         "' applies no Coulomb friction; set it to 0 or use backward_euler"};
         return {};
       }},
  };
  return rules;
}

void CheckCombinations(const IntegratorConfig& scene) {
  for (const CombinationRule& rule : CombinationRules()) {
    if (!Among(rule.integrators, scene.integrator) || !Among(rule.discretizations, scene.discretization))
      continue;
    const Refusal refusal = rule.find(scene);
    if (!refusal.key.empty()) throw InputError(scene.path + ": " + refusal.key + ": " + refusal.message);
  }
}

std::string CombinationsMarkdown() {
  std::string md =
      "<a id=\"combinations\"></a>\n\n## What combines with what\n\n"
      "The integrators each discretization takes:\n\n| integrator |";
  for (const IntegratorAvailability& a : IntegratorAvailabilities()) md += " " + ToString(a.discretization) + " |";
  md += "\n|---|";
  for (std::size_t k = 0; k < IntegratorAvailabilities().size(); ++k) md += "---|";
  md += "\n";
  for (const std::string& name : ChoiceNames(IntegratorKind{})) {
    md += "| `" + name + "` |";
    for (const IntegratorAvailability& a : IntegratorAvailabilities()) {
      const bool takes = std::find_if(a.integrators.begin(), a.integrators.end(),
                                      [&](I i) { return ToString(i) == name; }) != a.integrators.end();
      md += takes ? " yes |" : " |";
    }
    md += "\n";
  }
  md +=
      "\nA scene is checked against these rules once it is read, in this order; the first it "
      "breaks stops the run with one line naming the file and the key:\n\n"
      "| key | refused | under integrator | in discretization | taken by |\n|---|---|---|---|---|\n";
  for (const CombinationRule& rule : CombinationRules())
    md += "| `" + rule.key + "` | " + rule.refused + " | " + JoinNames(rule.integrators, "any") + " | " +
          JoinNames(rule.discretizations, "any") + " | " + rule.take_instead + " |\n";
  return md;
}

}  // namespace optistep
