// ReadSceneConfig (io/SceneConfig.cpp): every schema field read back exactly as written,
// the documented defaults, frames from end_time, one InputError per class of bad input
// (message names the file and the key path), --set overrides, mesh path resolution,
// and TransformConfig::Apply against a hand-computed placement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/Error.hpp"
#include "io/SceneConfig.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

// A small valid scene; error cases below each change one thing in it.
const char* const kMinimal = R"(time: {frame_rate: 24, frames: 2}
bodies:
  - mesh: bar.msh
    material: {E: 1e5, nu: 0.3, density: 1000}
)";

class SceneConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("optistep_scene_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Writes `text` to dir_/relative and returns the path.
  std::string Write(const std::string& relative, const std::string& text) const {
    const fs::path path = dir_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  /// The InputError message of reading `path`, or "" (and a failure) if none is thrown.
  static std::string ErrorOf(const std::string& path,
                             const std::vector<std::string>& overrides = {}) {
    try {
      ReadSceneConfig(path, overrides);
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no InputError reading " << path;
    return "";
  }

  fs::path dir_;
};

TEST_F(SceneConfigTest, FullSceneRoundTripsEveryField) {
  const std::string path = Write("full.yaml", R"(# every key of the schema
name: full_scene
gravity: [0.5, -9.5, 0.25]
integrator: backward_euler
time:
  dt: 0.001
  frame_dt: 0.04
  frames: 7
  max_dt_halvings: 3
bodies:
  - name: beam
    mesh: meshes/beam.msh
    transform:
      scale: [2, 3, 4]
      rotate: {axis: [0, 0, 2], angle_deg: 30}
      translate: [1, 2, 3]
    material: {model: stable_neo_hookean, E: 2.5e5, nu: 0.45, density: 1100}
    initial_velocity: [0.1, 0.2, 0.3]
  - name: block
    mesh: /abs/block.ele
    transform: {scale: 0.5}
    material: {model: linear, E: 1e9, nu: 0, density: 7800}
boundary_conditions:
  - name: clamp
    select: {box: {min: [-1, -2, -3], max: [1, 2, 3]}, body: beam}
  - select: {axis: z, end: max, within: 0.05}
    motion:
      - translate: {velocity: [0, 0, -0.5]}
        start: 0.5
        end: 1.5
      - rotate: {axis: [3, 4, 0], angular_velocity: 6.25, center: [1, 1, 1]}
        start: 2
        end: .inf
      - rotate: {axis: [0, -1, 0], angular_velocity: -1}
collision_objects:
  - {type: half_space, name: floor, point: [0, -1, 0], normal: [0, 2, 0],
     stiffness: 2e5, friction: 0.4}
  - {type: sphere, center: [1, 2, 3], radius: 0.75}
  - {type: box, min: [0, 0, 0], max: [1, 1, 1]}
  - {type: cylinder, center: [0, 1, 0], radius: 0.2, axis: [2, 0, 0]}
solver:
  method: newton
  termination: absolute
  cn_epsilon: 1e-4
  tau: 1e-7
  max_iterations: 50
  kappa: 0.125
  step_clamp: 10
  forcing_sigma: 0.5
  best_of_two_guesses: false
damping: {stiffness_beta: 0.01}
output: {directory: results/full, every: 5}
petsc_options: [-newton_ksp_type cg, -newton_pc_type jacobi]
)");
  const SceneConfig s = ReadSceneConfig(path);
  EXPECT_EQ(s.path, path);
  EXPECT_EQ(s.name, "full_scene");
  EXPECT_EQ(s.gravity, Vec3(0.5, -9.5, 0.25));
  EXPECT_EQ(s.integrator, "backward_euler");
  EXPECT_EQ(s.time.dt, 0.001);
  EXPECT_EQ(s.time.frame_dt, 0.04);
  EXPECT_EQ(s.time.frames, 7);
  EXPECT_EQ(s.time.max_dt_halvings, 3);

  ASSERT_EQ(s.bodies.size(), 2u);
  const BodyConfig& beam = s.bodies[0];
  EXPECT_EQ(beam.name, "beam");
  EXPECT_EQ(beam.mesh, (dir_ / "meshes/beam.msh").string());
  EXPECT_EQ(beam.transform.scale, Vec3(2, 3, 4));
  EXPECT_EQ(beam.transform.rotate_axis, Vec3(0, 0, 1));
  EXPECT_EQ(beam.transform.rotate_angle_deg, 30.0);
  EXPECT_EQ(beam.transform.translate, Vec3(1, 2, 3));
  EXPECT_EQ(beam.material.model, "stable_neo_hookean");
  EXPECT_EQ(beam.material.E, 2.5e5);
  EXPECT_EQ(beam.material.nu, 0.45);
  EXPECT_EQ(beam.material.density, 1100.0);
  EXPECT_EQ(beam.initial_velocity, Vec3(0.1, 0.2, 0.3));
  const BodyConfig& block = s.bodies[1];
  EXPECT_EQ(block.mesh, "/abs/block.ele");
  EXPECT_EQ(block.transform.scale, Vec3(0.5, 0.5, 0.5));
  EXPECT_EQ(block.material.model, "linear");
  EXPECT_EQ(block.material.E, 1e9);
  EXPECT_EQ(block.material.nu, 0.0);

  ASSERT_EQ(s.boundary_conditions.size(), 2u);
  const BoundaryConditionConfig& clamp = s.boundary_conditions[0];
  EXPECT_EQ(clamp.name, "clamp");
  EXPECT_EQ(clamp.select.kind, SelectionConfig::Kind::kBox);
  EXPECT_EQ(clamp.select.box_min, Vec3(-1, -2, -3));
  EXPECT_EQ(clamp.select.box_max, Vec3(1, 2, 3));
  EXPECT_EQ(clamp.select.body, "beam");
  EXPECT_TRUE(clamp.motion.empty());
  const BoundaryConditionConfig& pull = s.boundary_conditions[1];
  EXPECT_EQ(pull.name, "bc1");
  EXPECT_EQ(pull.select.kind, SelectionConfig::Kind::kAxisEnd);
  EXPECT_EQ(pull.select.axis, 2);
  EXPECT_TRUE(pull.select.end_max);
  EXPECT_EQ(pull.select.within, 0.05);
  EXPECT_EQ(pull.select.body, "");
  ASSERT_EQ(pull.motion.size(), 3u);
  EXPECT_EQ(pull.motion[0].kind, MotionSegmentConfig::Kind::kTranslate);
  EXPECT_EQ(pull.motion[0].velocity, Vec3(0, 0, -0.5));
  EXPECT_EQ(pull.motion[0].start, 0.5);
  EXPECT_EQ(pull.motion[0].end, 1.5);
  EXPECT_EQ(pull.motion[1].kind, MotionSegmentConfig::Kind::kRotate);
  EXPECT_EQ(pull.motion[1].axis, Vec3(0.6, 0.8, 0));  // [3, 4, 0] / 5
  EXPECT_EQ(pull.motion[1].angular_velocity, 6.25);
  EXPECT_TRUE(pull.motion[1].has_center);
  EXPECT_EQ(pull.motion[1].center, Vec3(1, 1, 1));
  EXPECT_EQ(pull.motion[1].start, 2.0);
  EXPECT_EQ(pull.motion[1].end, std::numeric_limits<double>::infinity());
  EXPECT_EQ(pull.motion[2].axis, Vec3(0, -1, 0));
  EXPECT_FALSE(pull.motion[2].has_center);
  EXPECT_EQ(pull.motion[2].start, 0.0);

  ASSERT_EQ(s.collision_objects.size(), 4u);
  const CollisionObjectConfig& floor = s.collision_objects[0];
  EXPECT_EQ(floor.kind, CollisionObjectConfig::Kind::kHalfSpace);
  EXPECT_EQ(floor.name, "floor");
  EXPECT_EQ(floor.point, Vec3(0, -1, 0));
  EXPECT_EQ(floor.normal, Vec3(0, 1, 0));
  EXPECT_EQ(floor.stiffness, 2e5);
  EXPECT_EQ(floor.friction, 0.4);
  EXPECT_EQ(s.collision_objects[1].kind, CollisionObjectConfig::Kind::kSphere);
  EXPECT_EQ(s.collision_objects[1].center, Vec3(1, 2, 3));
  EXPECT_EQ(s.collision_objects[1].radius, 0.75);
  EXPECT_EQ(s.collision_objects[2].kind, CollisionObjectConfig::Kind::kBox);
  EXPECT_EQ(s.collision_objects[2].box_max, Vec3(1, 1, 1));
  EXPECT_EQ(s.collision_objects[3].kind, CollisionObjectConfig::Kind::kCylinder);
  EXPECT_EQ(s.collision_objects[3].axis, Vec3(1, 0, 0));
  EXPECT_EQ(s.collision_objects[3].radius, 0.2);

  EXPECT_EQ(s.solver.method, "newton");
  EXPECT_EQ(s.solver.termination, "absolute");
  EXPECT_EQ(s.solver.cn_epsilon, 1e-4);
  EXPECT_EQ(s.solver.tau, 1e-7);
  EXPECT_EQ(s.solver.max_iterations, 50);
  EXPECT_EQ(s.solver.kappa, 0.125);
  EXPECT_EQ(s.solver.step_clamp, 10.0);
  EXPECT_EQ(s.solver.forcing_sigma, 0.5);
  EXPECT_FALSE(s.solver.best_of_two_guesses);
  EXPECT_EQ(s.damping.stiffness_beta, 0.01);
  EXPECT_EQ(s.output.directory, "results/full");
  EXPECT_EQ(s.output.every, 5);
  EXPECT_EQ(s.petsc_options, "-newton_ksp_type cg -newton_pc_type jacobi");
}

TEST_F(SceneConfigTest, Defaults) {
  const std::string path = Write("bar.yaml", kMinimal);
  const SceneConfig s = ReadSceneConfig(path);
  EXPECT_EQ(s.name, "bar");
  EXPECT_EQ(s.text, kMinimal);
  EXPECT_EQ(s.gravity, Vec3(0, -9.81, 0));
  EXPECT_EQ(s.integrator, "backward_euler");
  EXPECT_EQ(s.time.frame_dt, 1.0 / 24.0);
  EXPECT_EQ(s.time.dt, 1.0 / 24.0);
  EXPECT_EQ(s.time.frames, 2);
  EXPECT_EQ(s.time.max_dt_halvings, 8);
  ASSERT_EQ(s.bodies.size(), 1u);
  EXPECT_EQ(s.bodies[0].name, "body0");
  EXPECT_EQ(s.bodies[0].material.model, "fixed_corotated");
  EXPECT_EQ(s.bodies[0].transform.Apply(Vec3(1, 2, 3)), Vec3(1, 2, 3));
  EXPECT_EQ(s.bodies[0].initial_velocity, Vec3::Zero());
  EXPECT_TRUE(s.boundary_conditions.empty());
  EXPECT_TRUE(s.collision_objects.empty());
  const SolverConfig solver_defaults;
  EXPECT_EQ(s.solver.termination, "characteristic_norm");
  EXPECT_EQ(s.solver.cn_epsilon, solver_defaults.cn_epsilon);
  EXPECT_EQ(s.solver.max_iterations, solver_defaults.max_iterations);
  EXPECT_TRUE(s.solver.best_of_two_guesses);
  EXPECT_EQ(s.damping.stiffness_beta, 0.0);
  EXPECT_EQ(s.output.directory, "out/bar");
  EXPECT_EQ(s.output.every, 1);
  EXPECT_EQ(s.petsc_options, "");

  const SceneConfig named = ReadSceneConfig(
      Write("named.yaml", std::string(kMinimal) +
                              "name: tower\n"
                              "boundary_conditions: [{select: {axis: y, end: min}, motion: []}]\n"
                              "collision_objects: [{type: half_space, normal: [0, 1, 0]}]\n"
                              "petsc_options: -newton_ksp_type cg -newton_pc_type jacobi\n"));
  EXPECT_EQ(named.output.directory, "out/tower");
  EXPECT_EQ(named.boundary_conditions[0].name, "bc0");
  EXPECT_EQ(named.boundary_conditions[0].select.within, 0.01);
  EXPECT_FALSE(named.boundary_conditions[0].select.end_max);
  EXPECT_EQ(named.collision_objects[0].stiffness, CollisionObjectConfig().stiffness);
  EXPECT_EQ(named.collision_objects[0].friction, 0.0);
  EXPECT_EQ(named.petsc_options, "-newton_ksp_type cg -newton_pc_type jacobi");
}

TEST_F(SceneConfigTest, FramesFromEndTime) {
  const auto frames = [&](const std::string& time) {
    return ReadSceneConfig(Write("t.yaml", "time: " + time +
                                               "\nbodies: [{mesh: m.msh, "
                                               "material: {E: 1, nu: 0, density: 1}}]\n"))
        .time.frames;
  };
  EXPECT_EQ(frames("{frame_rate: 24, end_time: 1}"), 24);
  EXPECT_EQ(frames("{frame_rate: 24, end_time: 1.01}"), 25);
  // 1.1 / 0.1 = 11.000000000000002 in doubles: still 11 frames.
  EXPECT_EQ(frames("{frame_dt: 0.1, end_time: 1.1}"), 11);
  EXPECT_EQ(frames("{frame_dt: 2, end_time: 0.5}"), 1);
}

TEST_F(SceneConfigTest, MeshPathsResolveAgainstTheSceneFolder) {
  const std::string path =
      Write("scenes/sub/s.yaml",
            "time: {frame_dt: 1, frames: 1}\nbodies:\n"
            "  - {mesh: m/a.msh, material: {E: 1, nu: 0, density: 1}}\n"
            "  - {mesh: ../shared/b.node, material: {E: 1, nu: 0, density: 1}}\n"
            "  - {mesh: /data/c.msh, material: {E: 1, nu: 0, density: 1}}\n");
  const SceneConfig s = ReadSceneConfig(path);
  EXPECT_EQ(s.bodies[0].mesh, (dir_ / "scenes/sub/m/a.msh").string());
  EXPECT_EQ(s.bodies[1].mesh, (dir_ / "scenes/shared/b.node").string());
  EXPECT_EQ(s.bodies[2].mesh, "/data/c.msh");
}

TEST_F(SceneConfigTest, TransformApply) {
  TransformConfig t;
  t.scale = Vec3(2, 2, 2);
  t.rotate_axis = Vec3(0, 0, 1);
  t.rotate_angle_deg = 90;
  // (1,0,0) scaled to (2,0,0), turned 90 deg about z to (0,2,0).
  EXPECT_NEAR((t.Apply(Vec3(1, 0, 0)) - Vec3(0, 2, 0)).norm(), 0.0, 1e-15);
  t.translate = Vec3(1, 2, 3);
  EXPECT_NEAR((t.Apply(Vec3(1, 0, 0)) - Vec3(1, 4, 3)).norm(), 0.0, 1e-15);
  TransformConfig per_axis;
  per_axis.scale = Vec3(2, 3, 4);
  EXPECT_EQ(per_axis.Apply(Vec3(1, 1, 1)), Vec3(2, 3, 4));
}

struct BadInput {
  const char* what;
  std::string text;                       // scene file contents
  std::vector<std::string> must_contain;  // besides the file name
};

TEST_F(SceneConfigTest, BadInputsNameFileAndKey) {
  const std::string body = "bodies: [{mesh: m.msh, material: {E: 1e5, nu: 0.3, density: 1000}}]\n";
  const std::string time = "time: {frame_rate: 24, frames: 2}\n";
  const std::vector<BadInput> cases = {
      {"unknown key",
       time + "bodies: [{mesh: m.msh, materail: {E: 1, nu: 0, density: 1}}]\n",
       {"bodies[0].materail: unknown key (known: name, mesh, transform, material, "
        "initial_velocity)"}},
      {"unknown top-level key", time + body + "gravitty: [0, 0, 0]\n", {"gravitty: unknown key"}},
      {"wrong type",
       time + body + "gravity: down\n",
       {"gravity: expected a sequence of 3 numbers, got 'down'"}},
      {"negative E",
       time + "bodies: [{mesh: m.msh, material: {E: -3, nu: 0.3, density: 1}}]\n",
       {"bodies[0].material.E: expected a positive number, got '-3'"}},
      {"nu = 0.5",
       time + "bodies: [{mesh: m.msh, material: {E: 1, nu: 0.5, density: 1}}]\n",
       {"bodies[0].material.nu: expected a number in [0, 0.5), got '0.5'"}},
      {"missing material",
       time + "bodies: [{mesh: m.msh}]\n",
       {"bodies[0].material: required key is missing"}},
      {"missing time", body, {"time: required key is missing"}},
      {"empty bodies", time + "bodies: []\n", {"bodies: expected a non-empty sequence"}},
      {"dt = 0",
       "time: {dt: 0, frame_rate: 24, frames: 2}\n" + body,
       {"time.dt: expected a positive number, got '0'"}},
      {"frame_rate and frame_dt",
       "time: {frame_rate: 24, frame_dt: 0.1, frames: 2}\n" + body,
       {"time: expected exactly one of frame_rate, frame_dt, got frame_rate and frame_dt"}},
      {"neither frames nor end_time",
       "time: {frame_rate: 24}\n" + body,
       {"time: expected exactly one of frames, end_time, got none"}},
      {"frames: 2.5",
       "time: {frame_rate: 24, frames: 2.5}\n" + body,
       {"time.frames: expected an integer >= 1, got '2.5'"}},
      {"max_dt_halvings out of range",
       "time: {frame_rate: 24, frames: 1, max_dt_halvings: 31}\n" + body,
       {"time.max_dt_halvings: expected an integer in [0, 30], got '31'"}},
      {"unknown material model",
       time + "bodies: [{mesh: m.msh, material: {model: neo, E: 1, nu: 0, density: 1}}]\n",
       {"bodies[0].material.model: expected one of fixed_corotated, stable_neo_hookean, linear, "
        "got 'neo'"}},
      {"bad vector length",
       time + body + "gravity: [0, -9.81]\n",
       {"gravity: expected a sequence of 3 numbers, got a sequence of 2 items"}},
      {"non-number in vector",
       time + body + "gravity: [0, down, 0]\n",
       {"gravity[1]: expected a number, got 'down'"}},
      {"zero rotation axis",
       time + "bodies: [{mesh: m.msh, transform: {rotate: {axis: [0, 0, 0], angle_deg: 9}}, "
              "material: {E: 1, nu: 0, density: 1}}]\n",
       {"bodies[0].transform.rotate.axis: expected a non-zero vector, got [0, 0, 0]"}},
      {"duplicate body names",
       time + "bodies: [{name: a, mesh: m.msh, material: {E: 1, nu: 0, density: 1}},"
              " {name: a, mesh: m.msh, material: {E: 1, nu: 0, density: 1}}]\n",
       {"bodies[1].name: expected a unique body name, got 'a' again (also bodies[0])"}},
      {"unknown bc body",
       time + body + "boundary_conditions: [{select: {axis: x, end: min, body: wall}}]\n",
       {"boundary_conditions[0].select.body: expected the name of a body (body0), got 'wall'"}},
      {"select with both box and axis",
       time + body +
           "boundary_conditions: [{select: {axis: x, end: min, box: {min: [0,0,0], max: "
           "[1,1,1]}}}]\n",
       {"boundary_conditions[0].select: expected exactly one of box, axis, got box and axis"}},
      {"end with box",
       time + body +
           "boundary_conditions: [{select: {end: min, box: {min: [0,0,0], max: [1,1,1]}}}]\n",
       {"boundary_conditions[0].select.end: not allowed with box (allowed: box, body)"}},
      {"box min > max",
       time + body + "boundary_conditions: [{select: {box: {min: [0,2,0], max: [1,1,1]}}}]\n",
       {"boundary_conditions[0].select.box: expected min <= max componentwise, got min [0, 2, 0] "
        "and max [1, 1, 1]"}},
      {"segment with translate and rotate",
       time + body +
           "boundary_conditions: [{select: {axis: x, end: min}, motion: "
           "[{translate: {velocity: [1,0,0]}, rotate: {axis: [0,0,1], angular_velocity: 1}}]}]\n",
       {"boundary_conditions[0].motion[0]: expected exactly one of translate, rotate, got "
        "translate "
        "and rotate"}},
      {"segment end <= start",
       time + body +
           "boundary_conditions: [{select: {axis: x, end: min}, motion: "
           "[{translate: {velocity: [1,0,0]}, start: 2, end: 1}]}]\n",
       {"boundary_conditions[0].motion[0].end: expected a number > 2, got '1'"}},
      {"key of another collision type",
       time + body + "collision_objects: [{type: half_space, normal: [0,1,0], radius: 1}]\n",
       {"collision_objects[0].radius: not allowed for type half_space (allowed: type, name, "
        "stiffness, friction, point, normal)"}},
      {"unknown collision type",
       time + body + "collision_objects: [{type: cone}]\n",
       {"collision_objects[0].type: expected one of half_space, sphere, box, cylinder, got "
        "'cone'"}},
      {"kappa = 1",
       time + body + "solver: {kappa: 1}\n",
       {"solver.kappa: expected a number in (0, 1), got '1'"}},
      {"bool expected",
       time + body + "solver: {best_of_two_guesses: maybe}\n",
       {"solver.best_of_two_guesses: expected true or false, got 'maybe'"}},
      {"bodies is a map",
       time + "bodies: {mesh: m.msh}\n",
       {"bodies: expected a sequence, got a map"}},
  };
  for (const BadInput& c : cases) {
    const std::string path = Write("bad.yaml", c.text);
    const std::string message = ErrorOf(path);
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << c.what << ": " << message;
    for (const std::string& part : c.must_contain)
      EXPECT_NE(message.find(part), std::string::npos) << c.what << ": " << message;
  }
}

TEST_F(SceneConfigTest, MalformedYamlGivesLineAndColumn) {
  const std::string path = Write("broken.yaml", "time: {frame_rate: 24, frames: 2}\nbodies: [\n");
  const std::string message = ErrorOf(path);
  EXPECT_EQ(message.rfind(path + ":3:1: malformed YAML: ", 0), 0u) << message;
}

TEST_F(SceneConfigTest, MissingFileNamesThePath) {
  const std::string path = (dir_ / "nowhere.yaml").string();
  EXPECT_EQ(ErrorOf(path), path + ": no such scene file");
}

TEST_F(SceneConfigTest, Overrides) {
  const std::string path =
      Write("o.yaml", std::string(kMinimal) +
                          "  - {name: right, mesh: bar.msh, material: {E: 1, nu: 0, density: 1}}\n"
                          "solver: {tau: 1e-6}\n");
  const SceneConfig s = ReadSceneConfig(
      path, {"bodies.0.material.E=1e6", "gravity=[0,0,-1]", "bodies.1.name=left",
             "solver.kappa=0.25", "petsc_options=-ksp_view", "bodies.1.transform={scale: 2}"});
  EXPECT_EQ(s.bodies[0].material.E, 1e6);
  EXPECT_EQ(s.gravity, Vec3(0, 0, -1));
  EXPECT_EQ(s.bodies[1].name, "left");
  EXPECT_EQ(s.solver.kappa, 0.25);
  EXPECT_EQ(s.petsc_options, "-ksp_view");
  EXPECT_EQ(s.bodies[1].transform.scale, Vec3(2, 2, 2));
  // The overridden text reads back to the same scene.
  const SceneConfig again = ReadSceneConfig(Write("o.yaml", s.text));
  EXPECT_EQ(again.bodies[0].material.E, 1e6);
  EXPECT_EQ(again.gravity, Vec3(0, 0, -1));
  EXPECT_EQ(again.bodies[1].name, "left");
  EXPECT_EQ(again.bodies[1].transform.scale, Vec3(2, 2, 2));
}

TEST_F(SceneConfigTest, BadOverrides) {
  const std::string path = Write("o.yaml", kMinimal);
  EXPECT_EQ(ErrorOf(path, {"bodies.3.material.E=1"}),
            path + ": --set 'bodies.3.material.E=1': bodies has no item 3 (it has 1)");
  // A missing map on the path is created; a key the schema lacks is then refused.
  EXPECT_EQ(ReadSceneConfig(path, {"solver.tau=1"}).solver.tau, 1.0);
  EXPECT_NE(ErrorOf(path, {"solvr.tau=1"}).find("solvr"), std::string::npos);
  EXPECT_EQ(
      ErrorOf(path, {"bodies.first.name=a"}),
      path + ": --set 'bodies.first.name=a': bodies is a sequence, and 'first' is not an index");
  EXPECT_EQ(ErrorOf(path, {"time.frames.x=1"}),
            path + ": --set 'time.frames.x=1': time.frames is '2', so it has no key 'x'");
  EXPECT_EQ(ErrorOf(path, {"time.frames"}),
            path + ": --set 'time.frames': expected key.path=value");
  EXPECT_NE(
      ErrorOf(path, {"gravity=[0,0"}).find("--set 'gravity=[0,0': the value is not valid YAML"),
      std::string::npos);
  // A new key is accepted by the override and then refused by the schema.
  EXPECT_EQ(ErrorOf(path, {"bodies.0.materail=1"}),
            path +
                ": bodies[0].materail: unknown key (known: name, mesh, transform, material, "
                "initial_velocity)");
  EXPECT_EQ(ErrorOf(path, {"time.frames=2.5"}),
            path + ": time.frames: expected an integer >= 1, got '2.5'");
}

}  // namespace
}  // namespace optistep
