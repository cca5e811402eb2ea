// ReadSceneConfig (app/SceneConfig.cpp): every schema field, FEM and MPM, read back exactly
// as written, the documented defaults (the MPM ones from Stomakhin et al. 2013 Table 2
// and HOT Sec. 7.1), frames from end_time, one InputError per class of bad input (message
// names the file and the key path), --set overrides, mesh path resolution, and
// TransformConfig::Apply against a hand-computed placement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/Error.hpp"
#include "app/SceneConfig.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

// A small valid scene; error cases below each change one thing in it.
const char* const kMinimal = R"(time: {frame_rate: 24, frames: 2}
bodies:
  - mesh: bar.msh
    material: {E: 1e5, nu: 0.3, density: 1000}
)";

struct BadInput {
  const char* what;
  std::string text;                       // scene file contents
  std::vector<std::string> must_contain;  // besides the file name
};

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

  /// Each case is an InputError whose message starts with the file and holds must_contain.
  void ExpectInputErrors(const std::vector<BadInput>& cases) const {
    for (const BadInput& c : cases) {
      const std::string path = Write("bad.yaml", c.text);
      const std::string message = ErrorOf(path);
      EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << c.what << ": " << message;
      for (const std::string& part : c.must_contain)
        EXPECT_NE(message.find(part), std::string::npos) << c.what << ": " << message;
    }
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
  - {type: cylinder, center: [0, 1, 0], radius: 0.2, axis: [2, 0, 0], half_length: 0.5,
     boundary: slip}
  - {type: torus, center: [0, 2, 0], axis: [0, 0, 1], major_radius: 1, minor_radius: 0.25}
solver:
  method: newton
  termination: absolute
  cn_epsilon: 1e-4
  tau: 1e-7
  max_iterations: 50
  kappa: 0.125
  step_clamp: 10
  forcing_sigma: 0.5
  forcing: preconditioned
  best_of_two_guesses: false
dot: {subdomains_per_rank: 3, subdomain_nodes: 500, merge: symmetric, coarse: none}
damping: {stiffness_beta: 0.01}
async: {surface_layers: 2, epsilon: 0.25}
self_contact: {enabled: true, stiffness: 2.5e6}
output: {directory: results/full, every: 5, checkpoint_every_steps: 100,
         checkpoint_every_seconds: 1800, checkpoints_kept: 3}
petsc_options: [-newton_ksp_type cg, -newton_pc_type jacobi]
)");
  const SceneConfig s = ReadSceneConfig(path);
  EXPECT_EQ(s.path, path);
  EXPECT_EQ(s.name, "full_scene");
  EXPECT_EQ(s.gravity, Vec3(0.5, -9.5, 0.25));
  EXPECT_EQ(ToString(s.integrator), "backward_euler");
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

  ASSERT_EQ(s.collision_objects.size(), 5u);
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
  EXPECT_EQ(s.collision_objects[3].half_length, 0.5);
  EXPECT_EQ(ToString(s.collision_objects[3].boundary), "slip");  // read, and ignored by FEM
  EXPECT_EQ(s.collision_objects[4].kind, CollisionObjectConfig::Kind::kTorus);
  EXPECT_EQ(s.collision_objects[4].center, Vec3(0, 2, 0));
  EXPECT_EQ(s.collision_objects[4].major_radius, 1.0);
  EXPECT_EQ(s.collision_objects[4].minor_radius, 0.25);

  EXPECT_EQ(ToString(s.solver.method), "newton");
  EXPECT_EQ(ToString(s.solver.termination), "absolute");
  EXPECT_EQ(s.solver.cn_epsilon, 1e-4);
  EXPECT_EQ(s.solver.tau, 1e-7);
  EXPECT_EQ(s.solver.max_iterations, 50);
  EXPECT_EQ(s.solver.kappa, 0.125);
  EXPECT_EQ(s.solver.step_clamp, 10.0);
  EXPECT_EQ(s.solver.forcing_sigma, 0.5);
  EXPECT_EQ(ToString(s.solver.forcing), "preconditioned");
  EXPECT_FALSE(s.solver.best_of_two_guesses);
  EXPECT_EQ(s.solver.dot.subdomains_per_rank, 3);
  EXPECT_EQ(s.solver.dot.subdomain_nodes, 500);
  EXPECT_EQ(s.solver.dot.merge, "symmetric");
  EXPECT_EQ(s.solver.dot.coarse, "none");
  EXPECT_EQ(s.damping.stiffness_beta, 0.01);
  EXPECT_EQ(s.async.surface_layers, 2);
  EXPECT_EQ(s.async.epsilon, 0.25);
  EXPECT_TRUE(s.self_contact.enabled);
  EXPECT_EQ(s.self_contact.stiffness, 2.5e6);
  EXPECT_EQ(s.output.directory, "results/full");
  EXPECT_EQ(s.output.every, 5);
  EXPECT_EQ(s.output.checkpoint_every_steps, 100);
  EXPECT_EQ(s.output.checkpoint_every_seconds, 1800.0);
  EXPECT_EQ(s.output.checkpoints_kept, 3);
  EXPECT_EQ(s.petsc_options, "-newton_ksp_type cg -newton_pc_type jacobi");
}

TEST_F(SceneConfigTest, Defaults) {
  const std::string path = Write("bar.yaml", kMinimal);
  const SceneConfig s = ReadSceneConfig(path);
  EXPECT_EQ(s.name, "bar");
  EXPECT_EQ(s.text, kMinimal);
  EXPECT_EQ(s.gravity, Vec3(0, -9.81, 0));
  EXPECT_EQ(ToString(s.integrator), "backward_euler");
  EXPECT_EQ(s.time.frame_dt, 1.0 / 24.0);
  EXPECT_EQ(s.time.dt, 1.0 / 24.0);
  EXPECT_EQ(s.time.frames, 2);
  EXPECT_EQ(s.time.max_dt_halvings, 8);
  EXPECT_EQ(s.solver.dot.subdomains_per_rank, 0);  // sized by subdomain_nodes
  EXPECT_EQ(s.solver.dot.subdomain_nodes, 3000);
  EXPECT_EQ(s.solver.dot.merge, "");                // symmetric with the coarse space
  EXPECT_EQ(s.solver.dot.coarse, "rigid");
  ASSERT_EQ(s.bodies.size(), 1u);
  EXPECT_EQ(s.bodies[0].name, "body0");
  EXPECT_EQ(ToString(s.discretization), "fem");
  EXPECT_EQ(s.bodies[0].source, BodyConfig::Source::kMesh);
  EXPECT_EQ(s.bodies[0].material.model, "fixed_corotated");
  EXPECT_EQ(s.bodies[0].material.plasticity.model, "none");
  EXPECT_EQ(s.bodies[0].transform.Apply(Vec3(1, 2, 3)), Vec3(1, 2, 3));
  EXPECT_EQ(s.bodies[0].initial_velocity, Vec3::Zero());
  EXPECT_TRUE(s.boundary_conditions.empty());
  EXPECT_TRUE(s.collision_objects.empty());
  const SolverConfig solver_defaults;
  EXPECT_EQ(ToString(s.solver.termination), "characteristic_norm");
  EXPECT_EQ(s.solver.cn_epsilon, solver_defaults.cn_epsilon);
  EXPECT_EQ(s.solver.cn_epsilon, 1e-5);  // DOT (Li et al. 2019) Sec. 6
  EXPECT_EQ(s.solver.max_iterations, solver_defaults.max_iterations);
  EXPECT_EQ(ToString(s.solver.forcing), "characteristic_norm");
  EXPECT_TRUE(s.solver.best_of_two_guesses);
  // Gast's absolute termination measures the forcing term's |g| as it is (Sec. 3.1).
  EXPECT_EQ(ToString(ReadSceneConfig(Write("abs.yaml", std::string(kMinimal) +
                                                           "solver: {termination: absolute}\n"))
                         .solver.forcing),
            "gradient");
  EXPECT_EQ(s.damping.stiffness_beta, 0.0);
  // Schroeder et al. 2010: one surface layer, epsilon 0.5 (the paper's examples).
  EXPECT_EQ(s.async.surface_layers, 1);
  EXPECT_EQ(s.async.epsilon, 0.5);
  EXPECT_FALSE(s.self_contact.enabled);  // off: existing scenes unchanged
  EXPECT_EQ(s.self_contact.stiffness, 1e7);
  EXPECT_TRUE(s.self_contact.line_search_guard);  // Gast et al. 2015 Sec. 3.3
  EXPECT_EQ(s.self_contact.friction, 0.0);
  EXPECT_EQ(s.output.directory, "out/bar");
  EXPECT_EQ(s.output.every, 1);
  EXPECT_EQ(s.output.checkpoint_every_steps, 0);
  EXPECT_EQ(s.output.checkpoint_every_seconds, 0.0);
  EXPECT_EQ(s.output.checkpoints_kept, 2);
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
  EXPECT_EQ(ToString(named.collision_objects[0].boundary), "sticky");
  EXPECT_TRUE(named.collision_objects[0].motion.empty());
  EXPECT_EQ(named.petsc_options, "-newton_ksp_type cg -newton_pc_type jacobi");
}

TEST_F(SceneConfigTest, CopiesExpandIntoBodiesOnAJitteredGrid) {
  const std::string text = R"(time: {frame_rate: 24, frames: 2}
bodies:
  - name: torus
    mesh: bar.msh
    material: {E: 1e5, nu: 0.3, density: 1000}
    transform: {translate: [1, 2, 3]}
    copies: {count: [2, 1, 3], spacing: [0.5, 9, 0.25], jitter: 0.01, seed: 4}
  - {name: floor, mesh: bar.msh, material: {E: 1e5, nu: 0.3, density: 1000}}
)";
  const SceneConfig s = ReadSceneConfig(Write("copies.yaml", text));
  ASSERT_EQ(s.bodies.size(), 7u);
  EXPECT_EQ(s.bodies[0].name, "torus.0");
  EXPECT_EQ(s.bodies[5].name, "torus.5");
  EXPECT_EQ(s.bodies[6].name, "floor");
  // Copy (i, j, k) = (1, 0, 2) is index 1 + 2 * (0 + 1 * 2) = 5: at (1.5, 2, 3.5) within the jitter.
  const Vec3 expected(1.5, 2.0, 3.5);
  EXPECT_LE((s.bodies[5].transform.translate - expected).cwiseAbs().maxCoeff(), 0.01);
  EXPECT_GT((s.bodies[5].transform.translate - expected).norm(), 0.0) << "no jitter drawn";
  // The same seed draws the same jitter.
  EXPECT_EQ(ReadSceneConfig(Write("again.yaml", text)).bodies[3].transform.translate,
            s.bodies[3].transform.translate);
  try {
    ReadSceneConfig(Write("count.yaml", std::string(kMinimal) + "    copies: {count: [2, 0, 1]}\n"));
    ADD_FAILURE() << "count 0 accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bodies[0].copies.count[1]: expected an integer >= 1, got '0'"),
              std::string::npos)
        << e.what();
  }
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

TEST_F(SceneConfigTest, BadInputsNameFileAndKey) {
  const std::string body = "bodies: [{mesh: m.msh, material: {E: 1e5, nu: 0.3, density: 1000}}]\n";
  const std::string time = "time: {frame_rate: 24, frames: 2}\n";
  const std::vector<BadInput> cases = {
      {"unknown key",
       time + "bodies: [{mesh: m.msh, materail: {E: 1, nu: 0, density: 1}}]\n",
       {"bodies[0].materail: unknown key (known: name, mesh, surface, shape, transform, "
        "material, initial_velocity, initial_conditions, copies)"}},
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
      {"negative checkpoint interval",
       time + body + "output: {checkpoint_every_seconds: -60}\n",
       {"output.checkpoint_every_seconds: expected a number >= 0, got '-60'"}},
      {"no checkpoint kept",
       time + body + "output: {checkpoints_kept: 0}\n",
       {"output.checkpoints_kept: expected an integer >= 1, got '0'"}},
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
        "stiffness, friction, damping, boundary, motion, method, point, normal)"}},
      {"unknown collision type",
       time + body + "collision_objects: [{type: cone}]\n",
       {"collision_objects[0].type: expected one of half_space, sphere, box, cylinder, torus, "
        "bowl, box_with_hole, got 'cone'"}},
      {"kappa = 1",
       time + body + "solver: {kappa: 1}\n",
       {"solver.kappa: expected a number in (0, 1), got '1'"}},
      {"unknown forcing",
       time + body + "solver: {forcing: hot}\n",
       {"solver.forcing: expected one of gradient, characteristic_norm, preconditioned, got "
        "'hot'"}},
      {"bool expected",
       time + body + "solver: {best_of_two_guesses: maybe}\n",
       {"solver.best_of_two_guesses: expected true or false, got 'maybe'"}},
      {"bodies is a map",
       time + "bodies: {mesh: m.msh}\n",
       {"bodies: expected a sequence, got a map"}},
  };
  ExpectInputErrors(cases);
}

TEST_F(SceneConfigTest, MpmSceneRoundTripsEveryField) {
  const std::string path = Write("mpm.yaml", R"(# every MPM key of the schema
discretization: mpm
mpm: {dx: 0.02, ppc: 27, cfl: 0.4, flip: 0.95, repartition_threshold: 1.5, seed: 7,
      matrix_free: true}
time: {frame_rate: 24, frames: 1}
bodies:
  - name: snowball
    shape: {type: sphere, center: [0, 1, 0], radius: 0.25}
    transform: {translate: [0, 0.5, 0]}
    material: {E: 1.4e5, nu: 0.2, density: 400,
               plasticity: {model: snow, theta_c: 0.019, theta_s: 0.0045, hardening: 7}}
  - name: bar
    shape: {type: box, min: [0, 0, 0], max: [1, 0.1, 0.2]}
    material: {E: 1e6, nu: 0.3, density: 1000,
               plasticity: {model: von_mises, yield_stress: 2e4}}
  - name: pipe
    shape: {type: cylinder, center: [1, 2, 3], axis: [0, 0, 2], radius: 0.1, half_length: 0.5}
    material: {E: 1, nu: 0, density: 1, plasticity: {model: none}}
  - name: ring
    shape: {type: torus, center: [0, 0, 1], axis: [3, 0, 4], major_radius: 0.3,
            minor_radius: 0.1}
    material: {E: 1, nu: 0, density: 1}
  - name: bunny
    surface: meshes/bunny.STL
    material: {E: 1, nu: 0, density: 1}
  - name: beam
    mesh: meshes/beam.msh
    material: {E: 1, nu: 0, density: 1}
collision_objects:
  - type: torus
    name: stirrer
    center: [0, 1, 0]
    axis: [0, 0, 3]
    major_radius: 0.5
    minor_radius: 0.125
    boundary: slip
    motion:
      - {rotate: {axis: [0, 2, 0], angular_velocity: 3.5}, end: 1}
      - {translate: {velocity: [0, -1, 0]}, start: 1}
  - {type: cylinder, radius: 0.2, half_length: 0.75, axis: [1, 0, 0], boundary: sticky}
  - {type: half_space, normal: [0, 1, 0],
     motion: [{rotate: {axis: [0, 0, 1], angular_velocity: 1, center: [1, 2, 3]}}]}
solver: {method: newton, cn_epsilon: 1e-6}
)");
  const SceneConfig s = ReadSceneConfig(path);
  EXPECT_EQ(ToString(s.discretization), "mpm");
  EXPECT_EQ(s.mpm.dx, 0.02);
  EXPECT_EQ(s.mpm.ppc, 27);
  EXPECT_EQ(s.mpm.cfl, 0.4);
  EXPECT_EQ(s.mpm.flip, 0.95);
  EXPECT_EQ(s.mpm.repartition_threshold, 1.5);
  EXPECT_EQ(s.mpm.seed, 7);
  EXPECT_TRUE(s.mpm.matrix_free);
  EXPECT_EQ(ToString(s.solver.method), "newton");
  EXPECT_EQ(s.solver.cn_epsilon, 1e-6);

  ASSERT_EQ(s.bodies.size(), 6u);
  using Source = BodyConfig::Source;
  using Shape = ShapeConfig::Kind;
  const BodyConfig& snowball = s.bodies[0];
  EXPECT_EQ(snowball.source, Source::kShape);
  EXPECT_EQ(snowball.shape.kind, Shape::kSphere);
  EXPECT_EQ(snowball.shape.center, Vec3(0, 1, 0));
  EXPECT_EQ(snowball.shape.radius, 0.25);
  EXPECT_EQ(snowball.transform.translate, Vec3(0, 0.5, 0));
  const PlasticityConfig& snow = snowball.material.plasticity;
  EXPECT_EQ(snow.model, "snow");
  EXPECT_EQ(snow.theta_c, 0.019);
  EXPECT_EQ(snow.theta_s, 0.0045);
  EXPECT_EQ(snow.hardening, 7.0);
  const BodyConfig& bar = s.bodies[1];
  EXPECT_EQ(bar.shape.kind, Shape::kBox);
  EXPECT_EQ(bar.shape.box_min, Vec3(0, 0, 0));
  EXPECT_EQ(bar.shape.box_max, Vec3(1, 0.1, 0.2));
  EXPECT_EQ(bar.material.plasticity.model, "von_mises");
  EXPECT_EQ(bar.material.plasticity.yield_stress, 2e4);
  const ShapeConfig& pipe = s.bodies[2].shape;
  EXPECT_EQ(pipe.kind, Shape::kCylinder);
  EXPECT_EQ(pipe.center, Vec3(1, 2, 3));
  EXPECT_EQ(pipe.axis, Vec3(0, 0, 1));
  EXPECT_EQ(pipe.radius, 0.1);
  EXPECT_EQ(pipe.half_length, 0.5);
  EXPECT_EQ(s.bodies[2].material.plasticity.model, "none");
  const ShapeConfig& ring = s.bodies[3].shape;
  EXPECT_EQ(ring.kind, Shape::kTorus);
  EXPECT_EQ(ring.center, Vec3(0, 0, 1));
  EXPECT_EQ(ring.axis, Vec3(0.6, 0, 0.8));  // [3, 0, 4] / 5
  EXPECT_EQ(ring.major_radius, 0.3);
  EXPECT_EQ(ring.minor_radius, 0.1);
  EXPECT_EQ(s.bodies[4].source, Source::kSurface);
  EXPECT_EQ(s.bodies[4].surface, (dir_ / "meshes/bunny.STL").string());
  EXPECT_EQ(s.bodies[4].mesh, "");
  EXPECT_EQ(s.bodies[5].source, Source::kMesh);
  EXPECT_EQ(s.bodies[5].mesh, (dir_ / "meshes/beam.msh").string());

  ASSERT_EQ(s.collision_objects.size(), 3u);
  const CollisionObjectConfig& stirrer = s.collision_objects[0];
  EXPECT_EQ(stirrer.kind, CollisionObjectConfig::Kind::kTorus);
  EXPECT_EQ(stirrer.name, "stirrer");
  EXPECT_EQ(stirrer.center, Vec3(0, 1, 0));
  EXPECT_EQ(stirrer.axis, Vec3(0, 0, 1));
  EXPECT_EQ(stirrer.major_radius, 0.5);
  EXPECT_EQ(stirrer.minor_radius, 0.125);
  EXPECT_EQ(ToString(stirrer.boundary), "slip");
  ASSERT_EQ(stirrer.motion.size(), 2u);
  EXPECT_EQ(stirrer.motion[0].kind, MotionSegmentConfig::Kind::kRotate);
  EXPECT_EQ(stirrer.motion[0].axis, Vec3(0, 1, 0));
  EXPECT_EQ(stirrer.motion[0].angular_velocity, 3.5);
  EXPECT_FALSE(stirrer.motion[0].has_center);  // the MPM code uses the torus center
  EXPECT_EQ(stirrer.motion[0].end, 1.0);
  EXPECT_EQ(stirrer.motion[1].kind, MotionSegmentConfig::Kind::kTranslate);
  EXPECT_EQ(stirrer.motion[1].velocity, Vec3(0, -1, 0));
  EXPECT_EQ(stirrer.motion[1].start, 1.0);
  const CollisionObjectConfig& capped = s.collision_objects[1];
  EXPECT_EQ(capped.kind, CollisionObjectConfig::Kind::kCylinder);
  EXPECT_EQ(capped.half_length, 0.75);
  EXPECT_EQ(capped.axis, Vec3(1, 0, 0));
  EXPECT_EQ(ToString(capped.boundary), "sticky");
  EXPECT_TRUE(capped.motion.empty());
  ASSERT_EQ(s.collision_objects[2].motion.size(), 1u);
  EXPECT_TRUE(s.collision_objects[2].motion[0].has_center);
  EXPECT_EQ(s.collision_objects[2].motion[0].center, Vec3(1, 2, 3));
}

TEST_F(SceneConfigTest, MpmDefaults) {
  const SceneConfig s = ReadSceneConfig(Write("m.yaml", R"(discretization: mpm
mpm: {dx: 0.01}
time: {frame_rate: 24, frames: 1}
bodies:
  - shape: {type: sphere, radius: 1}
    material: {E: 1, nu: 0, density: 1, plasticity: {model: snow}}
  - shape: {type: torus, major_radius: 1, minor_radius: 0.5}
    material: {E: 1, nu: 0, density: 1}
collision_objects: [{type: cylinder, radius: 1}]
)"));
  EXPECT_EQ(s.mpm.dx, 0.01);
  EXPECT_EQ(s.mpm.ppc, 8);
  EXPECT_EQ(s.mpm.cfl, 0.6);  // Gast et al. 2015 Sec. 6.3, HOT Sec. 7.1
  EXPECT_EQ(s.mpm.flip, 0.0);
  EXPECT_EQ(s.mpm.repartition_threshold, 1.2);
  EXPECT_EQ(s.mpm.seed, 1);
  EXPECT_FALSE(s.mpm.matrix_free);
  EXPECT_EQ(s.solver.cn_epsilon, 1e-7);  // HOT (Wang et al. 2020) Sec. 7.1
  EXPECT_EQ(ToString(s.solver.forcing), "preconditioned");  // HOT Sec. 5.3
  EXPECT_EQ(s.solver.kappa, 1e-5);  // HOT's reference code, computeDescentStep
  EXPECT_EQ(s.bodies[0].shape.center, Vec3::Zero());
  EXPECT_EQ(s.bodies[1].shape.axis, Vec3::UnitY());
  // Stomakhin et al. 2013, Table 2.
  const PlasticityConfig& snow = s.bodies[0].material.plasticity;
  EXPECT_EQ(snow.theta_c, 2.5e-2);
  EXPECT_EQ(snow.theta_s, 7.5e-3);
  EXPECT_EQ(snow.hardening, 10.0);
  EXPECT_EQ(s.bodies[1].material.plasticity.model, "none");
  const CollisionObjectConfig& cylinder = s.collision_objects[0];
  EXPECT_EQ(cylinder.half_length, std::numeric_limits<double>::infinity());
  EXPECT_EQ(ToString(cylinder.boundary), "sticky");
  EXPECT_TRUE(cylinder.motion.empty());

  // A FEM scene turned MPM from the command line: its tet mesh body stays valid, and the
  // cn_epsilon default follows the discretization.
  const SceneConfig turned = ReadSceneConfig(
      Write("bar.yaml", kMinimal), {"discretization=mpm", "mpm.dx=0.05"});
  EXPECT_EQ(ToString(turned.discretization), "mpm");
  EXPECT_EQ(turned.mpm.dx, 0.05);
  EXPECT_EQ(turned.bodies[0].source, BodyConfig::Source::kMesh);
  EXPECT_EQ(turned.solver.cn_epsilon, 1e-7);
}

TEST_F(SceneConfigTest, BadMpmInputsNameFileAndKey) {
  const std::string time = "time: {frame_rate: 24, frames: 2}\n";
  const std::string fem = time + "bodies: [{mesh: m.msh, material: {E: 1, nu: 0, density: 1}}]\n";
  const std::string head = "discretization: mpm\nmpm: {dx: 0.1}\n" + time;
  const auto mpm_body = [&](const std::string& source, const std::string& material_extra = "") {
    return head + "bodies: [{" + source + ", material: {E: 1, nu: 0, density: 1" +
           material_extra + "}}]\n";
  };
  const std::string mpm = mpm_body("shape: {type: sphere, radius: 1}");
  const std::string only_mpm = ": only MPM scenes (discretization: mpm) take ";
  const std::vector<BadInput> cases = {
      {"mpm block in a FEM scene", fem + "mpm: {dx: 0.1}\n", {"mpm" + only_mpm + "'mpm'"}},
      {"dot block in an MPM scene", mpm + "dot: {subdomains_per_rank: 2}\n",
       {"dot: only FEM scenes (discretization: fem) take 'dot'"}},
      {"dot method in an MPM scene", mpm + "solver: {method: dot}\n",
       {"solver.method: 'dot' needs a tet mesh: only FEM scenes (discretization: fem) take it"}},
      {"self_contact in an MPM scene", mpm + "self_contact: {enabled: true}\n",
       {"self_contact: only FEM scenes (discretization: fem) take 'self_contact'"}},
      {"zero self-contact stiffness", fem + "self_contact: {stiffness: 0}\n",
       {"self_contact.stiffness: expected a positive number, got '0'"}},
      {"self_contact not a flag", fem + "self_contact: {enabled: maybe}\n",
       {"self_contact.enabled: expected true or false, got 'maybe'"}},
      {"no subdomains", fem + "dot: {subdomains_per_rank: 0}\n",
       {"dot.subdomains_per_rank: expected an integer >= 1, got '0'"}},
      {"unknown merge", fem + "dot: {merge: sum}\n", {"dot.merge: expected one of average, symmetric, got 'sum'"}},
      {"no subdomain nodes", fem + "dot: {subdomain_nodes: 0}\n",
       {"dot.subdomain_nodes: expected an integer >= 1, got '0'"}},
      {"unknown coarse space", fem + "dot: {coarse: grid}\n", {"dot.coarse: expected one of rigid, none, got 'grid'"}},
      {"unknown discretization", fem + "discretization: sph\n",
       {"discretization: expected one of fem, mpm, particles, got 'sph'"}},
      {"no mpm block", "discretization: mpm\n" + fem, {"mpm: required key is missing"}},
      {"missing mpm.dx", "discretization: mpm\nmpm: {ppc: 8}\n" + fem,
       {"mpm.dx: required key is missing"}},
      {"ppc 0", "discretization: mpm\nmpm: {dx: 0.1, ppc: 0}\n" + fem,
       {"mpm.ppc: expected an integer >= 1, got '0'"}},
      {"dx -1", "discretization: mpm\nmpm: {dx: -1}\n" + fem,
       {"mpm.dx: expected a positive number, got '-1'"}},
      {"cfl 0", "discretization: mpm\nmpm: {dx: 1, cfl: 0}\n" + fem,
       {"mpm.cfl: expected a number in (0, 1], got '0'"}},
      {"flip 1.5", "discretization: mpm\nmpm: {dx: 1, flip: 1.5}\n" + fem,
       {"mpm.flip: expected a number in [0, 1], got '1.5'"}},
      {"repartition_threshold 1",
       "discretization: mpm\nmpm: {dx: 1, repartition_threshold: 1}\n" + fem,
       {"mpm.repartition_threshold: expected a number > 1, got '1'"}},
      {"seed -1", "discretization: mpm\nmpm: {dx: 1, seed: -1}\n" + fem,
       {"mpm.seed: expected an integer >= 0, got '-1'"}},
      {"unknown mpm key", "discretization: mpm\nmpm: {dx: 1, ppcc: 8}\n" + fem,
       {"mpm.ppcc: unknown key (known: dx, ppc, cfl, flip, repartition_threshold, seed, "
        "matrix_free)"}},
      {"shape in a FEM scene",
       time + "bodies: [{shape: {type: sphere, radius: 1}, material: {E: 1, nu: 0, density: 1}}]\n",
       {"bodies[0].shape" + only_mpm + "'shape'"}},
      {"surface in a FEM scene",
       time + "bodies: [{surface: s.off, material: {E: 1, nu: 0, density: 1}}]\n",
       {"bodies[0].surface" + only_mpm + "'surface'"}},
      {"both mesh and shape", mpm_body("mesh: m.msh, shape: {type: sphere, radius: 1}"),
       {"bodies[0]: expected exactly one of mesh, surface, shape, got mesh and shape"}},
      {"no source", mpm_body("name: a"),
       {"bodies[0]: expected exactly one of mesh, surface, shape, got none"}},
      {"surface of another format", mpm_body("surface: s.obj"),
       {"bodies[0].surface: expected a path ending in .off or .stl, got 's.obj'"}},
      {"sphere radius -1", mpm_body("shape: {type: sphere, radius: -1}"),
       {"bodies[0].shape.radius: expected a positive number, got '-1'"}},
      {"torus minor >= major",
       mpm_body("shape: {type: torus, major_radius: 0.5, minor_radius: 0.5}"),
       {"bodies[0].shape.minor_radius: expected a number in (0, 0.5), got '0.5'"}},
      {"flat box", mpm_body("shape: {type: box, min: [0, 0, 0], max: [1, 0, 1]}"),
       {"bodies[0].shape: expected min < max componentwise, got min [0, 0, 0] and max [1, 0, 1]"}},
      {"cylinder without half_length", mpm_body("shape: {type: cylinder, radius: 1}"),
       {"bodies[0].shape.half_length: required key is missing"}},
      {"zero cylinder axis",
       mpm_body("shape: {type: cylinder, radius: 1, half_length: 1, axis: [0, 0, 0]}"),
       {"bodies[0].shape.axis: expected a non-zero vector, got [0, 0, 0]"}},
      {"key of another shape type", mpm_body("shape: {type: sphere, radius: 1, axis: [0, 1, 0]}"),
       {"bodies[0].shape.axis: not allowed for type sphere (allowed: type, center, radius)"}},
      {"unknown shape type", mpm_body("shape: {type: cone}"),
       {"bodies[0].shape.type: expected one of box, sphere, cylinder, torus, got 'cone'"}},
      {"von_mises without yield_stress",
       mpm_body("shape: {type: sphere, radius: 1}", ", plasticity: {model: von_mises}"),
       {"bodies[0].material.plasticity.yield_stress: required key is missing"}},
      {"snow key with von_mises",
       mpm_body("shape: {type: sphere, radius: 1}",
                ", plasticity: {model: von_mises, yield_stress: 1, theta_c: 0.1}"),
       {"bodies[0].material.plasticity.theta_c: not allowed for model von_mises (allowed: "
        "model, yield_stress)"}},
      {"theta_c 1",
       mpm_body("shape: {type: sphere, radius: 1}", ", plasticity: {model: snow, theta_c: 1}"),
       {"bodies[0].material.plasticity.theta_c: expected a number in (0, 1), got '1'"}},
      {"plasticity without model",
       mpm_body("shape: {type: sphere, radius: 1}", ", plasticity: {hardening: 1}"),
       {"bodies[0].material.plasticity.model: required key is missing"}},
      {"plasticity in a FEM scene",
       time + "bodies: [{mesh: m.msh, material: {E: 1, nu: 0, density: 1, "
              "plasticity: {model: snow}}}]\n",
       {"bodies[0].material.plasticity" + only_mpm + "'plasticity'"}},
      {"collision motion with a FEM integrator that does not pose objects",
       fem + "integrator: semi_implicit\ncollision_objects: [{type: sphere, radius: 1, "
             "motion: [{translate: {velocity: [1, 0, 0]}}]}]\n",
       {"collision_objects[0].motion: FEM collision objects move only with integrator "
        "backward_euler or quasi_static, not 'semi_implicit'"}},
      {"unknown boundary value", mpm + "collision_objects: [{type: sphere, radius: 1, "
                                       "boundary: sliding}]\n",
       {"collision_objects[0].boundary: expected one of sticky, slip, got 'sliding'"}},
      {"cylinder half_length 0",
       fem + "collision_objects: [{type: cylinder, radius: 1, half_length: 0}]\n",
       {"collision_objects[0].half_length: expected a positive number, got '0'"}},
      {"torus obstacle minor > major",
       fem + "collision_objects: [{type: torus, major_radius: 1, minor_radius: 2}]\n",
       {"collision_objects[0].minor_radius: expected a number in (0, 1), got '2'"}},
      {"collision motion segment end <= start",
       mpm + "collision_objects: [{type: sphere, radius: 1, "
             "motion: [{translate: {velocity: [1, 0, 0]}, start: 2, end: 1}]}]\n",
       {"collision_objects[0].motion[0].end: expected a number > 2, got '1'"}},
  };
  ExpectInputErrors(cases);
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
                ": bodies[0].materail: unknown key (known: name, mesh, surface, shape, transform, "
                "material, initial_velocity, initial_conditions, copies)");
  EXPECT_EQ(ErrorOf(path, {"time.frames=2.5"}),
            path + ": time.frames: expected an integer >= 1, got '2.5'");
}

TEST_F(SceneConfigTest, SceneDifferenceLeavesOutWhatCannotChangeATrajectory) {
  const std::string text = std::string("# a comment\n") + kMinimal;
  // Layout, comments, key order and the output keys do not count.
  EXPECT_EQ(SceneDifference(text, R"(bodies:
- material: {density: 1000, nu: 0.3, E: 1e5}
  mesh: bar.msh
time: {frames: 2, frame_rate: 24}
output: {directory: elsewhere, every: 3, checkpoint_every_steps: 5,
         checkpoint_every_seconds: 60, checkpoints_kept: 4}
)"),
            "");
  // Anything else does, named by its key path; values are compared as written.
  EXPECT_EQ(SceneDifference(text, std::string(kMinimal) + "gravity: [0, 0, 0]\n"),
            "gravity: nothing in the checkpoint, a sequence of 3 items now");
  EXPECT_EQ(SceneDifference(std::string(kMinimal) + "output: {directory: a}\n",
                            std::string(kMinimal) + "damping: {stiffness_beta: 0.1}\n"),
            "damping: nothing in the checkpoint, a map now");
  std::string stiffer = kMinimal;
  stiffer.replace(stiffer.find("1e5"), 3, "100000");
  EXPECT_EQ(SceneDifference(text, stiffer),
            "bodies[0].material.E: '1e5' in the checkpoint, '100000' now");
  EXPECT_NE(SceneDifference(text, "time: [").find("cannot be compared"), std::string::npos);
}

}  // namespace
}  // namespace optistep

namespace optistep {
namespace {

TEST(SceneConfigLoads, LoadsTimeFunctionsAndInitialConditionsRoundTrip) {
  const fs::path dir = fs::temp_directory_path() / ("optistep_scene_loads_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "loads.yaml").string();
  std::ofstream(path) << R"(time: {frame_rate: 24, frames: 2}
time_functions:
  up: {type: ramp, start: 1, end: 3, from: 0.5, to: 2}
  steps: {type: table, points: [[0, 1], [2, 4]]}
gravity_time_function: steps
bodies:
  - name: beam
    mesh: m.msh
    material: {E: 1e5, nu: 0.3, density: 1000}
    initial_conditions:
      angular_velocity: {axis: [0, 0, 2], rate: 1.5, center: [1, 2, 3]}
      velocity_expression: ["x", "2*y", "0"]
      velocity_table: v.txt
      prestrain: {scale: [1.1, 1, 0.9], center: [0, 1, 0]}
loads:
  - {type: point, select: {axis: x, end: max}, force: [1, 2, 3], time_function: up}
  - {name: push, type: pressure, select: {box: {min: [0, 0, 0], max: [1, 1, 1]}, body: beam}, pressure: 5,
     follower: false, time_function: {type: constant, value: 0.25}}
  - {type: traction, select: {axis: y, end: min}, traction: [0, 7, 0]}
  - {type: body_force, body: beam, acceleration: [0, 0, -1]}
)";
  const SceneConfig s = ReadSceneConfig(path);
  EXPECT_EQ(s.gravity_time_function.name, "steps");
  EXPECT_EQ(s.gravity_time_function.kind, TimeFunctionConfig::Kind::kTable);
  ASSERT_EQ(s.gravity_time_function.points.size(), 2u);
  EXPECT_EQ(s.gravity_time_function.points[1], std::make_pair(2.0, 4.0));
  ASSERT_EQ(s.loads.size(), 4u);
  EXPECT_EQ(s.loads[0].kind, LoadConfig::Kind::kPoint);
  EXPECT_EQ(s.loads[0].name, "load0");
  EXPECT_EQ(s.loads[0].force, Vec3(1, 2, 3));
  EXPECT_EQ(s.loads[0].time_function.name, "up");
  EXPECT_EQ(s.loads[0].time_function.start, 1.0);
  EXPECT_EQ(s.loads[0].time_function.end, 3.0);
  EXPECT_EQ(s.loads[0].time_function.from, 0.5);
  EXPECT_EQ(s.loads[0].time_function.to, 2.0);
  EXPECT_TRUE(s.loads[0].select.end_max);
  EXPECT_EQ(s.loads[1].name, "push");
  EXPECT_EQ(s.loads[1].kind, LoadConfig::Kind::kPressure);
  EXPECT_FALSE(s.loads[1].follower);
  EXPECT_EQ(s.loads[1].pressure, 5.0);
  EXPECT_EQ(s.loads[1].select.body, "beam");
  EXPECT_EQ(s.loads[1].time_function.name, "");
  EXPECT_EQ(s.loads[1].time_function.value, 0.25);
  EXPECT_EQ(s.loads[2].traction, Vec3(0, 7, 0));
  EXPECT_EQ(s.loads[2].time_function.kind, TimeFunctionConfig::Kind::kConstant);
  EXPECT_EQ(s.loads[2].time_function.value, 1.0);
  EXPECT_EQ(s.loads[3].acceleration, Vec3(0, 0, -1));
  EXPECT_EQ(s.loads[3].body, "beam");
  const InitialConditionsConfig& ic = s.bodies[0].initial_conditions;
  EXPECT_TRUE(ic.has_angular_velocity);
  EXPECT_EQ(ic.axis, Vec3(0, 0, 1));
  EXPECT_EQ(ic.angular_velocity, 1.5);
  EXPECT_TRUE(ic.has_center);
  EXPECT_EQ(ic.center, Vec3(1, 2, 3));
  EXPECT_EQ(ic.velocity_expression, (std::vector<std::string>{"x", "2*y", "0"}));
  EXPECT_EQ(ic.velocity_table, (dir / "v.txt").string());
  EXPECT_TRUE(ic.has_prestrain);
  EXPECT_EQ(ic.prestrain, Vec3(1.1, 1, 0.9).asDiagonal().toDenseMatrix());
  EXPECT_EQ(ic.prestrain_center, Vec3(0, 1, 0));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace optistep
