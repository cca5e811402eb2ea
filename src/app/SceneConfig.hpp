#pragma once
// The scene composed: its sections (io/SceneSections.hpp) and what only the run reads
// (name, text, output, PETSc options), read from a YAML file with --set overrides and
// checked against the compatibility table (io/SceneCompatibility.hpp); the restart's scene
// difference. Only app/ (and tests) see the whole scene: the layers below take their own
// part of it (ModelConfig, ParticlesConfig, IntegratorConfig or a section).
//
// Reading rules: unknown keys, wrong types and out-of-range values are InputErrors whose
// message names the file and the key path, e.g.
//   "scene.yaml: bodies[0].material.E: expected a positive number, got '-3'".
// Every rank parses the same file, so errors are raised identically on every rank.
#include <string>
#include <vector>

#include "io/SceneKeys.hpp"
#include "io/SceneSections.hpp"

namespace optistep {

struct SceneConfig : IntegratorConfig {
  /// The file's stem unless the scene names itself; one path component of
  /// [A-Za-z0-9._-], not starting with '.' (it names files and the default output folder).
  std::string name;
  std::string text;        ///< the file's text; with --set, the overridden tree re-emitted
  OutputConfig output;
  /// PETSc options from the scene ("-newton_ksp_type cg ..."), inserted before the
  /// command line's so that the command line wins.
  std::string petsc_options;
};

/// Reads and validates a scene. `overrides` are "key.path=value" strings from --set,
/// applied to the YAML tree before validation (sequence items by index:
/// "bodies.0.material.E=1e6"; value parsed as YAML, so "gravity=[0,0,0]" works).
/// Throws InputError naming the file and key on any problem, including a missing file
/// and an override whose path does not exist in the schema.
SceneConfig ReadSceneConfig(const std::string& path,
                            const std::vector<std::string>& overrides = {});

/// The first difference between two scene texts (SceneConfig::text) that can change a
/// run's trajectory, as "key.path: <value> in the checkpoint, <value> now", or "" if there
/// is none. Left out: comments, layout, key order, and the output keys that cannot change
/// a trajectory (output.directory, output.every, output.checkpoint_every_steps,
/// output.checkpoint_every_seconds, output.checkpoints_kept). Values are compared as
/// written ("1e5" and "100000" differ). A text that is not YAML differs from any other.
std::string SceneDifference(const std::string& checkpoint_text, const std::string& text);

/// The scene's top-level key table: every section the parser reads, each key's type,
/// default, allowed values and meaning (KeyTable::keys, with Key::sub for nested maps).
const KeyTable& SceneSchema();

}  // namespace optistep
