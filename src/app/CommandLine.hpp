#pragma once
// optistep's own command-line arguments, separated from the PETSc options that follow.
#include <mpi.h>

#include <string>
#include <vector>

namespace optistep {

struct CommandLine {
  std::string command;                 ///< run | check | partition | keys
  std::string scene;                   ///< scene file
  std::vector<std::string> overrides;  ///< --set key.path=value
  int ranks = 0;                       ///< partition: --ranks N
  std::string format;                  ///< keys: --format (markdown, the default and only one)
  bool quiet = false;                  ///< run: no per-step lines
  std::string restart;                 ///< run: --restart latest|FILE ("" starts at t = 0)
  bool allow_scene_change = false;     ///< run: --allow-scene-change
  bool strict_options = false;         ///< run: --strict-options
  double sigterm_grace = 0.0;          ///< run: --sigterm-grace SECONDS
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

/// The scene schema as `optistep keys` prints it: a title, the reading rules, and every
/// key table of the parser (io/SceneKeys.hpp SchemaMarkdown).
std::string KeysText();

/// The --help text.
const char* UsageText();

/// Inserts the scene's PETSc options ("-a 1 -b"), skipping any option the command line
/// already set, so that the command line wins. Call after PetscInitialize.
void InsertScenePetscOptions(const std::string& options);

/// Collective: the options set (command line or the scene's petsc_options) that nothing
/// has read so far (PETSc's PetscOptionsLeftGet), most likely misspelled: one warning line
/// on rank 0, or with strict an InputError on every rank. Call once every object that
/// reads options exists (after a run's first step: the Hessian and the solvers are made
/// then).
void ReportUnusedOptions(MPI_Comm comm, bool strict);

}  // namespace optistep
