// The scene composed from its sections (io/SceneSectionParsers.hpp): the top-level key
// table, the cross-section defaults and rules, --set overrides, the compatibility check and
// the restart's scene difference. Every rank parses the same text, so every rank throws the
// same InputError.
#include "app/SceneConfig.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/Error.hpp"
#include "io/SceneCompatibility.hpp"
#include "io/SceneReader.hpp"
#include "io/SceneSectionParsers.hpp"

namespace optistep {

namespace {

namespace fs = std::filesystem;

const KeyTable* SceneKeys() {
  static const KeyTable table{
      "", "a scene: everything a run needs (SI units)",
      {Text("name", "the file's stem", "names the output files and the default folder").Allowing("[A-Za-z0-9._-]+, not starting with '.'"),
       Vector("gravity", Default(SceneConfig{}.gravity), "m/s^2"),
       Other("integrator", "choice", Default(SceneConfig{}.integrator), Join(ChoiceNames(IntegratorKind{}), ", "),
             "the time integrator"),
       Choice("discretization", Default(SceneConfig{}.discretization), ChoiceNames(Discretization{}), "tet meshes, MPM particles, or chains and cloths"),
       Other("mpm", "map", "", "", "the MPM grid and particles").Sub(MpmKeys),
       Other("time", "map", "required", "", "time stepping").Sub(TimeKeys),
       Other("bodies", "sequence of maps", "required (FEM, MPM)", "", "the bodies").Sub(BodyKeys),
       Other("boundary_conditions", "sequence of maps", "", "", "Dirichlet conditions").Sub(BoundaryConditionKeys),
       Other("collision_objects", "sequence of maps", "", "", "analytic obstacles").Sub(CollisionObjectKeys),
       Other("solver", "map", "", "", "the per-step minimizer").Sub(SolverKeys),
       Other("dot", "map", "", "", "DOT's subdomains").Sub(DotKeys),
       Other("damping", "map", "", "", "Rayleigh damping").Sub(DampingKeys),
       Other("friction", "map", "", "", "friction against collision objects").Sub(FrictionKeys),
       Other("quasi_static", "map", "", "", "the quasi-static integrator").Sub(QuasiStaticKeys),
       Other("xpbd", "map", "", "", "the XPBD integrator").Sub(XpbdKeys),
       Other("chains", "sequence of maps", "", "", "particles only: chains").Sub(ChainKeys),
       Other("cloths", "sequence of maps", "", "", "particles only: cloths").Sub(ClothKeys),
       Other("async", "map", "", "", "the asynchronous integrator").Sub(AsyncKeys),
       Other("self_contact", "map", "", "", "self- and body-body contact").Sub(SelfContactKeys),
       Other("output", "map", "", "", "output").Sub(OutputKeys),
       Other("petsc_options", "string or sequence of strings", "", "",
             "PETSc options inserted before the command line's (the command line wins)"),
       Other("time_functions", "map from names to maps", "", "", "named time functions").Sub(TimeFunctionKeys),
       Other("loads", "sequence of maps", "", "", "external loads").Sub(LoadKeys),
       Other("gravity_time_function", "name or map", "constant 1", "a key of time_functions, or inline",
             "tau(t), scaling gravity").Sub(TimeFunctionKeys)}};
  return &table;
}

/// A string, or a sequence of strings joined by spaces.
std::string ParsePetscOptions(const Field& f) {
  if (!f.node().IsDefined()) return "";
  if (f.node().IsScalar()) return f.node().Scalar();
  if (!f.node().IsSequence()) f.Expected("a string or a sequence of strings");
  Names words;
  for (const Field& item : f.Items()) item.To(words.emplace_back());
  return Join(words, " ");
}

SceneConfig ParseScene(const Field& root, const std::string& path) {
  const MapView m(root, *SceneKeys());
  SceneConfig scene;
  scene.path = path;
  scene.name = fs::path(path).stem().string();
  // The name makes file names in output.directory (and the default folder out/<name>).
  const std::string safe_name =
      "one path component of letters, digits, '.', '_' and '-', not starting with '.'";
  if (m.Read("name", scene.name)) {
    if (!IsSafeName(scene.name)) m.Get("name").Expected(safe_name);
  } else if (!IsSafeName(scene.name)) {
    throw InputError(path + ": the scene's name is its file's stem '" + scene.name +
                     "', which is not " + safe_name + "; give the scene a name: key");
  }
  m.Read("gravity", scene.gravity);
  std::string integrator = ToString(scene.integrator);
  m.Read("integrator", integrator);
  m.Read("discretization", scene.discretization);
  if (!FromString(integrator, &scene.integrator))
    m.Get("integrator").Error(UnavailableIntegrator(integrator, scene.discretization));
  const bool mpm = scene.discretization == Discretization::kMpm;
  MpmOnlyKeys(mpm, m, {"mpm"});
  if (mpm) scene.mpm = ParseMpm(m.Require("mpm"));
  scene.time = ParseTime(m.Require("time"));

  const std::string scene_folder = fs::path(path).parent_path().string();
  // Particle scenes hold chains, cloths and collision objects; the others bodies.
  const bool particles = scene.discretization == Discretization::kParticles;
  for (const char* key : {"bodies", "boundary_conditions"})
    if (particles && m.Has(key))
      m.Get(key).Error(std::string("particle scenes (discretization: particles) take 'chains' "
                                   "with 'pinned' particles, not '") + key + "'");
  for (const char* key : {"chains", "cloths"})
    if (!particles && m.Has(key))
      m.Get(key).Error(std::string("only particle scenes (discretization: particles) take '") + key + "'");
  if (particles) {
    scene.chains = ParseList<ChainConfig>(m.Get("chains"), ParseChain);
    scene.cloths = ParseList<ClothConfig>(m.Get("cloths"), [&](const Field& item, std::size_t i) {
      return ParseCloth(item, i, scene_folder);
    });
    if (scene.chains.empty() && scene.cloths.empty())
      m.self().Error("a particle scene needs a non-empty 'chains' or 'cloths'");
  }
  const Field bodies = particles ? m.Get("bodies") : m.Require("bodies");
  scene.bodies = ParseList<BodyConfig>(
      bodies,
      [&](const Field& item, std::size_t i) { return ParseBody(item, i, scene_folder, mpm); });
  if (scene.bodies.empty() && !particles) bodies.Expected("a non-empty sequence of bodies");
  Names body_names;
  for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
    const std::string& name = scene.bodies[i].name;
    const auto same = std::find(body_names.begin(), body_names.end(), name);
    if (same != body_names.end())
      bodies.Items()[i].Child("name").Error("expected a unique body name, got '" + name +
                                            "' again (also bodies[" +
                                            std::to_string(same - body_names.begin()) + "])");
    body_names.push_back(name);
  }
  scene.bodies = ExpandCopies(scene.bodies);
  body_names.clear();
  for (const BodyConfig& body : scene.bodies) body_names.push_back(body.name);

  scene.boundary_conditions = ParseList<BoundaryConditionConfig>(
      m.Get("boundary_conditions"), [&](const Field& item, std::size_t i) {
        return ParseBoundaryCondition(item, i, body_names);
      });
  scene.collision_objects = ParseList<CollisionObjectConfig>(
      m.Get("collision_objects"),
      [&](const Field& item, std::size_t) { return ParseCollisionObject(item, mpm); });
  const TimeFunctions time_functions = ParseTimeFunctions(m.Get("time_functions"));
  scene.loads = ParseList<LoadConfig>(m.Get("loads"), [&](const Field& item, std::size_t i) {
    return ParseLoad(item, i, body_names, time_functions, mpm);
  });
  if (m.Has("gravity_time_function"))
    scene.gravity_time_function = ReadTimeFunction(m.Get("gravity_time_function"), time_functions);
  scene.solver = ParseSolver(m.Get("solver"), mpm, scene.integrator);
  // DOT's subdomains are sets of tets: an MPM grid has none.
  if (mpm && m.Has("dot")) m.Get("dot").Error("only FEM scenes (discretization: fem) take 'dot'");
  scene.solver.dot = ParseDot(m.Get("dot"));
  scene.solver.scene_path = path;
  MapView(m.Get("damping"), *DampingKeys()).Read("stiffness_beta", scene.damping.stiffness_beta);
  const MapView friction(m.Get("friction"), *FrictionKeys());
  scene.friction.model = DefaultFrictionModel(scene.discretization, scene.integrator);
  friction.Read("model", scene.friction.model);
  friction.Read("epsilon_v", scene.friction.epsilon_v);
  friction.Read("lagged_updates", scene.friction.lagged_updates);
  const MapView quasi_static(m.Get("quasi_static"), *QuasiStaticKeys());
  quasi_static.Read("ramp", scene.quasi_static.ramp);
  quasi_static.Read("ramp_time", scene.quasi_static.ramp_time);
  quasi_static.Read("tolerance", scene.quasi_static.tolerance);
  const MapView xpbd(m.Get("xpbd"), *XpbdKeys());
  xpbd.Read("substeps", scene.xpbd.substeps);
  xpbd.Read("iterations", scene.xpbd.iterations);
  xpbd.Read("max_depenetration_speed", scene.xpbd.max_depenetration_speed);
  xpbd.Read("order", scene.xpbd.order);
  if (particles && xpbd.Has("order"))
    xpbd.Get("order").Error("only for tet meshes: particle scenes step their constraints by color");
  if (mpm && m.Has("async")) m.Get("async").Error("only FEM scenes (discretization: fem) take 'async'");
  const MapView async(m.Get("async"), *AsyncKeys());
  async.Read("surface_layers", scene.async.surface_layers);
  async.Read("epsilon", scene.async.epsilon);
  async.Read("coupling", scene.async.coupling);
  if (mpm && m.Has("self_contact"))
    m.Get("self_contact").Error("only FEM scenes (discretization: fem) take 'self_contact'");
  const MapView self_contact(m.Get("self_contact"), *SelfContactKeys());
  self_contact.Read("enabled", scene.self_contact.enabled);
  self_contact.Read("stiffness", scene.self_contact.stiffness);
  self_contact.Read("line_search_guard", scene.self_contact.line_search_guard);
  self_contact.Read("friction", scene.self_contact.friction);
  const MapView output(m.Get("output"), *OutputKeys());
  scene.output.directory = "out/" + scene.name;
  output.Read("directory", scene.output.directory);
  output.Read("every", scene.output.every);
  output.Read("checkpoint_every_steps", scene.output.checkpoint_every_steps);
  output.Read("checkpoint_every_seconds", scene.output.checkpoint_every_seconds);
  output.Read("checkpoints_kept", scene.output.checkpoints_kept);
  scene.petsc_options = ParsePetscOptions(m.Get("petsc_options"));
  CheckCombinations(scene);
  return scene;
}

/// Applies one --set "a.b.0.c=value" to the document. Missing maps on the path are
/// created; sequence items must exist.
void ApplyOverride(YAML::Node& root, const std::string& file, const std::string& override_text) {
  const auto fail = [&](const std::string& message) {
    throw InputError(file + ": --set '" + override_text + "': " + message);
  };
  const std::size_t equals = override_text.find('=');
  if (equals == std::string::npos) fail("expected key.path=value");
  Names keys;
  std::stringstream key_path(override_text.substr(0, equals));
  for (std::string key; std::getline(key_path, key, '.');) keys.push_back(key);
  if (keys.empty() || std::count(keys.begin(), keys.end(), "") > 0 ||
      override_text[equals - 1] == '.')
    fail("expected key.path=value with no empty key");
  YAML::Node value;
  try {
    value = YAML::Load(override_text.substr(equals + 1));
  } catch (const YAML::Exception& e) {
    fail("the value is not valid YAML (" + e.msg + ")");
  }

  YAML::Node parent = root;  // moved down with reset(): Node::operator= would assign content
  std::string where = "the top level";
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::string& key = keys[k];
    const bool last = k + 1 == keys.size();
    const YAML::Node& lookup = parent;  // const lookups do not insert keys
    YAML::Node child;
    if (parent.IsSequence()) {
      const bool is_index = key.size() <= 9 && std::all_of(key.begin(), key.end(), [](char c) {
                              return c >= '0' && c <= '9';
                            });
      if (!is_index) fail(where + " is a sequence, and '" + key + "' is not an index");
      const std::size_t index = std::stoul(key);
      if (index >= parent.size())
        fail(where + " has no item " + key + " (it has " + std::to_string(parent.size()) + ")");
      if (last) {
        parent[index] = value;
        return;
      }
      child.reset(lookup[index]);
    } else if (parent.IsMap() || (last && parent.IsNull())) {
      if (last) {
        parent[key] = value;
        return;
      }
      if (!lookup[key].IsDefined()) {
        // A missing map on the way is created (e.g. --set solver.tau=1e-8 in a scene with
        // no solver block); the schema check afterwards rejects keys that do not exist.
        parent[key] = YAML::Node(YAML::NodeType::Map);
      }
      child.reset(lookup[key]);
    } else {
      fail(where + " is " + Describe(parent) + ", so it has no key '" + key + "'");
    }
    where = Join(Names(keys.begin(), keys.begin() + k + 1), ".");
    parent.reset(child);
  }
}

/// The scene tree of text without the output keys that cannot change a trajectory.
YAML::Node TrajectoryTree(const std::string& text) {
  YAML::Node root = YAML::Load(text);
  const YAML::Node& lookup = root;  // const lookups do not insert keys
  if (!root.IsMap() || !lookup["output"].IsDefined()) return root;
  YAML::Node output = root["output"];
  if (output.IsMap())
    for (const char* key : {"directory", "every", "checkpoint_every_steps",
                            "checkpoint_every_seconds", "checkpoints_kept"})
      output.remove(key);
  if (output.IsNull() || (output.IsMap() && output.size() == 0)) root.remove("output");
  return root;
}

/// The key path of the first difference between a and b below path and the two values,
/// or "" if there is none.
std::string FirstDifference(const YAML::Node& a, const YAML::Node& b, const std::string& path) {
  const auto differ = [&] {
    return (path.empty() ? "the top level" : path) + ": " + Describe(a) + " in the checkpoint, " +
           Describe(b) + " now";
  };
  if (a.IsDefined() != b.IsDefined() || a.Type() != b.Type()) return differ();
  if (a.IsScalar()) return a.Scalar() == b.Scalar() ? "" : differ();
  if (a.IsSequence()) {
    if (a.size() != b.size()) return differ();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string found = FirstDifference(a[i], b[i], path + "[" + std::to_string(i) + "]");
      if (!found.empty()) return found;
    }
    return "";
  }
  if (!a.IsMap()) return "";
  const auto child = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };
  for (const auto& entry : a) {
    const std::string key = entry.first.Scalar();
    const std::string found = FirstDifference(entry.second, b[key], child(key));
    if (!found.empty()) return found;
  }
  for (const auto& entry : b) {
    const std::string key = entry.first.Scalar();
    if (!a[key].IsDefined()) return FirstDifference(a[key], entry.second, child(key));
  }
  return "";
}

}  // namespace

const KeyTable& SceneSchema() { return *SceneKeys(); }

std::string SceneDifference(const std::string& checkpoint_text, const std::string& text) {
  try {
    return FirstDifference(TrajectoryTree(checkpoint_text), TrajectoryTree(text), "");
  } catch (const YAML::Exception& e) {
    return "the scene texts cannot be compared (" + e.msg + ")";
  }
}

SceneConfig ReadSceneConfig(const std::string& path, const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw InputError(path + ": " +
                     (fs::exists(path, ec) ? "not a regular file" : "no such scene file"));
  std::ifstream in(path);
  std::stringstream raw;
  raw << in.rdbuf();
  if (!in) throw InputError(path + ": cannot read the scene file");

  YAML::Node root;
  try {
    root = YAML::Load(raw.str());
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": malformed YAML: " + e.msg);
  }
  for (const std::string& override_text : overrides) ApplyOverride(root, path, override_text);

  SceneConfig scene = ParseScene(Field(path, root, ""), path);
  if (overrides.empty()) {
    scene.text = raw.str();
  } else {
    YAML::Emitter emitter;
    emitter << root;
    scene.text = std::string(emitter.c_str()) + "\n";
  }
  return scene;
}

}  // namespace optistep
