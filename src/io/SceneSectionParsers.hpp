#pragma once
// The section parsers and key tables of io/SceneSections.cpp that the composing reader
// (app/SceneConfig.cpp) calls: each reads one section of the scene through the toolkit of
// io/SceneReader.hpp and throws its one-line InputErrors "file: key.path: message".
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "io/SceneKeys.hpp"
#include "io/SceneReader.hpp"
#include "io/SceneSections.hpp"

namespace optistep {

/// Key tables of the top-level sections (the schema's `sub` tables).
const KeyTable* TimeKeys();
const KeyTable* MpmKeys();
const KeyTable* BodyKeys();
const KeyTable* BoundaryConditionKeys();
const KeyTable* CollisionObjectKeys();
const KeyTable* TimeFunctionKeys();
const KeyTable* LoadKeys();
const KeyTable* SolverKeys();
const KeyTable* DotKeys();
const KeyTable* ChainKeys();
const KeyTable* ClothKeys();
const KeyTable* DampingKeys();
const KeyTable* FrictionKeys();
const KeyTable* QuasiStaticKeys();
const KeyTable* XpbdKeys();
const KeyTable* AsyncKeys();
const KeyTable* SelfContactKeys();
const KeyTable* OutputKeys();

TimeConfig ParseTime(const Field& f);
MpmConfig ParseMpm(const Field& f);
/// bodies[i]; scene_folder resolves its files; mpm: the scene is MPM (surfaces, shapes and
/// plasticity allowed).
BodyConfig ParseBody(const Field& f, std::size_t i, const std::string& scene_folder, bool mpm);
/// Each body replaced by its copies (CopiesConfig), in order; a body without copies stays.
std::vector<BodyConfig> ExpandCopies(const std::vector<BodyConfig>& bodies);
BoundaryConditionConfig ParseBoundaryCondition(const Field& f, std::size_t i, const Names& body_names);
CollisionObjectConfig ParseCollisionObject(const Field& f, bool mpm);
/// The top-level time_functions: a map from names to functions.
using TimeFunctions = std::map<std::string, TimeFunctionConfig>;
TimeFunctions ParseTimeFunctions(const Field& f);
/// A time function by name (a key of time_functions) or inline (a map).
TimeFunctionConfig ReadTimeFunction(const Field& f, const TimeFunctions& named);
LoadConfig ParseLoad(const Field& f, std::size_t i, const Names& body_names, const TimeFunctions& named,
                     bool mpm);
SolverConfig ParseSolver(const Field& f, bool mpm, IntegratorKind integrator);
DotConfig ParseDot(const Field& f);
ChainConfig ParseChain(const Field& f, std::size_t i);
ClothConfig ParseCloth(const Field& f, std::size_t i, const std::string& scene_folder);

/// friction.model when the scene leaves it out (io/SceneSections.cpp says why).
FrictionModel DefaultFrictionModel(Discretization discretization, IntegratorKind integrator);

}  // namespace optistep
