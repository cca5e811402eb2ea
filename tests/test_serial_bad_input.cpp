// Bad input to the optistep executable, in one table: each case stops with the
// exit code docs/user/running.md documents, exactly one line on stderr that names the key,
// file, element or option, and leaves the files of an earlier run in its folder byte for
// byte as they were (no file added, removed or changed anywhere in the folder, so a scene
// name that escapes out/ is caught too). Each case runs in its own copy of a folder that
// holds a finished run of a small FEM scene (out/: frames, stats.csv, scene.yaml and the
// checkpoints of steps 1 and 2).
//
// Other suites check the finer points of some classes in-process: every message of the
// scene schema (test_serial_scene_config), of the mesh and surface readers
// (test_serial_mesh_readers, test_serial_mpm_sampling), damaged checkpoints with an intact
// older one (test_checkpoint); a real run that holds its folder goes on untouched by a
// second one, and a run whose folder becomes unwritable on 2 ranks ends every rank cleanly
// and resumes (test_serial_output_cli).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "TestScenes.hpp"
#include "TestUtil.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

using test::ReadFile;

/// What the table asserts about the folder once the case has stopped.
enum class Folder {
  kUntouched,  ///< every file as it was, byte for byte: the input was judged before writing
  kRunStarted  ///< the run had begun, as a new run in that folder replaces the earlier one's
               ///< files: the folder that becomes unwritable mid-run
};

/// Writes what a case needs into its folder (which already holds box.node/.ele, ok.yaml
/// and the earlier run's out/).
using Setup = std::function<void(const fs::path& dir)>;

struct BadInput {
  std::string name;                 ///< the test's name
  Setup setup;                      ///< may be empty
  std::string args;                 ///< optistep's command line, run in the case's folder
  int code;                         ///< the exit code (docs/user/running.md, "Exit codes")
  std::vector<std::string> pieces;  ///< what the one stderr line must hold
  int ranks = 1;                    ///< > 1: under mpiexec; only the first rank prints
  std::function<std::string(const std::string&)> around = {};  ///< see test::Optistep
  Folder folder = Folder::kUntouched;
  bool locked = false;  ///< this test process holds out/optistep.lock meanwhile
  bool by_check = false;  ///< `optistep check` (args with run replaced) refuses it alike

  BadInput AlsoByCheck() const { BadInput c = *this; c.by_check = true; return c; }
  BadInput OnRanks(int n) const { BadInput c = *this; c.ranks = n; return c; }
  BadInput Around(std::function<std::string(const std::string&)> f) const {
    BadInput c = *this;
    c.around = std::move(f);
    return c;
  }
  BadInput AfterRunStarted() const { BadInput c = *this; c.folder = Folder::kRunStarted; return c; }
  BadInput WhileLocked() const { BadInput c = *this; c.locked = true; return c; }
};

/// gtest prints a case by its name.
void PrintTo(const BadInput& c, std::ostream* os) { *os << c.name; }

void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

/// Writes test::BoxScene(find, replace) as dir/file.
Setup Scene(const std::string& file, const std::string& find = "", const std::string& replace = "") {
  return [=](const fs::path& dir) { Write(dir / file, test::BoxScene(find, replace)); };
}

/// Writes the box scene with its collision object (the ground half-space) replaced by
/// `object`, a YAML flow map, as dir/file.
Setup SceneWithObject(const std::string& file, const std::string& object) {
  return Scene(file, "{type: half_space, point: [0, -0.5, 0], normal: [0, 1, 0]}", object);
}

/// Writes named.yaml, the box scene with `name: '<name>'`.
Setup Named(const std::string& name) { return Scene("named.yaml", "time:", "name: '" + name + "'\ntime:"); }

/// Copies box.node/.ele to stem.node/.ele with line `line` (0-based) of the file whose
/// extension is `ext` rewritten by edit, and writes stem.yaml, the box scene on that mesh.
Setup EditedMesh(const std::string& stem, const std::string& ext, int line,
                 std::function<std::string(const std::string&)> edit) {
  return [=](const fs::path& dir) {
    for (const char* e : {".node", ".ele"}) {
      std::istringstream in(ReadFile(dir / ("box" + std::string(e))));
      std::ofstream out(dir / (stem + e));
      std::string text;
      for (int i = 0; std::getline(in, text); ++i) out << (e == ext && i == line ? edit(text) : text) << "\n";
    }
    Write(dir / (stem + ".yaml"), test::BoxScene("box.node", stem + ".node"));
  };
}

/// The tet line "id a b c d" with two corners swapped: the tet is inverted.
std::string SwapCorners(const std::string& line) {
  std::istringstream s(line);
  int id, a, b, c, d;
  s >> id >> a >> b >> c >> d;
  std::ostringstream out;
  out << id << " " << a << " " << c << " " << b << " " << d;
  return out.str();
}

/// The node line "id x y z" with x not a number.
std::string NanCoordinate(const std::string& line) {
  std::istringstream s(line);
  std::string id, x, y, z;
  s >> id >> x >> y >> z;
  return id + " nan " + y + " " + z;
}

/// An MPM scene of a 0.2 m box with mpm.dx = 1e-4 m where 1e-2 was meant: 6.4e10 particles.
const char* const kDxTypo = R"(discretization: mpm
mpm: {dx: 1.0e-4, ppc: 8}
time: {frame_rate: 24, frames: 1}
bodies:
  - shape: {type: box, min: [0, 0, 0], max: [0.2, 0.2, 0.2]}
    material: {E: 1.0e5, nu: 0.3, density: 1000}
output: {directory: out}
)";

/// kDxTypo with mpm.dx = 0.05 m: 64 cells, 512 particles, a grid that coarsens to 4 levels.
Setup SmallMpmScene(const std::string& file) {
  return [=](const fs::path& d) {
    Write(d / file, std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05"));
  };
}

/// The box scene with the velocity expression [vx, 0, 0] (the box's nodes span [0, 1]^3).
Setup VelocityExpression(const std::string& file, const std::string& vx) {
  return Scene(file, "density: 1000}",
               "density: 1000}\n    initial_conditions: {velocity_expression: ['" + vx + "', '0', '0']}");
}

/// An MPM body sampled from the unit cube's surface without its top face (the quads
/// 0 2 3 1, ...; the top 4 5 7 6 is missing, so its edges have one triangle each).
const char* const kOpenCube = "OFF\n8 5 0\n0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n"
                              "4 0 2 3 1\n4 0 1 5 4\n4 0 4 6 2\n4 1 3 7 5\n4 2 6 7 3\n";
const char* const kOpenCubeScene = R"(discretization: mpm
mpm: {dx: 0.25, ppc: 8}
time: {frame_rate: 24, frames: 1}
bodies:
  - surface: open.off
    material: {E: 1.0e5, nu: 0.3, density: 1000}
output: {directory: out}
)";

/// A cloth scene, cloth.yaml, on flat.off: two triangles (0, 1, 2), (1, 3, 2) whose
/// vertex 3 is at `vertex3`; `extra` is appended to the cloth's entry.
Setup ClothScene(const std::string& vertex3, const std::string& extra) {
  return [=](const fs::path& d) {
    Write(d / "flat.off", "OFF\n4 2 0\n0 0 0\n1 0 0\n0 1 0\n" + vertex3 + "\n3 0 1 2\n3 1 3 2\n");
    Write(d / "cloth.yaml", "discretization: particles\nintegrator: xpbd\n"
                            "time: {dt: 0.01, frame_rate: 50, frames: 2}\n"
                            "cloths:\n  - {mesh: flat.off, mass: 0.01, pinned: [0]" + extra + "}\n"
                            "output: {directory: out}\n");
  };
}

/// A particle scene with `find` replaced by `replace`, written as `file`.
Setup ChainScene(const std::string& file, const std::string& find, const std::string& replace) {
  std::string text = R"(discretization: particles
integrator: xpbd
time: {dt: 0.01, frame_rate: 50, frames: 2}
chains:
  - {points: [[0, 0, 0], [0, -0.1, 0], [0, -0.2, 0]], mass: 1, pinned: [0], compliance: 1.0e-4}
output: {directory: out}
)";
  text.replace(text.find(find), find.size(), replace);
  return [=](const fs::path& dir) { Write(dir / file, text); };
}

/// The lock file of a run of this process, as optistep writes it.
std::string LockText() {
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  return "host " + std::string(host) + "\npid " + std::to_string(getpid()) +
         "\nstarted 2026-01-01T00:00:00Z\n";
}

/// A run that, once it has taken 5 steps, finds a file where out/frames was.
std::string FramesReplacedMidRun(const std::string& command) {
  return test::InBackgroundUntil(command, test::StatsHasLines("out/stats.csv", "6"),
                                 "mv out/frames out/frames.away; touch out/frames");
}

/// 2 GB of address space: sampling 6.4e10 particles would end in std::bad_alloc (exit 3)
/// within seconds instead of filling the machine.
std::string UnderTwoGigabytes(const std::string& command) { return "ulimit -v 2097152; " + command; }

const std::vector<BadInput>& Cases() {
  static const std::vector<BadInput> cases = {
      // The command line (exit 1, printed by the first rank only).
      BadInput{"unknown_command", {}, "frobnicate ok.yaml", 1,
               {"unknown command 'frobnicate'", "see optistep --help"}}.OnRanks(2),
      {"missing_scene_argument", {}, "run", 1, {"run: missing scene file"}},
      {"run_option_with_check", {}, "check ok.yaml --restart latest", 1, {"--restart", "options of run"}},
      // The scene file (exit 1).
      {"missing_scene_file", {}, "run nothing_here.yaml", 1, {"nothing_here.yaml", "no such scene file"}},
      {"malformed_yaml", [](const fs::path& d) { Write(d / "malformed.yaml", "time: {dt: [0.1\nbodies: ]\n"); },
       "run malformed.yaml", 1, {"malformed.yaml", "malformed YAML"}},
      {"unknown_key", Scene("key.yaml", "material:", "materail:"), "run key.yaml", 1,
       {"key.yaml", "bodies[0].materail: unknown key"}},
      {"wrong_type", Scene("type.yaml", "frames: 2", "frames: two"), "run type.yaml", 1,
       {"type.yaml", "time.frames", "'two'"}},
      {"unknown_material_model", Scene("model.yaml", "fixed_corotated", "jelly"), "run model.yaml", 1,
       {"model.yaml", "bodies[0].material.model", "jelly"}},
      {"negative_density", Scene("density.yaml", "density: 1000", "density: -5"), "run density.yaml", 1,
       {"density.yaml", "bodies[0].material.density", "'-5'"}},
      {"poisson_ratio_one_half", Scene("nu.yaml", "nu: 0.3", "nu: 0.5"), "run nu.yaml", 1,
       {"nu.yaml", "bodies[0].material.nu", "[0, 0.5)", "'0.5'"}},
      {"zero_dt", Scene("dt.yaml", "dt: 0.05", "dt: 0"), "run dt.yaml", 1, {"dt.yaml", "time.dt"}},
      // Asynchronous evolution: the async block's ranges, semi_implicit without friction.
      {"async_epsilon_above_one", Scene("eps.yaml", "output:", "async: {epsilon: 1.5}\noutput:"),
       "run eps.yaml", 1, {"eps.yaml", "async.epsilon", "[0, 1]", "'1.5'"}},
      {"async_epsilon_negative", Scene("neps.yaml", "output:", "async: {epsilon: -0.1}\noutput:"),
       "run neps.yaml", 1, {"neps.yaml", "async.epsilon", "[0, 1]", "'-0.1'"}},
      {"async_zero_surface_layers", Scene("layers.yaml", "output:", "async: {surface_layers: 0}\noutput:"),
       "run layers.yaml", 1, {"layers.yaml", "async.surface_layers", ">= 1", "'0'"}},
      {"async_unknown_coupling", Scene("coupling.yaml", "output:", "async: {coupling: physbam}\noutput:"),
       "run coupling.yaml", 1, {"coupling.yaml", "async.coupling", "frame, paper", "physbam"}},
      {"async_paper_coupling_with_damping",
       Scene("pdamp.yaml", "output:",
             "integrator: async\nasync: {coupling: paper}\ndamping: {stiffness_beta: 0.01}\noutput:"),
       "run pdamp.yaml", 1, {"pdamp.yaml", "async.coupling", "damping.stiffness_beta"}},
      {"async_without_interior_tets", Scene("thin.yaml", "output:", "integrator: async\noutput:"),
       "run thin.yaml", 1, {"thin.yaml", "async.surface_layers", "no tet is fully implicit", "semi_implicit"}},
      {"semi_implicit_with_friction",
       Scene("friction.yaml", "normal: [0, 1, 0]}", "normal: [0, 1, 0], friction: 0.3}\nintegrator: semi_implicit"),
       "run friction.yaml", 1, {"friction.yaml", "collision_objects[0].friction", "semi_implicit"}},
      // Contact damping: FEM backward Euler only, a ratio >= 0.
      {"negative_contact_damping",
       Scene("cdamp.yaml", "normal: [0, 1, 0]}", "normal: [0, 1, 0], damping: -0.5}"),
       "run cdamp.yaml", 1, {"cdamp.yaml", "collision_objects[0].damping", "'-0.5'"}},
      {"semi_implicit_with_contact_damping",
       Scene("sidamp.yaml", "normal: [0, 1, 0]}", "normal: [0, 1, 0], damping: 0.5}\nintegrator: semi_implicit"),
       "run sidamp.yaml", 1, {"sidamp.yaml", "collision_objects[0].damping", "integrator: semi_implicit"}},
      {"quasi_static_with_contact_damping",
       Scene("qsdamp.yaml", "normal: [0, 1, 0]}", "normal: [0, 1, 0], damping: 0.5}\nintegrator: quasi_static"),
       "run qsdamp.yaml", 1, {"qsdamp.yaml", "collision_objects[0].damping", "integrator: quasi_static"}},
      {"contact_damping_on_a_moving_object",
       Scene("mvdamp.yaml", "normal: [0, 1, 0]}",
             "normal: [0, 1, 0], damping: 0.5, motion: [{translate: {velocity: [1, 0, 0]}}]}"),
       "run mvdamp.yaml", 1, {"mvdamp.yaml", "collision_objects[0].damping", "static object"}},
      {"contact_damping_on_a_constraint_object",
       Scene("cndamp.yaml", "normal: [0, 1, 0]}", "normal: [0, 1, 0], damping: 0.5, method: constraint}"),
       "run cndamp.yaml", 1, {"cndamp.yaml", "collision_objects[0].damping", "method: constraint"}},
      {"mpm_contact_damping",
       [](const fs::path& d) {
         Write(d / "mdamp.yaml",
               std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05") +
                   "collision_objects: [{type: half_space, point: [0, 0, 0], normal: [0, 1, 0], damping: 0.5}]\n");
       },
       "run mdamp.yaml", 1, {"mdamp.yaml", "collision_objects[0].damping", "only FEM scenes"}},
      {"negative_self_contact_stiffness",
       Scene("contact.yaml", "output:", "self_contact: {enabled: true, stiffness: -1.0e7}\noutput:"),
       "run contact.yaml", 1, {"contact.yaml", "self_contact.stiffness", "'-1.0e7'"}},
      // Collision objects: empty, zero-size or inside-out shapes (by run and by check), negative
      // coefficients, motion with an integrator that does not pose the objects.
      {"hole_wider_than_the_box",
       SceneWithObject("hole.yaml", "{type: box_with_hole, min: [-1, -2, -1], max: [1, -1, 1], hole_radius: 1.5}"),
       "run hole.yaml", 1, {"hole.yaml", "collision_objects[0].hole_radius", "does not fit"}},
      {"zero_size_box",
       SceneWithObject("flatbox.yaml", "{type: box, min: [-1, -1, -1], max: [1, -1, 1]}"),
       "run flatbox.yaml", 1, {"flatbox.yaml", "collision_objects[0]", "min < max", "y: zero size"}},
      {"inside_out_box_checked",
       SceneWithObject("outbox.yaml", "{type: box, min: [1, -2, -1], max: [-1, -1, 1]}"),
       "check outbox.yaml", 1, {"outbox.yaml", "collision_objects[0]", "min < max", "x: inside out"}},
      {"zero_size_constraint_box_checked",
       SceneWithObject("cnbox.yaml", "{type: box, min: [-1, -2, 0], max: [1, -1, 0], method: constraint}"),
       "check cnbox.yaml", 1, {"cnbox.yaml", "collision_objects[0]", "min < max", "z: zero size"}},
      {"zero_thickness_box_with_hole",
       SceneWithObject("flathole.yaml", "{type: box_with_hole, min: [-1, -1, -1], max: [1, -1, 1], hole_radius: 0.5}"),
       "check flathole.yaml", 1, {"flathole.yaml", "collision_objects[0]", "min < max", "y: zero size"}},
      {"zero_radius_sphere",
       SceneWithObject("dot.yaml", "{type: sphere, center: [0, -2, 0], radius: 0}"),
       "check dot.yaml", 1, {"dot.yaml", "collision_objects[0].radius", "positive", "'0'"}},
      {"zero_length_cylinder",
       SceneWithObject("disc.yaml", "{type: cylinder, center: [0, -2, 0], radius: 1, half_length: 0}"),
       "check disc.yaml", 1, {"disc.yaml", "collision_objects[0].half_length", "'0'"}},
      {"zero_minor_radius_torus",
       SceneWithObject("ring.yaml", "{type: torus, center: [0, -2, 0], major_radius: 1, minor_radius: 0}"),
       "check ring.yaml", 1, {"ring.yaml", "collision_objects[0].minor_radius", "(0, 1)", "'0'"}},
      {"bowl_inner_radius_above_outer",
       SceneWithObject("bowl.yaml", "{type: bowl, center: [0, 2, 0], inner_radius: 1.2, outer_radius: 1.0}"),
       "run bowl.yaml", 1, {"bowl.yaml", "collision_objects[0].inner_radius", "(0, 1)", "'1.2'"}},
      {"negative_collision_stiffness", Scene("stiff.yaml", "normal: [0, 1, 0]}", "normal: [0, 1, 0], stiffness: -1}"),
       "run stiff.yaml", 1, {"stiff.yaml", "collision_objects[0].stiffness", "'-1'"}},
      {"negative_collision_friction", Scene("mu.yaml", "normal: [0, 1, 0]}", "normal: [0, 1, 0], friction: -0.2}"),
       "run mu.yaml", 1, {"mu.yaml", "collision_objects[0].friction", "'-0.2'"}},
      {"moving_object_semi_implicit",
       Scene("move.yaml", "normal: [0, 1, 0]}",
             "normal: [0, 1, 0], motion: [{translate: {velocity: [1, 0, 0]}}]}\nintegrator: semi_implicit"),
       "run move.yaml", 1, {"move.yaml", "collision_objects[0].motion", "backward_euler or quasi_static"}},
      {"negative_self_contact_friction",
       Scene("cfric.yaml", "output:", "self_contact: {enabled: true, friction: -0.2}\noutput:"),
       "run cfric.yaml", 1, {"cfric.yaml", "self_contact.friction", "'-0.2'"}},
      {"quasi_static_with_self_contact_friction", {},
       "run ok.yaml --set integrator=quasi_static --set self_contact.enabled=true --set self_contact.friction=0.3", 1,
       {"ok.yaml", "self_contact.friction", "quasi_static"}},
      {"petsc_options_not_an_option", Scene("words.yaml", "output:", "petsc_options: jacobi\noutput:"),
       "run words.yaml", 1, {"petsc_options", "'jacobi' is not an option name"}},
      // Loads, time functions and initial conditions (exit 1).
      {"load_selects_no_node",
       Scene("point.yaml", "output:",
             "loads: [{type: point, select: {box: {min: [5, 5, 5], max: [6, 6, 6]}}, force: [0, 1, 0]}]\noutput:"),
       "run point.yaml", 1, {"point.yaml", "loads[0] ('load0').select", "holds no node"}},
      {"traction_selects_no_face",
       Scene("face.yaml", "output:",
             "loads: [{type: traction, select: {box: {min: [-1, -1, -1], max: [0.1, 0.1, 0.1]}}, "
             "traction: [1, 0, 0]}]\noutput:"),
       "run face.yaml", 1, {"face.yaml", "loads[0] ('load0').select", "holds no boundary face"}},
      {"follower_pressure_free_rim",
       Scene("rim.yaml", "output:",
             "loads: [{type: pressure, select: {axis: y, end: max}, pressure: 100}]\noutput:"),
       "run rim.yaml", 1, {"rim.yaml", "loads[0] ('load0')", "rim node", "is free", "follower: false"}},
      {"unknown_load_type",
       Scene("type.yaml", "output:", "loads: [{type: moment, select: {axis: y, end: max}}]\noutput:"),
       "run type.yaml", 1, {"type.yaml", "loads[0].type", "point, traction, pressure, body_force", "'moment'"}},
      {"unknown_time_function",
       Scene("tf.yaml", "output:",
             "time_functions: {up: {type: ramp, end: 1}}\n"
             "loads: [{type: body_force, acceleration: [1, 0, 0], time_function: upp}]\noutput:"),
       "run tf.yaml", 1, {"tf.yaml", "loads[0].time_function", "unknown time function 'upp'", "up"}},
      {"unknown_gravity_time_function", Scene("gtf.yaml", "output:", "gravity_time_function: wind\noutput:"),
       "run gtf.yaml", 1, {"gtf.yaml", "gravity_time_function", "unknown time function 'wind'", "none"}},
      {"ramp_ends_before_it_starts",
       Scene("ramp.yaml", "output:", "time_functions: {up: {type: ramp, start: 2, end: 1}}\noutput:"),
       "run ramp.yaml", 1, {"ramp.yaml", "time_functions.up.end", "> 2", "'1'"}},
      {"table_not_increasing",
       Scene("table.yaml", "output:", "time_functions: {t: {type: table, points: [[0, 1], [2, 3], [1, 0]]}}\noutput:"),
       "run table.yaml", 1, {"table.yaml", "time_functions.t.points[2][0]", "after the previous point's 2"}},
      {"mpm_traction_selects_no_boundary",
       [](const fs::path& d) {
         Write(d / "mpmload.yaml",
               std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05") +
                   "loads: [{type: traction, select: {box: {min: [0.05, 0.05, 0.05], max: [0.15, 0.15, 0.15]}}, "
                   "traction: [0, 1, 0]}]\n");
       },
       "run mpmload.yaml", 1, {"mpmload.yaml", "loads[0] ('load0').select", "holds no boundary triangle"}},
      {"mpm_traction_on_a_sphere",
       [](const fs::path& d) {
         std::string scene = std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05");
         const std::string box = "{type: box, min: [0, 0, 0], max: [0.2, 0.2, 0.2]}";
         scene.replace(scene.find(box), box.size(), "{type: sphere, center: [0.1, 0.1, 0.1], radius: 0.1}");
         Write(d / "mpmsphere.yaml",
               scene + "loads: [{type: traction, select: {axis: y, end: max}, traction: [0, 1, 0]}]\n");
       },
       "run mpmsphere.yaml", 1, {"mpmsphere.yaml", "loads[0] ('load0')", "a shape without boundary triangles"}},
      {"mpm_follower_pressure",
       [](const fs::path& d) {
         Write(d / "mpmpressure.yaml",
               std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05") +
                   "loads: [{type: pressure, select: {axis: y, end: max}, pressure: 100}]\n");
       },
       "run mpmpressure.yaml", 1, {"mpmpressure.yaml", "loads[0].type", "MPM pressures are dead", "follower: false"}},
      {"mpm_point_load_selects_no_particle",
       [](const fs::path& d) {
         Write(d / "mpmpoint.yaml",
               std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05") +
                   "loads: [{type: point, select: {box: {min: [1, 1, 1], max: [2, 2, 2]}}, force: [0, 1, 0]}]\n");
       },
       "run mpmpoint.yaml", 1, {"mpmpoint.yaml", "loads[0] ('load0').select", "holds no particle"}},
      {"velocity_expression_syntax",
       Scene("expr.yaml", "density: 1000}",
             "density: 1000}\n    initial_conditions: {velocity_expression: ['0', '2*y +', '0']}"),
       "run expr.yaml", 1,
       {"expr.yaml", "bodies[0].initial_conditions.velocity_expression[1]", "muparser cannot read '2*y +'",
        "Unexpected end of expression"}},
      {"velocity_expression_unknown_variable",
       Scene("var.yaml", "density: 1000}",
             "density: 1000}\n    initial_conditions: {velocity_expression: ['0', '2*t', '0']}"),
       "run var.yaml", 1,
       {"var.yaml", "bodies[0].initial_conditions.velocity_expression[1]", "Unexpected token \"t\""}},
      {"velocity_table_bad_row",
       [](const fs::path& d) {
         Write(d / "v.txt", "0 1 2 3\n1 1 2\n");
         Write(d / "vtable.yaml", test::BoxScene("density: 1000}",
                                                 "density: 1000}\n    initial_conditions: {velocity_table: v.txt}"));
       },
       "run vtable.yaml", 1, {"bodies[0].initial_conditions.velocity_table", "v.txt:2", "node vx vy vz"}},
      {"velocity_table_node_out_of_range",
       [](const fs::path& d) {
         Write(d / "v.txt", "27 1 2 3\n");
         Write(d / "vnode.yaml", test::BoxScene("density: 1000}",
                                                "density: 1000}\n    initial_conditions: {velocity_table: v.txt}"));
       },
       "run vnode.yaml", 1, {"bodies[0].initial_conditions.velocity_table", "v.txt:1", "node 27", "0 to 26"}},
      {"prestrain_inverted",
       Scene("pre.yaml", "density: 1000}",
             "density: 1000}\n    initial_conditions: {prestrain: {deformation_gradient: [[-1, 0, 0], [0, 1, 0], "
             "[0, 0, 1]]}}"),
       "run pre.yaml", 1,
       {"pre.yaml", "bodies[0].initial_conditions.prestrain.deformation_gradient", "positive determinant", "-1"}},
      {"angular_velocity_zero_axis",
       Scene("spin.yaml", "density: 1000}",
             "density: 1000}\n    initial_conditions: {angular_velocity: {axis: [0, 0, 0], rate: 1}}"),
       "run spin.yaml", 1, {"spin.yaml", "bodies[0].initial_conditions.angular_velocity.axis", "non-zero vector"}},
      // Friction as a potential and the quasi-static integrator.
      {"unknown_friction_model", Scene("fric.yaml", "output:", "friction: {model: sticky}\noutput:"),
       "run fric.yaml", 1, {"fric.yaml", "friction.model", "sticky"}},
      {"zero_friction_epsilon_v", Scene("epsv.yaml", "output:", "friction: {epsilon_v: 0}\noutput:"),
       "run epsv.yaml", 1, {"epsv.yaml", "friction.epsilon_v", "'0'"}},
      {"zero_lagged_updates", Scene("lag.yaml", "output:", "friction: {lagged_updates: 0}\noutput:"),
       "run lag.yaml", 1, {"lag.yaml", "friction.lagged_updates", "'0'"}},
      {"unknown_hessian_projection",
       Scene("proj.yaml", "output:", "solver: {hessian_projection: exact}\noutput:"), "run proj.yaml", 1,
       {"proj.yaml", "solver.hessian_projection", "exact"}},
      {"negative_quasi_static_tolerance",
       Scene("qs.yaml", "output:", "quasi_static: {tolerance: -1}\noutput:"), "run qs.yaml", 1,
       {"qs.yaml", "quasi_static.tolerance", "'-1'"}},
      // Constraint collisions: the method's name, and where it cannot act.
      {"collision_method_unknown", {}, "run ok.yaml --set collision_objects.0.method=glue", 1,
       {"ok.yaml", "collision_objects[0].method", "penalty, constraint", "'glue'"}},
      {"collision_constraint_with_xpbd", {},
       "run ok.yaml --set collision_objects.0.method=constraint --set integrator=xpbd", 1,
       {"ok.yaml", "collision_objects[0].method", "integrator: backward_euler", "'xpbd'"}},
      {"collision_constraint_with_self_contact", {},
       "run ok.yaml --set collision_objects.0.method=constraint --set self_contact.enabled=true", 1,
       {"ok.yaml", "collision_objects[0].method", "self_contact.enabled"}},
      {"mpm_collision_method",
       [](const fs::path& d) {
         Write(d / "mpmmethod.yaml",
               std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05") +
                   "collision_objects: [{type: half_space, normal: [0, 1, 0], method: constraint}]\n");
       },
       "run mpmmethod.yaml", 1, {"mpmmethod.yaml", "collision_objects[0].method", "only FEM scenes"}},
      // --set (exit 1).
      {"set_unknown_key", {}, "run ok.yaml --set solvr.tau=1", 1, {"ok.yaml", "solvr"}},
      {"set_out_of_range", {}, "run ok.yaml --set time.frames=-1", 1, {"ok.yaml", "time.frames", "'-1'"}},
      {"set_not_yaml", {}, "run ok.yaml --set gravity=[0,0", 1, {"--set 'gravity=[0,0'", "not valid YAML"}},
      // XPBD.
      {"xpbd_substeps_zero", {}, "run ok.yaml --set integrator=xpbd --set xpbd.substeps=0", 1,
       {"ok.yaml", "xpbd.substeps", "an integer >= 1", "'0'"}},
      {"xpbd_iterations_negative", {}, "run ok.yaml --set integrator=xpbd --set xpbd.iterations=-2", 1,
       {"ok.yaml", "xpbd.iterations", "'-2'"}},
      {"chain_zero_length_edge", ChainScene("chain.yaml", "[0, -0.1, 0]", "[0, 0, 0]"), "run chain.yaml", 1,
       {"chain.yaml", "chains[0].points[1]", "zero-length edge"}},
      {"chain_zero_step", ChainScene("chain.yaml", "points: [[0, 0, 0], [0, -0.1, 0], [0, -0.2, 0]]",
                                     "start: [0, 0, 0], step: [0, 0, 0], count: 3"),
       "run chain.yaml", 1, {"chain.yaml", "chains[0].step", "zero-length edge"}},
      {"chain_zero_mass", ChainScene("chain.yaml", "mass: 1", "mass: 0"), "run chain.yaml", 1,
       {"chain.yaml", "chains[0].mass", "a positive number", "'0'"}},
      {"chain_negative_particle_mass", ChainScene("chain.yaml", "pinned:", "masses: [{index: 2, mass: -2}], pinned:"),
       "run chain.yaml", 1, {"chain.yaml", "chains[0].masses[0].mass", "'-2'"}},
      {"chain_negative_compliance", ChainScene("chain.yaml", "1.0e-4", "-1.0e-4"), "run chain.yaml", 1,
       {"chain.yaml", "chains[0].compliance", "'-1.0e-4'"}},
      {"cloth_zero_length_edge", ClothScene("0 1 0", ""),
       "run cloth.yaml", 1, {"cloth.yaml", "cloths[0]", "flat.off", "edge 2-3", "zero length"}},
      {"cloth_obj_face_out_of_range",
       [](const fs::path& d) {
         Write(d / "flat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 5 3\n");
         Write(d / "cloth.yaml", "discretization: particles\nintegrator: xpbd\n"
                                 "time: {dt: 0.01, frame_rate: 50, frames: 2}\n"
                                 "cloths:\n  - {mesh: flat.obj, mass: 0.01}\noutput: {directory: out}\n");
       },
       "run cloth.yaml", 1, {"flat.obj:6", "face 1 refers to vertex 5"}},
      {"xpbd_depenetration_speed_zero", {},
       "run ok.yaml --set integrator=xpbd --set xpbd.max_depenetration_speed=0", 1,
       {"ok.yaml", "xpbd.max_depenetration_speed", "'0'"}},
      {"xpbd_order_unknown", {}, "run ok.yaml --set integrator=xpbd --set xpbd.order=gauss", 1,
       {"ok.yaml", "xpbd.order", "'gauss'"}},
      {"chain_xpbd_order", ChainScene("chain.yaml", "pinned:", "pinned:"), "run chain.yaml --set xpbd.order=jacobi", 1,
       {"chain.yaml", "xpbd.order", "only for tet meshes"}},
      {"cloth_negative_bending_compliance", ClothScene("1 1 0", ", bending_compliance: -1"),
       "run cloth.yaml", 1, {"cloth.yaml", "cloths[0].bending_compliance", "'-1'"}},
      {"xpbd_negative_damping", {}, "run ok.yaml --set integrator=xpbd --set damping.stiffness_beta=-0.01", 1,
       {"ok.yaml", "damping.stiffness_beta", "'-0.01'"}},
      {"xpbd_with_loads",
       Scene("xload.yaml", "output:",
             "integrator: xpbd\nloads: [{type: body_force, acceleration: [1, 0, 0]}]\noutput:"),
       "run xload.yaml", 1, {"xload.yaml", "loads", "not available with integrator: xpbd"}},
      {"semi_implicit_with_loads",
       Scene("siload.yaml", "output:",
             "integrator: semi_implicit\nloads: [{type: body_force, acceleration: [1, 0, 0]}]\noutput:"),
       "run siload.yaml", 1, {"siload.yaml", "loads", "not available with integrator: semi_implicit"}},
      {"async_with_gravity_time_function",
       Scene("agtf.yaml", "output:",
             "integrator: async\ntime_functions: {up: {type: ramp, end: 1}}\ngravity_time_function: up\noutput:"),
       "run agtf.yaml", 1, {"agtf.yaml", "gravity_time_function", "not available with integrator: async"}},
      {"particles_with_loads",
       ChainScene("pload.yaml", "output:", "loads: [{type: body_force, acceleration: [1, 0, 0]}]\noutput:"),
       "run pload.yaml", 1, {"pload.yaml", "loads", "not available with integrator: xpbd on particles"}},
      {"xpbd_with_self_contact", {}, "run ok.yaml --set integrator=xpbd --set self_contact.enabled=true", 1,
       {"ok.yaml", "self_contact.enabled", "integrator: xpbd"}},
      {"xpbd_with_friction_potential", {}, "run ok.yaml --set integrator=xpbd --set friction.model=potential", 1,
       {"ok.yaml", "friction.model", "'potential'", "integrator: xpbd"}},
      // The scene's name is one path component of safe characters (exit 1).
      {"name_escapes_the_folder", Named("../escaped"), "run named.yaml", 1,
       {"named.yaml", "name", "../escaped"}},
      {"name_with_a_folder", Named("runs/bar_v2"), "run named.yaml", 1,
       {"named.yaml", "name", "runs/bar_v2"}},
      {"name_hidden", Named(".hidden"), "run named.yaml", 1,
       {"named.yaml", "name", ".hidden"}},
      {"name_with_a_space", Named("a b"), "run named.yaml", 1,
       {"named.yaml", "name", "'a b'"}},
      {"file_stem_as_name", Scene("bad stem.yaml"), "run 'bad stem.yaml'", 1, {"bad stem.yaml", "'bad stem'", "name"}},
      // Meshes and surfaces (exit 1).
      {"missing_mesh", Scene("mesh.yaml", "box.node", "nowhere.node"), "run mesh.yaml", 1, {"nowhere.node"}},
      {"inverted_tet", EditedMesh("inverted", ".ele", 6, SwapCorners), "run inverted.yaml", 1,
       {"inverted.ele", "tet 5", "inverted"}},
      {"degenerate_tet",
       Scene("degenerate.yaml", "box.node", test::SourcePath("tests/data/degenerate_tet.msh")),
       "run degenerate.yaml", 1, {"degenerate_tet.msh", "tet 6", "degenerate"}},
      {"nan_coordinate", EditedMesh("nan", ".node", 2, NanCoordinate), "run nan.yaml", 1,
       {"nan.node:3", "'nan'", "not a finite number"}},
      {"open_surface",
       [](const fs::path& d) {
         Write(d / "open.off", kOpenCube);
         Write(d / "open.yaml", kOpenCubeScene);
       },
       "run open.yaml", 1, {"open.off", "surface is not closed", "edge 4-5"}},
      // MPM: refused from the memory estimate, before sampling (exit 1).
      BadInput{"mpm_dx_typo", [](const fs::path& d) { Write(d / "typo.yaml", kDxTypo); }, "run typo.yaml", 1,
               {"typo.yaml: mpm.dx = 0.0001 m and mpm.ppc = 8", "6.4e+10 particles",
                "GB available on the run's 1 node", "MemAvailable in /proc/meminfo",
                "expected a larger mpm.dx or a smaller mpm.ppc"}}
          .Around(UnderTwoGigabytes),
      // Counts that cannot fit: refused from a lower bound of what they need, before
      // anything of that size is allocated (exit 1).
      BadInput{"chain_count_beyond_memory",
               ChainScene("huge.yaml", "points: [[0, 0, 0], [0, -0.1, 0], [0, -0.2, 0]]",
                          "start: [0, 0, 0], step: [0, -0.1, 0], count: 1000000000"),
               "run huge.yaml", 1,
               {"huge.yaml", "chains[0].count", "1e+09 chain particles need at least 80 GB", "GB available on this node",
                "expected a smaller count"}}
          .Around(UnderTwoGigabytes)
          .AlsoByCheck(),
      BadInput{"copies_beyond_memory", {}, "run ok.yaml --set 'bodies.0.copies={count: [1000, 1000, 1000]}'", 1,
               {"ok.yaml", "bodies[0].copies.count", "1e+09 copies of", "tets each) need at least",
                "GB available on this node", "expected a smaller count"}}
          .Around(UnderTwoGigabytes)
          .AlsoByCheck(),
      // PETSc options (exit 1); some values are judged only at the first solve.
      {"petsc_pc_type", {}, "run ok.yaml -newton_pc_type nonsense", 1, {"-newton_pc_type nonsense"}},
      {"petsc_ksp_type", {}, "run ok.yaml -newton_ksp_type nonsense", 1, {"-newton_ksp_type nonsense"}},
      BadInput{"petsc_mat_type", {}, "run ok.yaml -hessian_mat_type nonsense", 1, {"-hessian_mat_type nonsense"}}
          .AlsoByCheck(),
      {"petsc_line_search", {}, "run ok.yaml -newton_tao_ls_type nonsense", 1, {"-newton_tao_ls_type nonsense"}},
      {"petsc_integer", {}, "run ok.yaml -newton_ksp_max_it abc", 1, {"-newton_ksp_max_it"}},
      {"petsc_method", {}, "run ok.yaml -solver_method nonsense", 1, {"-solver_method"}},
      {"petsc_initializer", {}, "run ok.yaml -solver_method lbfgs -lbfgs_initializer nonsense", 1,
       {"-lbfgs_initializer"}},
      BadInput{"petsc_lbfgsh_ksp_type", {}, "run ok.yaml -solver_method lbfgs -lbfgsh_ksp_type nonsense", 1,
               {"-lbfgsh_ksp_type"}},
      BadInput{"petsc_factor_package", {},
               "run ok.yaml -newton_pc_type lu -newton_pc_factor_mat_solver_type nonsense", 1,
               {"-newton_pc_factor_mat_solver_type"}}
          .AlsoByCheck(),
      BadInput{"petsc_pc_for_another_format", {}, "run ok.yaml -hessian_mat_type sbaij -newton_pc_type gamg",
               1, {"-newton_pc_type"}}
          .AlsoByCheck(),
      {"petsc_dot_subdomains", {}, "run ok.yaml -solver_method dot -dot_subdomains_per_rank -1", 1,
       {"-dot_subdomains_per_rank"}},
      {"petsc_dot_subdomain_nodes", {}, "run ok.yaml -solver_method dot -dot_subdomain_nodes 0", 1,
       {"-dot_subdomain_nodes"}},
      {"petsc_dot_coarse", {}, "run ok.yaml -solver_method dot -dot_coarse nonsense", 1, {"-dot_coarse"}},
      {"petsc_dot_refresh_stall", {}, "run ok.yaml -solver_method dot -dot_refresh_stall 2", 1,
       {"-dot_refresh_stall"}},
      {"petsc_dot_merge", {}, "run ok.yaml -solver_method dot -dot_merge nonsense", 1, {"-dot_merge"}},
      {"petsc_log_csv_folder", {}, "run ok.yaml -optistep_log_csv no_such_folder/log.csv", 1,
       {"-optistep_log_csv no_such_folder/log.csv", "folder no_such_folder cannot be written"}},
      // DOT's subdomains are split and factored when the first step sets up its initializer:
      // the step taken on a copy first finds these too.
      BadInput{"petsc_dot_factor_package", {},
               "run ok.yaml -solver_method dot -dot_sub_pc_factor_mat_solver_type nonsense", 1,
               {"-dot_sub_pc_factor_mat_solver_type"}}
          .AlsoByCheck(),
      BadInput{"petsc_dot_more_subdomains_than_elements", {},
               "run ok.yaml -solver_method dot -dot_subdomains_per_rank 1000000", 1,
               {"dot.subdomains_per_rank"}}
          .AlsoByCheck(),
      // Judged only when the first step sets up its solvers: a run into a folder that holds
      // files takes that step on a copy first, and check takes it too (exit 1).
      BadInput{"hot_on_tets", {}, "run ok.yaml --set solver.method=hot", 1,
               {"'hot' needs the MPM grid", "newton_mg"}}.AlsoByCheck(),
      BadInput{"mpm_projective_dynamics", SmallMpmScene("mpd.yaml"),
               "run mpd.yaml --set solver.method=lbfgs --set solver.initializer=projective_dynamics", 1,
               {"projective_dynamics initializer", "rest shape"}}.AlsoByCheck(),
      BadInput{"mpm_subdomains", SmallMpmScene("msub.yaml"),
               "run msub.yaml --set solver.method=lbfgs --set solver.initializer=subdomains", 1,
               {"subdomains initializer", "tet mesh"}}.AlsoByCheck(),
      BadInput{"mpm_mg_levels_beyond_the_grid", SmallMpmScene("mlev.yaml"),
               "run mlev.yaml --set solver.method=hot --set solver.mg_levels=12", 1,
               {"mlev.yaml", "solver.mg_levels", "12 levels", "coarsens only to 4"}}.AlsoByCheck(),
      BadInput{"dot_subdomains_beyond_the_tets", {},
               "run ok.yaml --set solver.method=dot --set dot.subdomains_per_rank=100000", 1,
               {"dot.subdomains_per_rank", "100000", "tets"}}.AlsoByCheck(),
      BadInput{"dot_subdomains_beyond_the_tets_on_two_ranks", {},
               "run ok.yaml --set solver.method=dot --set dot.subdomains_per_rank=100000", 1,
               {"dot.subdomains_per_rank", "100000", "tets"}}.OnRanks(2),
      BadInput{"velocity_expression_infinite", VelocityExpression("inf.yaml", "1/x"), "run inf.yaml", 1,
               {"inf.yaml", "bodies[0].initial_conditions.velocity_expression[0] is inf at (0, "}}.AlsoByCheck(),
      BadInput{"velocity_expression_nan", VelocityExpression("nan.yaml", "sqrt(-1)"), "run nan.yaml", 1,
               {"nan.yaml", "velocity_expression[0] is nan", "finite"}}.AlsoByCheck(),
      BadInput{"velocity_expression_overflow", VelocityExpression("big.yaml", "exp(1000*x)"), "run big.yaml", 1,
               {"big.yaml", "velocity_expression[0] is inf"}}.AlsoByCheck(),
      BadInput{"velocity_expression_infinite_on_two_ranks", VelocityExpression("inf.yaml", "1/x"), "run inf.yaml", 1,
               {"inf.yaml", "velocity_expression[0] is inf"}}.OnRanks(2),
      BadInput{"mpm_velocity_expression_infinite",
               [](const fs::path& d) {
                 std::string scene = std::string(kDxTypo).replace(std::string(kDxTypo).find("1.0e-4"), 6, "0.05");
                 scene.replace(scene.find("material:"), 9,
                               "initial_conditions: {velocity_expression: ['sqrt(-1-x)', '0', '0']}\n    material:");
                 Write(d / "minf.yaml", scene);
               },
               "run minf.yaml", 1, {"minf.yaml", "bodies[0].initial_conditions.velocity_expression[0] is nan"}}.AlsoByCheck(),
      // --strict-options judges every option before anything is written (exit 1).
      {"strict_unused_option", {}, "run ok.yaml -newton_pc_typo jacobi --strict-options", 1,
       {"-newton_pc_typo jacobi", "set but never used", "--strict-options"}},
      {"strict_factor_package", {},
       "run ok.yaml --strict-options -newton_pc_type lu -newton_pc_factor_mat_solver_type nonsense", 1,
       {"-newton_pc_factor_mat_solver_type"}},
      // Restarts (exit 1).
      {"restart_without_checkpoint", [](const fs::path& d) { fs::remove_all(d / "out" / "checkpoints"); },
       "run ok.yaml --restart latest", 1, {"--restart latest", "no checkpoint in out/checkpoints"}},
      {"restart_every_checkpoint_damaged",
       [](const fs::path& d) {
         for (const char* file : {"ckpt_00000001.h5", "ckpt_00000002.h5"})
           test::FlipByte((d / "out" / "checkpoints" / file).string(), 20);  // the superblock
       },
       "run ok.yaml --restart latest", 1,
       {"every checkpoint in out/checkpoints is damaged", "ckpt_00000001.h5", "ckpt_00000002.h5"}},
      {"restart_another_scene", {}, "run ok.yaml --restart latest --set bodies.0.material.E=2.0e5", 1,
       {"ckpt_00000002.h5", "written for another scene", "bodies[0].material.E", "--allow-scene-change"}},
      // The output folder: in use by another run (exit 5), cannot be written (exit 4).
      BadInput{"folder_in_use", [](const fs::path& d) { Write(d / "out" / "optistep.lock", LockText()); },
               "run ok.yaml", 5, {"out is in use by the optistep run of pid", "out/optistep.lock"}}
          .WhileLocked(),
      {"folder_under_a_file", {}, "run ok.yaml --set output.directory=ok.yaml/out", 4,
       {"ok.yaml/out", "Not a directory"}},
      BadInput{"folder_unwritable_mid_run", {},
               "run ok.yaml --quiet --set time.frames=1000000 --set output.every=1 "
               "--set output.checkpoint_every_steps=1",
               // The system's reason is "Not a directory", or "No such file or directory"
               // when a frame is written between the mv and the touch.
               4, {"out/frames/ok_", "out/checkpoints/ckpt_", "is kept"}}
          .Around(FramesReplacedMidRun)
          .AfterRunStarted(),
  };
  return cases;
}

/// This process holds the fcntl lock on a file, as a running optistep holds its folder's.
class HeldLock {
 public:
  explicit HeldLock(const fs::path& path) : fd_(open(path.c_str(), O_RDWR | O_CLOEXEC)) {
    struct flock whole {};
    whole.l_type = F_WRLCK;
    whole.l_whence = SEEK_SET;
    EXPECT_EQ(fcntl(fd_, F_SETLK, &whole), 0) << path;
  }
  ~HeldLock() { close(fd_); }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;

 private:
  int fd_;
};

class BadInputTable : public ::testing::TestWithParam<BadInput> {
 protected:
  /// Once: the earlier run, whose folder each case copies.
  static void SetUpTestSuite() {
    earlier_ = test::SharedTempDir("bad_input_earlier");
    test::WriteBoxMesh((earlier_ / "box").string(), 2, 2, 2, Vec3(1, 1, 1));
    Write(earlier_ / "ok.yaml", test::BoxScene());
    earlier_code_ = test::Shell(earlier_.string(), std::string(OPTISTEP_EXECUTABLE) +
                                                       " run ok.yaml --quiet --set "
                                                       "output.checkpoint_every_steps=1 > run.txt 2>&1");
    earlier_log_ = ReadFile(earlier_ / "run.txt");
    fs::remove(earlier_ / "run.txt");
  }

  void SetUp() override {
    ASSERT_EQ(earlier_code_, 0) << earlier_log_;
    dir_ = test::SharedTempDir("bad_input");
    fs::copy(earlier_, dir_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static fs::path earlier_;
  static int earlier_code_;
  static std::string earlier_log_;
  fs::path dir_;
};

fs::path BadInputTable::earlier_;
int BadInputTable::earlier_code_ = -1;
std::string BadInputTable::earlier_log_;

TEST_P(BadInputTable, ExitCodeOneLineAndEarlierFilesKept) {
  const BadInput& c = GetParam();
  SCOPED_TRACE("optistep " + c.args);
  if (c.setup) c.setup(dir_);
  const std::set<std::string> outputs = {"stdout.txt", "stderr.txt"};
  const auto before = test::FolderContents(dir_, outputs);
  std::vector<std::string> pieces = c.pieces;
  test::Outcome o;
  if (c.ranks == 1) {
    std::optional<HeldLock> lock;
    if (c.locked) {
      lock.emplace(dir_ / "out" / "optistep.lock");
      pieces.push_back("pid " + std::to_string(getpid()));
    }
    o = test::Optistep(c.args, dir_, c.around);
  } else {
    const std::vector<test::Outcome> ranks = test::OptistepOnRanks(c.ranks, c.args, dir_);
    o = ranks[0];
    for (int r = 1; r < c.ranks; ++r) {
      EXPECT_EQ(ranks[r].exit_code, c.code) << "rank " << r;
      EXPECT_EQ(ranks[r].err, "") << "rank " << r << " printed too";
    }
  }
  test::ExpectOneLine(o, c.code, "optistep: error: ", pieces);
  if (c.folder == Folder::kUntouched)
    EXPECT_EQ(test::ContentsDiffer(before, test::FolderContents(dir_, outputs)), "");
  if (c.by_check) {
    ASSERT_EQ(c.args.rfind("run ", 0), 0u);
    const test::Outcome checked = test::Optistep("check " + c.args.substr(4), dir_, c.around);
    SCOPED_TRACE("optistep check");
    test::ExpectOneLine(checked, c.code, "optistep: error: ", pieces);
    EXPECT_EQ(test::ContentsDiffer(before, test::FolderContents(dir_, outputs)), "");
  }
}

/// What check accepts, run accepts: check takes the first step, and says so.
TEST(CheckCommand, TakesTheFirstStepAndWritesNothing) {
  const fs::path dir = test::SharedTempDir("check_accepts");
  test::WriteBoxMesh((dir / "box").string(), 2, 2, 2, Vec3(1, 1, 1));
  Write(dir / "ok.yaml", test::BoxScene());
  const test::Outcome o = test::Optistep("check ok.yaml", dir);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("ok.yaml is valid (its first step was taken; nothing was written)"), std::string::npos)
      << o.out;
  EXPECT_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInputTable, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<BadInput>& info) { return info.param.name; });

}  // namespace
}  // namespace optistep
