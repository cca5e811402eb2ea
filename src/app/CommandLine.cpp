#include "app/CommandLine.hpp"

#include <petscsys.h>

#include <cctype>
#include <cstdio>
#include <stdexcept>
#include <sstream>

#include "app/SceneConfig.hpp"
#include "core/Error.hpp"
#include "io/SceneCompatibility.hpp"
#include "io/SceneSchema.hpp"

namespace optistep {
namespace {

/// A PETSc option name: "-" followed by a letter (so "-1e-3" is a value).
bool IsOptionName(const std::string& token) {
  return token.size() > 1 && token[0] == '-' && std::isalpha(static_cast<unsigned char>(token[1]));
}

}  // namespace

std::vector<char*> CommandLine::PetscArgv(char* program) const {
  std::vector<char*> out{program};
  for (const auto& a : petsc_args) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

CommandLine ParseCommandLine(int argc, char** argv) {
  CommandLine cl;
  std::vector<std::string> args(argv + 1, argv + argc);
  size_t i = 0;
  auto value_of = [&](const std::string& flag) -> std::string {
    if (i + 1 >= args.size()) throw InputError(flag + " needs a value");
    return args[++i];
  };
  std::vector<std::string> positional;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      cl.help = true;
    } else if (a == "--version") {
      cl.version = true;
    } else if (a == "--quiet") {
      cl.quiet = true;
    } else if (a == "--restart" || a.rfind("--restart=", 0) == 0) {
      cl.restart = (a == "--restart") ? value_of("--restart") : a.substr(10);
      if (cl.restart.empty()) throw InputError("--restart: expected 'latest' or a checkpoint file");
    } else if (a == "--allow-scene-change") {
      cl.allow_scene_change = true;
    } else if (a == "--strict-options") {
      cl.strict_options = true;
    } else if (a == "--sigterm-grace" || a.rfind("--sigterm-grace=", 0) == 0) {
      const std::string v = (a == "--sigterm-grace") ? value_of(a) : a.substr(16);
      try {
        size_t used = 0;
        cl.sigterm_grace = std::stod(v, &used);
        if (used != v.size() || !(cl.sigterm_grace >= 0.0)) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw InputError("--sigterm-grace '" + v + "': expected seconds, a number >= 0");
      }

    } else if (a == "--set" || a.rfind("--set=", 0) == 0) {
      const std::string kv = (a == "--set") ? value_of("--set") : a.substr(6);
      if (kv.find('=') == std::string::npos || kv.front() == '=')
        throw InputError("--set '" + kv + "': expected key.path=value");
      cl.overrides.push_back(kv);
    } else if (a == "--format" || a.rfind("--format=", 0) == 0) {
      cl.format = (a == "--format") ? value_of(a) : a.substr(9);
      if (cl.format != "markdown")
        throw InputError("--format '" + cl.format + "': expected markdown");
    } else if (a == "--ranks" || a.rfind("--ranks=", 0) == 0) {
      const std::string v = (a == "--ranks") ? value_of("--ranks") : a.substr(8);
      try {
        size_t used = 0;
        cl.ranks = std::stoi(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
      } catch (const std::exception&) {
        throw InputError("--ranks '" + v + "': expected a whole number");
      }
      if (cl.ranks < 1) throw InputError("--ranks '" + v + "': expected a number >= 1");
    } else if (a.rfind("--", 0) == 0) {
      throw InputError("unknown argument '" + a + "'");
    } else if (a[0] == '-') {
      cl.petsc_args.push_back(a);  // a PETSc option, and its value if one follows
      if (i + 1 < args.size() && !IsOptionName(args[i + 1]) && args[i + 1].rfind("--", 0) != 0)
        cl.petsc_args.push_back(args[++i]);
    } else {
      positional.push_back(a);
    }
  }
  if (cl.help || cl.version) return cl;
  if (positional.empty()) throw InputError("missing command (run, check, partition or keys)");
  cl.command = positional[0];
  if (cl.command != "run" && cl.command != "check" && cl.command != "partition" &&
      cl.command != "keys")
    throw InputError("unknown command '" + cl.command +
                     "' (expected run, check, partition or keys)");
  if (cl.command == "keys") {
    if (positional.size() > 1) throw InputError("keys: unexpected argument '" + positional[1] + "'");
    if (!cl.overrides.empty() || cl.ranks != 0 || cl.quiet || !cl.restart.empty() ||
        cl.allow_scene_change || cl.strict_options || cl.sigterm_grace > 0.0 || !cl.petsc_args.empty())
      throw InputError("keys: takes only --format markdown");
    if (cl.format.empty()) cl.format = "markdown";
    return cl;
  }
  if (!cl.format.empty()) throw InputError(cl.command + ": --format is an option of keys");
  if (positional.size() < 2) throw InputError(cl.command + ": missing scene file");
  if (positional.size() > 2) throw InputError("unexpected argument '" + positional[2] + "'");
  cl.scene = positional[1];
  if (cl.command == "partition" && cl.ranks == 0)
    throw InputError("partition: --ranks N is required");
  if (cl.command != "run" && (!cl.restart.empty() || cl.allow_scene_change ||
                              cl.strict_options || cl.sigterm_grace > 0.0))
    throw InputError(cl.command + ": --restart, --allow-scene-change, --strict-options and "
                                  "--sigterm-grace are options of run");
  return cl;
}

std::string KeysText() {
  return "# Scene keys\n\n"
         "Every key a scene file may hold, printed by `optistep keys` from the parser's own key "
         "tables: the same tables check each scene, so this list is complete. A scene is YAML "
         "in SI units. An unknown key, a value of the wrong type or out of range, and a key "
         "that the chosen variant (type, model, discretization) does not take stop the run "
         "with one line naming the file and the key path (exit 1). A key with a blank default "
         "may be left out (its meaning says when it is needed); `--set key.path=value` "
         "overrides any key (sequence items by index). Each section below is one map of the "
         "scene; `[]` marks the items of a sequence.\n\n" +
         SchemaMarkdown(SceneSchema()) + CombinationsMarkdown();
}

const char* UsageText() {
  return R"(optistep - implicit elastodynamics with large time steps (each step a minimization)

usage:
  mpirun -np N optistep run SCENE.yaml [--set key.path=value ...] [--quiet]
                       [--restart latest|FILE [--allow-scene-change]] [--strict-options]
                       [--sigterm-grace SECONDS] [PETSc options]
  optistep check SCENE.yaml [--set ...]        validate a scene (reads meshes, runs nothing)
  optistep partition SCENE.yaml --ranks N      METIS partition quality for N ranks
  optistep keys [--format markdown]            print every scene key (type, default,
                                               allowed values, meaning) as Markdown
  optistep --help | --version

options:
  --set key.path=value   override a scene key (sequence items by index), e.g.
                         --set time.dt=0.01 --set bodies.0.material.E=1e6
                         --set gravity=[0,0,-9.81]
  --quiet                no per-step progress lines (stats.csv is still written)
  --restart latest|FILE  resume from the newest checkpoint in OUTPUT/checkpoints (a
                         damaged one is reported and the previous one used) or from
                         FILE; on the same rank count the run continues bitwise. Exits 1
                         if no checkpoint loads: never a silent restart from t = 0
  --allow-scene-change   resume although the scene differs from the checkpoint's in a
                         key that can change the trajectory (output keys never count)
  --strict-options       a PETSc option that was set but never used (misspelled?) is an
                         error (exit 1), not a warning, found before anything is
                         written (by a first step taken once on a discarded copy)
  --sigterm-grace S      the seconds the launcher allows between SIGTERM and SIGKILL
                         (Open MPI mpirun: odls_base_sigkill_timeout; SLURM: KillWait):
                         after SIGTERM the step under way is finished if it ends within
                         S/2, else abandoned; default 0, abandoned at once

checkpoints (scene keys output.checkpoint_every_steps, output.checkpoint_every_seconds,
output.checkpoints_kept): on SIGUSR1 (SLURM: #SBATCH --signal=USR1@120) a run finishes
the current step, writes a checkpoint and exits 0; on SIGTERM (scancel, the walltime,
mpirun passing its own SIGTERM on) it does the same, unless the step would not end within
half of --sigterm-grace: then that step is abandoned and the one before it checkpointed.
See docs/user/checkpoints.md, docs/user/running.md and scripts/slurm-job.sh

PETSc options (command line wins over the scene's petsc_options), for example:
  -newton_ksp_type cg -newton_pc_type jacobi|gamg|bjacobi|hypre   Newton's linear solver
  -newton_max_it 200 -newton_monitor                              Newton iterations
  -newton_tao_ls_type more-thuente                                line search
  -log_view                                                       time per phase (Os*)
  -optistep_log_csv FILE                                          the same log per rank, as CSV

output (in output.directory, default out/<scene name>):
  <name>.xdmf, <name>_mesh.h5, frames/<name>_NNNNNN.h5   open the .xdmf in ParaView
  stats.csv                                              one row per step
  scene.yaml                                             the scene as run
  checkpoints/ckpt_NNNNNNNN.h5                           restart points (step NNNNNNNN)

exit codes: 0 done (or stopped by a signal after a checkpoint), 1 bad input, 2 a step
failed after all dt halvings, 3 internal error, 4 the output folder cannot be written,
5 the output folder is in use by another run (output.directory/optistep.lock), 59 a crash
(PETSc's signal handler)
)";
}

void InsertScenePetscOptions(const std::string& options) {
  std::istringstream in(options);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!IsOptionName(tokens[i]))
      throw InputError("petsc_options: '" + tokens[i] + "' is not an option name");
    const std::string name = tokens[i];
    const char* value = nullptr;
    if (i + 1 < tokens.size() && !IsOptionName(tokens[i + 1])) value = tokens[++i].c_str();
    PetscBool set = PETSC_FALSE;
    OPTISTEP_PETSC(PetscOptionsHasName(nullptr, nullptr, name.c_str(), &set));
    if (!set) OPTISTEP_PETSC(PetscOptionsSetValue(nullptr, name.c_str(), value));
  }
}

void ReportUnusedOptions(MPI_Comm comm, bool strict) {
  PetscInt n = 0;
  char** names = nullptr;
  char** values = nullptr;
  OPTISTEP_PETSC(PetscOptionsLeftGet(nullptr, &n, &names, &values));
  std::string unused;
  int count = 0;
  for (PetscInt i = 0; i < n; ++i) {
    const std::string name = names[i];
    if (name == "options_left" || name == "options_view") continue;  // read by PetscFinalize
    unused += (unused.empty() ? "-" : ", -") + name;
    if (values[i]) unused += std::string(" ") + values[i];
    ++count;
  }
  OPTISTEP_PETSC(PetscOptionsLeftRestore(nullptr, &n, &names, &values));
  unused = MessageOfAnyRank(comm, unused);  // every rank holds the same options
  if (unused.empty()) return;
  const std::string what = "PETSc option" + std::string(count == 1 ? "" : "s") +
                           " set but never used (misspelled?): " + unused;
  if (strict) throw InputError(what + " (--strict-options)");
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) std::fprintf(stderr, "optistep: warning: %s\n", what.c_str());
}

}  // namespace optistep
