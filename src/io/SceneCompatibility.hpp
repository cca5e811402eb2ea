#pragma once
// What combines with what: the integrators each discretization takes, and the rules that
// refuse a scene term under some integrators or discretizations (a moving collision object
// under xpbd, loads under semi_implicit, friction.model: potential under async, ...), as
// data, one row per rule. ReadSceneConfig checks a parsed scene against them in one place
// (CheckCombinations); `optistep keys --format markdown` prints them into
// docs/user/scenes-reference.md. Rules that need the mesh (async.coupling: paper and
// Dirichlet nodes, every tet in async's surface layer) stay with the integrator that finds
// them.
#include <string>
#include <vector>

#include "io/SceneChoices.hpp"
#include "io/SceneSections.hpp"

namespace optistep {

/// The integrators a discretization takes, in the order messages list them, and the
/// discretization's name in messages ("FEM", "MPM", "particle").
struct IntegratorAvailability {
  Discretization discretization;
  std::string label;
  std::vector<IntegratorKind> integrators;
};
const std::vector<IntegratorAvailability>& IntegratorAvailabilities();
const IntegratorAvailability& AvailabilityOf(Discretization discretization);

/// The message of an integrator (by name; maybe no integrator at all) that `discretization`
/// does not take: "'<name>' is not available for <label> scenes (available: ...)".
std::string UnavailableIntegrator(const std::string& name, Discretization discretization);

/// A scene's breach of a rule: the key path it names ("collision_objects[1].motion") and
/// the message after it; key empty when the scene keeps the rule.
struct Refusal {
  std::string key;
  std::string message;
};

/// One rule: under `integrators` and `discretizations` (empty: any), find() returns the
/// scene's first breach. `key`, `refused` and `take_instead` are the reference's columns.
struct CombinationRule {
  std::vector<IntegratorKind> integrators;
  std::vector<Discretization> discretizations;
  std::string key;          ///< as the reference names it: "collision_objects[].motion"
  std::string refused;      ///< what is refused, one line
  std::string take_instead; ///< what takes it, one line
  Refusal (*find)(const IntegratorConfig& scene);
};

/// The rules in the order CheckCombinations applies them (the first breach is reported);
/// one of them is the availability of the integrator (IntegratorAvailabilities).
const std::vector<CombinationRule>& CombinationRules();

/// Not collective (every rank checks the same scene). Throws InputError "<scene.path>: <key>:
/// <message>" for the first rule that applies to the scene's integrator and discretization
/// and that the scene breaks.
void CheckCombinations(const IntegratorConfig& scene);

/// The availability matrix and the rules as Markdown, for the scene reference.
std::string CombinationsMarkdown();

}  // namespace optistep
