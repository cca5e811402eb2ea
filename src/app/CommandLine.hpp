#pragma once
// optistep's own command-line arguments, separated from the PETSc options that follow.
#include <string>
#include <vector>

namespace optistep {

struct CommandLine {
  std::string command;                 ///< run | check | partition
  std::string scene;                   ///< scene file
  std::vector<std::string> overrides;  ///< --set key.path=value
  int ranks = 0;                       ///< partition: --ranks N
  bool quiet = false;                  ///< run: no per-step lines
  std::string restart;                 ///< run: --restart latest|FILE ("" starts at t = 0)
  bool allow_scene_change = false;     ///< run: --allow-scene-change
  bool help = false;
  bool version = false;
  std::vector<std::string> petsc_args; ///< everything else, in order, for PetscInitialize

  /// argv for PetscInitialize: program name, PETSc arguments, and a terminating null.
  /// The pointers refer into this object.
  std::vector<char*> PetscArgv(char* program) const;
};

/// Parses argv (not collective, no MPI needed). Throws InputError for a missing or unknown
/// command, a missing scene, a malformed --set or --ranks.
CommandLine ParseCommandLine(int argc, char** argv);

/// The --help text.
const char* UsageText();

/// Inserts the scene's PETSc options ("-a 1 -b"), skipping any option the command line
/// already set, so that the command line wins. Call after PetscInitialize.
void InsertScenePetscOptions(const std::string& options);

}  // namespace optistep
