// The scene's sections: YAML (yaml-cpp) -> each section's struct, strictly validated
// (app/SceneConfig.cpp composes them into the scene and applies --set).
//
// Each section is a KeyTable (io/SceneKeys.hpp: every key's name, type, default, allowed
// values, meaning and source) beside the parser that reads it through a MapView
// (io/SceneReader.hpp), which refuses keys the table does not list and reads each value as
// its entry says. The same tables print the schema (`optistep keys`, io/SceneSchema.hpp),
// so the reference cannot miss a key the parser takes. Checks that depend on other keys
// (min < max, a range bounded by another key, the keys of one variant) stay in the parsers.
// Every rank parses the same text, so every rank throws the same InputError.
#include "io/SceneSectionParsers.hpp"

#include <muParser.h>
#include <yaml-cpp/yaml.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <type_traits>

#include "core/AvailableMemory.hpp"
#include "core/Error.hpp"
#include "io/SceneReader.hpp"
#include "io/TetMesh.hpp"

namespace optistep {

namespace fs = std::filesystem;
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

// ============================================================================ time (integrators)

const KeyTable* TimeKeys() {
  static const KeyTable table{
      "time", "time stepping: each frame of frame_dt is cut into ceil(frame_dt / dt) equal steps",
      {Number("dt", "frame_dt", kPositive, "the requested step, s"),
       Number("frame_rate", "", kPositive, "frames per second, 1/s (exactly one of frame_rate, frame_dt)"),
       Number("frame_dt", "", kPositive, "the frame length, s (exactly one of frame_rate, frame_dt)"),
       Integer("frames", "", kPositiveInteger, "the number of frames (exactly one of frames, end_time)"),
       Number("end_time", "", kPositive, "the run's length, s, rounded up to whole frames (exactly one of frames, end_time)"),
       Integer("max_dt_halvings", Default(TimeConfig{}.max_dt_halvings), Range{0.0, 30.0}, "retries of a failed step with dt halved")}};
  return &table;
}

TimeConfig ParseTime(const Field& f) {
  const MapView m(f, *TimeKeys());
  TimeConfig time;
  if (m.ExactlyOne({"frame_rate", "frame_dt"}) == 0) {
    double frame_rate = 0.0;
    m.Read("frame_rate", frame_rate);
    time.frame_dt = 1.0 / frame_rate;
  } else {
    m.Read("frame_dt", time.frame_dt);
  }
  time.dt = time.frame_dt;
  m.Read("dt", time.dt);
  if (m.ExactlyOne({"frames", "end_time"}) == 0) {
    m.Read("frames", time.frames);
  } else {
    double end_time = 0.0;
    m.Read("end_time", end_time);
    // The tolerance keeps 1.1 s of 0.1 s frames at 11 frames, not 12.
    const double frames = std::ceil(end_time / time.frame_dt - 1e-9);
    if (frames > std::numeric_limits<int>::max())
      m.Get("end_time").Error("gives " + FormatNumber(frames) + " frames, too many");
    time.frames = std::max(1, static_cast<int>(frames));
  }
  m.Read("max_dt_halvings", time.max_dt_halvings);
  return time;
}

// ============================================================================ materials

const Names kPlasticityModels = {"none", "snow", "von_mises"};

const KeyTable* PlasticityKeys() {
  static const KeyTable table{
      "bodies[].material.plasticity", "MPM only: the return mapping applied per particle after each step",
      {Choice("model", Default(PlasticityConfig{}.model), kPlasticityModels, "the plasticity model; each model takes only its own keys"),
       Number("theta_c", Default(PlasticityConfig{}.theta_c), Range{0.0, 1.0, true, true}, "critical compression (-)",
              "Stomakhin et al. 2013, Table 2").For({"snow"}),
       Number("theta_s", Default(PlasticityConfig{}.theta_s), kNonNegative, "critical stretch (-)", "Stomakhin et al. 2013, Table 2").For({"snow"}),
       Number("hardening", Default(PlasticityConfig{}.hardening), kNonNegative, "hardening coefficient xi (-)", "Stomakhin et al. 2013, Table 2").For({"snow"}),
       Number("yield_stress", "required", kPositive, "tau_Y, Pa").For({"von_mises"})}};
  return &table;
}

PlasticityConfig ParsePlasticity(const Field& f) {
  std::size_t model = 0;
  const MapView m = TypedMap(f, *PlasticityKeys(), "model", &model);
  PlasticityConfig plasticity;
  plasticity.model = kPlasticityModels[model];
  m.Read("theta_c", plasticity.theta_c);
  m.Read("theta_s", plasticity.theta_s);
  m.Read("hardening", plasticity.hardening);
  if (plasticity.model == "von_mises") m.ReadRequired("yield_stress", plasticity.yield_stress);
  return plasticity;
}

const KeyTable* MaterialKeys() {
  static const KeyTable table{
      "bodies[].material", "the body's constitutive model",
      {Choice("model", Default(MaterialConfig{}.model), {"fixed_corotated", "stable_neo_hookean", "linear"},
              "the elastic energy density Psi(F)"),
       Number("E", "required", kPositive, "Young's modulus, Pa"),
       Number("nu", "required", Range{0.0, 0.5, false, true}, "Poisson's ratio (-)"),
       Number("density", "required", kPositive, "kg/m^3"),
       Other("plasticity", "map", "model none", "", "MPM only: plasticity").Sub(PlasticityKeys)}};
  return &table;
}

MaterialConfig ParseMaterial(const Field& f, bool mpm) {
  const MapView m(f, *MaterialKeys());
  MaterialConfig material;
  m.Read("model", material.model);
  m.ReadRequired("E", material.E);
  m.ReadRequired("nu", material.nu);
  m.ReadRequired("density", material.density);
  MpmOnlyKeys(mpm, m, {"plasticity"});
  if (m.Has("plasticity")) material.plasticity = ParsePlasticity(m.Get("plasticity"));
  return material;
}

// ============================================================================ model: shapes

const Names kShapeTypes = {"box", "sphere", "cylinder", "torus"};  // order of ShapeConfig::Kind
const Names kAxes = {"x", "y", "z"};

const KeyTable* ShapeKeys() {
  static const KeyTable table{
      "bodies[].shape", "MPM only: an analytic solid in the body's own coordinates (m), placed by transform",
      {Choice("type", "required", kShapeTypes, "the solid"),
       Vector("min", "required", "the lower corner, m").For({"box"}).Allowing("< max componentwise"),
       Vector("max", "required", "the upper corner, m").For({"box"}),
       Vector("center", Default(ShapeConfig{}.center), "m").For({"sphere", "cylinder", "torus"}),
       Number("radius", "required", kPositive, "m").For({"sphere", "cylinder"}),
       Direction("axis", Default(ShapeConfig{}.axis), "the axis of revolution").For({"cylinder", "torus"}),
       Number("half_length", "required", kPositive, "half the length along axis, m (capped)").For({"cylinder"}),
       Number("major_radius", "required", kPositive, "R, m").For({"torus"}),
       Number("minor_radius", "required", kPositive, "r, m").For({"torus"}).Allowing("(0, major_radius)")}};
  return &table;
}

/// The keys of a round solid, `type` sphere, cylinder or torus, into a ShapeConfig or a
/// CollisionObjectConfig: center and axis (normalized) optional, radius > 0 (sphere,
/// cylinder), 0 < minor_radius < major_radius (torus), half_length > 0 (cylinder;
/// required if `capped`, else optional and possibly infinite).
template <class Solid>
void ReadRoundSolid(const MapView& m, const std::string& type, bool capped, Solid* solid) {
  m.Read("center", solid->center);
  m.Read("axis", solid->axis);
  if (type == "torus") {
    m.ReadRequired("major_radius", solid->major_radius);
    m.Require("minor_radius").To(solid->minor_radius, Range{0.0, solid->major_radius, true, true});
    return;
  }
  m.ReadRequired("radius", solid->radius);
  if (type != "cylinder") return;
  if (capped)
    m.ReadRequired("half_length", solid->half_length);
  else
    m.Read("half_length", solid->half_length);
}

ShapeConfig ParseShape(const Field& f) {
  std::size_t type = 0;
  const MapView m = TypedMap(f, *ShapeKeys(), "type", &type);
  ShapeConfig shape;
  shape.kind = static_cast<ShapeConfig::Kind>(type);
  if (shape.kind == ShapeConfig::Kind::kBox)
    ReadBox(m, shape.box_min, shape.box_max, /*solid=*/true);
  else
    ReadRoundSolid(m, kShapeTypes[type], /*capped=*/true, &shape);
  return shape;
}

// ============================================================================ model: initial conditions

const KeyTable* AngularVelocityKeys() {
  static const KeyTable table{
      "bodies[].initial_conditions.angular_velocity", "a rigid rotation added to the initial velocity",
      {Direction("axis", "required", "the rotation axis (right-handed)"),
       Number("rate", "required", kAnyNumber, "omega, rad/s"),
       Vector("center", "the body's center of mass", "a point on the axis, m")}};
  return &table;
}

const KeyTable* PrestrainKeys() {
  static const KeyTable table{
      "bodies[].initial_conditions.prestrain",
      "initial positions center + A (X - center), the rest shape unchanged",
      {Other("scale", "number or [x, y, z]", "", "> 0", "A as a uniform or per-axis scale (exactly one of scale, deformation_gradient)"),
       Other("deformation_gradient", "3 rows of 3 numbers", "", "det > 0", "A as a full matrix (exactly one of scale, deformation_gradient)"),
       Vector("center", "the body's center of mass at rest", "m")}};
  return &table;
}

/// Refuses, as one line naming `at` (the key) and the estimate, a size whose lower bound
/// `bytes` exceeds the memory this node still has: a count that cannot fit (a chain of 1e9
/// particles, 1000^3 copies) must not end in std::bad_alloc after filling the node. The
/// bound counts only what parsing itself would hold (`what`), so a scene that fits is never
/// refused.
void RefuseBeyondMemory(const Field& at, double count, double bytes_each, const std::string& what) {
  std::string source;
  const double available = NodeAvailableMemory(&source);
  const double bytes = count * bytes_each;
  if (!(bytes > available)) return;
  std::ostringstream msg;
  msg.precision(3);
  msg << count << " " << what << " need " << BeyondMemory(bytes, available, "this node", source)
      << ", " << bytes_each << " B each; expected a smaller count";
  at.Error(msg.str());
}

const KeyTable* InitialConditionsKeys() {
  static const KeyTable table{
      "bodies[].initial_conditions",
      "initial velocity initial_velocity + omega axis x (x - center) + expression + table row",
      {Other("angular_velocity", "map", "", "", "a rigid rotation").Sub(AngularVelocityKeys),
       Other("velocity_expression", "3 strings", "", "muparser expressions in x, y, z (m)", "the velocity field vx, vy, vz (m/s)"),
       Other("velocity_table", "path", "", "rows 'node vx vy vz'", "FEM only: a per-node velocity table, resolved like mesh"),
       Other("prestrain", "map", "", "", "an initial deformation").Sub(PrestrainKeys)}};
  return &table;
}

/// A muparser expression in x, y, z: parsed and evaluated once at the origin, so that a
/// syntax error stops the run before anything is written, with muparser's message.
void CheckExpression(const Field& f, const std::string& expression) {
  try {
    double x = 0.0, y = 0.0, z = 0.0;
    mu::Parser parser;
    parser.DefineVar("x", &x);
    parser.DefineVar("y", &y);
    parser.DefineVar("z", &z);
    parser.SetExpr(expression);
    parser.Eval();
  } catch (const mu::Parser::exception_type& e) {
    f.Error("muparser cannot read '" + expression + "': " + e.GetMsg());
  }
}

InitialConditionsConfig ParseInitialConditions(const Field& f, const std::string& scene_folder,
                                               bool mpm) {
  const MapView m(f, *InitialConditionsKeys());
  InitialConditionsConfig ic;
  if (m.Has("angular_velocity")) {
    const MapView w(m.Get("angular_velocity"), *AngularVelocityKeys());
    ic.has_angular_velocity = true;
    w.ReadRequired("axis", ic.axis);
    w.ReadRequired("rate", ic.angular_velocity);
    ic.has_center = w.Read("center", ic.center);
  }
  if (m.Has("velocity_expression")) {
    const Field e = m.Get("velocity_expression");
    if (!e.node().IsSequence() || e.node().size() != 3)
      e.Expected("a sequence of 3 expressions in x, y, z (vx, vy, vz)");
    for (const Field& item : e.Items()) {
      item.To(ic.velocity_expression.emplace_back());
      CheckExpression(item, ic.velocity_expression.back());
    }
  }
  if (mpm && m.Has("velocity_table"))
    m.Get("velocity_table").Error("only FEM scenes take a per-node velocity table (MPM has no nodes)");
  if (m.Has("velocity_table")) ic.velocity_table = ReadPath(m.Get("velocity_table"), scene_folder);
  if (m.Has("prestrain")) {
    const MapView p(m.Get("prestrain"), *PrestrainKeys());
    ic.has_prestrain = true;
    if (p.ExactlyOne({"scale", "deformation_gradient"}) == 0) {
      const Field scale = p.Get("scale");
      Vec3 s = Vec3::Ones();
      if (scale.node().IsSequence()) {
        scale.To(s, kPositive);
      } else {
        scale.To(s[0], kPositive);
        s.setConstant(s[0]);
      }
      ic.prestrain = s.asDiagonal();
    } else {
      const Field A = p.Get("deformation_gradient");
      if (!A.node().IsSequence() || A.node().size() != 3)
        A.Expected("a sequence of 3 rows of 3 numbers");
      const std::vector<Field> rows = A.Items();
      for (int r = 0; r < 3; ++r) {
        Vec3 row;
        rows[r].To(row);
        ic.prestrain.row(r) = row.transpose();
      }
      if (!(ic.prestrain.determinant() > 0.0))
        A.Error("expected a deformation gradient with a positive determinant, got det " +
                FormatNumber(ic.prestrain.determinant()));
    }
    ic.has_prestrain_center = p.Read("center", ic.prestrain_center);
  }
  return ic;
}

// ============================================================================ model: bodies

const Names kBodySources = {"mesh", "surface", "shape"};  // order of BodyConfig::Source

const KeyTable* CopiesKeys() {
  static const KeyTable table{
      "bodies[].copies",
      "the body replaced by a grid of copies <name>.<i + count[0] (j + count[1] k)>",
      {Other("count", "3 integers", "required", ">= 1", "copies along x, y, z"),
       Vector("spacing", Default(CopiesConfig{}.spacing), "copy (i, j, k) moved by (i, j, k) .* spacing, m"),
       Number("jitter", Default(CopiesConfig{}.jitter), kNonNegative, "each copy also moved by a uniform draw from [-jitter, jitter]^3, m"),
       Integer("seed", Default(CopiesConfig{}.seed), kNonNegative, "seed of the jitter's 32-bit Mersenne Twister")}};
  return &table;
}

const KeyTable* BodyKeys() {
  static const KeyTable table{
      "bodies[]",
      "a body: a tet mesh, or (MPM) a closed surface or an analytic shape; one material",
      {Text("name", "body<i>", "the body's name (unique)"),
       Other("mesh", "path", "required (FEM)", ".ele, .node or .msh",
             "the tet mesh, resolved against the scene's folder (MPM: exactly one of mesh, surface, shape)"),
       Other("surface", "path", "", ".off or .stl", "MPM only: a closed triangle surface, resolved like mesh"),
       Other("shape", "map", "", "", "MPM only: an analytic solid").Sub(ShapeKeys),
       Other("transform", "map", "identity", "", "the rigid placement of the source").Sub(TransformKeys),
       Other("material", "map", "required", "", "the constitutive model").Sub(MaterialKeys),
       Vector("initial_velocity", Default(BodyConfig{}.initial_velocity), "m/s"),
       Other("initial_conditions", "map", "", "", "initial velocity fields and prestrain").Sub(InitialConditionsKeys),
       Other("copies", "map", "", "", "a grid of copies of the body").Sub(CopiesKeys)}};
  return &table;
}

BodyConfig ParseBody(const Field& f, std::size_t i, const std::string& scene_folder, bool mpm) {
  const MapView m(f, *BodyKeys());
  BodyConfig body;
  body.name = "body" + std::to_string(i);
  m.Read("name", body.name);
  MpmOnlyKeys(mpm, m, {"surface", "shape"});
  if (mpm) body.source = static_cast<BodyConfig::Source>(m.ExactlyOne(kBodySources));
  switch (body.source) {
    case BodyConfig::Source::kMesh:
      body.mesh = ReadPath(m.Require("mesh"), scene_folder);
      break;
    case BodyConfig::Source::kSurface: {
      body.surface = ReadPath(m.Get("surface"), scene_folder);
      std::string extension = fs::path(body.surface).extension().string();
      std::transform(extension.begin(), extension.end(), extension.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (extension != ".off" && extension != ".stl")
        m.Get("surface").Expected("a path ending in .off or .stl");
      break;
    }
    case BodyConfig::Source::kShape:
      body.shape = ParseShape(m.Get("shape"));
      break;
  }
  body.transform = ParseTransform(m.Get("transform"));
  body.material = ParseMaterial(m.Require("material"), mpm);
  m.Read("initial_velocity", body.initial_velocity);
  body.initial_conditions = ParseInitialConditions(m.Get("initial_conditions"), scene_folder, mpm);
  if (m.Has("copies")) {
    const MapView copies(m.Get("copies"), *CopiesKeys());
    const Field count = copies.Require("count");
    if (!count.node().IsSequence() || count.node().size() != 3)
      count.Expected("a sequence of 3 integers >= 1");
    const std::vector<Field> items = count.Items();
    for (int a = 0; a < 3; ++a) items[a].To(body.copies.count[a], kPositiveInteger);
    const double n = static_cast<double>(body.copies.count[0]) * body.copies.count[1] * body.copies.count[2];
    if (n > 2147483647.0) count.Error("expected at most 2147483647 copies in all, got " + std::to_string(n));
    // Each copy is a body of the scene. A FEM copy also brings its mesh, which rank 0
    // assembles into the scene's mesh: read it once here, so that a copy count whose
    // meshes cannot fit is refused before the copies are made. (MPM copies are sampled
    // particles, which the MPM memory estimate covers.)
    double bytes_each = static_cast<double>(sizeof(BodyConfig));
    std::string what = "copies";
    if (!mpm && n > 1.0 && fs::is_regular_file(body.mesh)) {  // a missing file: set-up names it
      const TetMeshData mesh = ReadTetMesh(body.mesh);
      bytes_each += AssembledMeshBytes(static_cast<double>(mesh.tets.size()),
                                       static_cast<double>(mesh.nodes.size()));
      what = "copies of " + fs::path(body.mesh).filename().string() + " (" +
             std::to_string(mesh.tets.size()) + " tets each)";
    }
    RefuseBeyondMemory(count, n, bytes_each, what);
    copies.Read("spacing", body.copies.spacing);
    copies.Read("jitter", body.copies.jitter);
    copies.Read("seed", body.copies.seed);
  }
  return body;
}

/// Each body replaced by its copies (CopiesConfig), in order; a body without copies stays.
std::vector<BodyConfig> ExpandCopies(const std::vector<BodyConfig>& bodies) {
  std::vector<BodyConfig> out;
  for (const BodyConfig& body : bodies) {
    const auto& n = body.copies.count;
    if (n[0] * n[1] * n[2] == 1 && body.copies.jitter == 0.0) {
      out.push_back(body);
      continue;
    }
    std::mt19937 rng(static_cast<std::uint32_t>(body.copies.seed));
    // [-1, 1] from the generator's raw 32 bits: the same numbers on every platform.
    auto uniform = [&] { return 2.0 * static_cast<double>(rng()) / 4294967295.0 - 1.0; };
    for (int k = 0, index = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i, ++index) {
          BodyConfig copy = body;
          copy.copies = CopiesConfig();
          copy.name = body.name + "." + std::to_string(index);
          Vec3 jitter;
          for (int a = 0; a < 3; ++a) jitter[a] = body.copies.jitter * uniform();
          copy.transform.translate += Vec3(i, j, k).cwiseProduct(body.copies.spacing) + jitter;
          out.push_back(copy);
        }
  }
  return out;
}

// ============================================================================ model: selections and motion

const KeyTable* BoxKeys() {
  static const KeyTable table{"select.box", "the nodes with min <= x <= max componentwise (m, at t = 0)",
                              {Vector("min", "required", "m").Allowing("<= max componentwise"),
                               Vector("max", "required", "m")}};
  return &table;
}

const KeyTable* SelectionKeys() {
  static const KeyTable table{
      "select", "the nodes (MPM: particles) a condition or load holds, tested after the transform at t = 0",
      {Other("box", "map", "", "", "a box (exactly one of box, axis)").For({"box"}).Sub(BoxKeys),
       Choice("axis", "", kAxes, "the nodes near one end of the body along this axis (exactly one of box, axis)").For({"axis"}),
       Choice("end", "required", {"min", "max"}, "which end").For({"axis"}),
       Number("within", Default(SelectionConfig{}.within), Range{0.0, 1.0, true, false}, "the band's width, a fraction of the extent along axis").For({"axis"}),
       Text("body", "all bodies", "restrict to one body by name")}};
  return &table;
}

SelectionConfig ParseSelection(const Field& f, const Names& body_names) {
  const MapView m(f, *SelectionKeys());
  SelectionConfig select;
  if (m.Read("body", select.body) &&
      std::find(body_names.begin(), body_names.end(), select.body) == body_names.end())
    m.Get("body").Expected("the name of a body (" + Join(body_names, ", ") + ")");
  if (m.ExactlyOne({"box", "axis"}) == 0) {
    m.RestrictTo("box", "with box");
    select.kind = SelectionConfig::Kind::kBox;
    ReadBox(MapView(m.Get("box"), *BoxKeys()), select.box_min, select.box_max);
  } else {
    m.RestrictTo("axis", "with axis");
    select.kind = SelectionConfig::Kind::kAxisEnd;
    select.axis = static_cast<int>(m.Get("axis").ToChoice(kAxes));
    select.end_max = m.Require("end").ToChoice(m.table().Find("end").choices) == 1;
    m.Read("within", select.within);
  }
  return select;
}

const KeyTable* TranslateKeys() {
  static const KeyTable table{"motion[].translate", "a translation at constant velocity",
                              {Vector("velocity", "required", "m/s")}};
  return &table;
}

const KeyTable* RotateMotionKeys() {
  static const KeyTable table{
      "motion[].rotate", "a rotation at constant angular velocity",
      {Direction("axis", "required", "the rotation axis"),
       Number("angular_velocity", "required", kAnyNumber, "rad/s, right-handed about axis"),
       Vector("center", "the selection's centroid, or the object's center", "a point on the axis, m")}};
  return &table;
}

const KeyTable* MotionSegmentKeys() {
  static const KeyTable table{
      "motion[]", "one scripted motion segment, active for t in [start, end)",
      {Other("translate", "map", "", "", "a translation (exactly one of translate, rotate)").Sub(TranslateKeys),
       Other("rotate", "map", "", "", "a rotation (exactly one of translate, rotate)").Sub(RotateMotionKeys),
       Number("start", Default(MotionSegmentConfig{}.start), kNonNegative, "s"),
       Number("end", Default(MotionSegmentConfig{}.end), Range{0.0, kInf, true, false, true}, "s").Allowing("> start")}};
  return &table;
}

MotionSegmentConfig ParseSegment(const Field& f) {
  const MapView m(f, *MotionSegmentKeys());
  MotionSegmentConfig segment;
  if (m.ExactlyOne({"translate", "rotate"}) == 0) {
    segment.kind = MotionSegmentConfig::Kind::kTranslate;
    MapView(m.Get("translate"), *TranslateKeys()).ReadRequired("velocity", segment.velocity);
  } else {
    segment.kind = MotionSegmentConfig::Kind::kRotate;
    const MapView rotate(m.Get("rotate"), *RotateMotionKeys());
    rotate.ReadRequired("axis", segment.axis);
    rotate.ReadRequired("angular_velocity", segment.angular_velocity);
    segment.has_center = rotate.Read("center", segment.center);
  }
  m.Read("start", segment.start);
  m.Read("end", segment.end, Range{segment.start, kInf, true, false, true});
  return segment;
}

std::vector<MotionSegmentConfig> ParseMotion(const Field& f) {
  return ParseList<MotionSegmentConfig>(f, [](const Field& item, std::size_t) { return ParseSegment(item); });
}

// ============================================================================ model: time functions and loads

const Names kTimeFunctionTypes = {"constant", "ramp", "table"};  // order of TimeFunctionConfig::Kind
const Names kLoadTypes = {"point", "traction", "pressure", "body_force"};  // order of LoadConfig::Kind

const KeyTable* TimeFunctionKeys() {
  static const KeyTable table{
      "time_functions.<name>", "a dimensionless function of time tau(t) that scales a load or gravity",
      {Choice("type", "required", kTimeFunctionTypes, "constant, a linear ramp, or a table interpolated linearly"),
       Number("value", "required", kAnyNumber, "tau").For({"constant"}),
       Number("start", Default(TimeFunctionConfig{}.start), kNonNegative, "the ramp's start, s").For({"ramp"}),
       Number("end", "required", kPositive, "the ramp's end, s").For({"ramp"}).Allowing("> start"),
       Number("from", Default(TimeFunctionConfig{}.from), kAnyNumber, "tau for t <= start").For({"ramp"}),
       Number("to", Default(TimeFunctionConfig{}.to), kAnyNumber, "tau for t >= end").For({"ramp"}),
       Other("points", "sequence of [t, value]", "required", "t >= 0, increasing",
             "(t in s, tau) points, constant beyond the first and last").For({"table"})}};
  return &table;
}

TimeFunctionConfig ParseTimeFunction(const Field& f, const std::string& name) {
  std::size_t type = 0;
  const MapView m = TypedMap(f, *TimeFunctionKeys(), "type", &type);
  TimeFunctionConfig tf;
  tf.kind = static_cast<TimeFunctionConfig::Kind>(type);
  tf.name = name;
  switch (tf.kind) {
    case TimeFunctionConfig::Kind::kConstant:
      m.ReadRequired("value", tf.value);
      break;
    case TimeFunctionConfig::Kind::kRamp:
      m.Read("start", tf.start);
      m.Require("end").To(tf.end, Range{tf.start, kInf, true});
      m.Read("from", tf.from);
      m.Read("to", tf.to);
      break;
    case TimeFunctionConfig::Kind::kTable: {
      const Field points = m.Require("points");
      for (const Field& item : points.Items()) {
        if (!item.node().IsSequence() || item.node().size() != 2) item.Expected("a pair [t, value]");
        const std::vector<Field> pair = item.Items();
        double t = 0.0, value = 0.0;
        pair[0].To(t, kNonNegative);
        pair[1].To(value);
        if (!tf.points.empty() && !(t > tf.points.back().first))
          pair[0].Expected("a time after the previous point's " + FormatNumber(tf.points.back().first));
        tf.points.emplace_back(t, value);
      }
      if (tf.points.empty()) points.Expected("a non-empty sequence of [t, value] pairs");
      break;
    }
  }
  return tf;
}

/// The top-level time_functions: a map from names to functions.
TimeFunctions ParseTimeFunctions(const Field& f) {
  TimeFunctions named;
  const YAML::Node& node = f.node();
  if (!node.IsDefined() || node.IsNull()) return named;
  if (!node.IsMap()) f.Expected("a map from names to time functions");
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) f.Error("expected string keys, got " + Describe(entry.first));
    const std::string name = entry.first.Scalar();
    if (named.count(name)) f.Child(name).Error("duplicate key");
    named[name] = ParseTimeFunction(f.Child(name), name);
  }
  return named;
}

/// A time function by name (a key of time_functions) or inline (a map).
TimeFunctionConfig ReadTimeFunction(const Field& f, const TimeFunctions& named) {
  if (!f.node().IsScalar()) return ParseTimeFunction(f, "");
  const auto found = named.find(f.node().Scalar());
  if (found == named.end()) {
    Names known;
    for (const auto& entry : named) known.push_back(entry.first);
    f.Error("unknown time function '" + f.node().Scalar() + "' (time_functions: " +
            (known.empty() ? "none" : Join(known, ", ")) + ")");
  }
  return found->second;
}

const KeyTable* LoadKeys() {
  static const KeyTable table{
      "loads[]", "an external load, an energy term scaled by its time function at each step's end",
      {Choice("type", "required", kLoadTypes, "point force, traction, pressure or body force"),
       Text("name", "load<i>", "the load's name"),
       Other("time_function", "name or map", "constant 1", "a key of time_functions, or inline",
             "tau(t), scaling the load").Sub(TimeFunctionKeys),
       Other("select", "map", "required", "", "the nodes (MPM: particles) or boundary faces loaded")
           .For({"point", "traction", "pressure"})
           .Sub(SelectionKeys),
       Vector("force", "required", "the total force, N, split equally over the selected nodes").For({"point"}),
       Vector("traction", "required", "force per unit rest area, Pa (FEM)").For({"traction"}),
       Number("pressure", "required", kAnyNumber, "Pa, > 0 pushes into the body").For({"pressure"}),
       Flag("follower", Default(LoadConfig{}.follower), "normal to the deformed face (true) or to the rest face (false; MPM: false only)")
           .For({"pressure"}),
       Vector("acceleration", "required", "force per unit mass, m/s^2").For({"body_force"}),
       Text("body", "all bodies", "one body by name (FEM only)").For({"body_force"})}};
  return &table;
}

LoadConfig ParseLoad(const Field& f, std::size_t i, const Names& body_names, const TimeFunctions& named,
                     bool mpm) {
  std::size_t type = 0;
  const MapView m = TypedMap(f, *LoadKeys(), "type", &type);
  LoadConfig load;
  load.kind = static_cast<LoadConfig::Kind>(type);
  load.name = "load" + std::to_string(i);
  m.Read("name", load.name);
  if (m.Has("time_function")) load.time_function = ReadTimeFunction(m.Get("time_function"), named);
  if (load.kind != LoadConfig::Kind::kBodyForce) load.select = ParseSelection(m.Require("select"), body_names);
  switch (load.kind) {
    case LoadConfig::Kind::kPoint:
      m.ReadRequired("force", load.force);
      break;
    case LoadConfig::Kind::kTraction:
      m.ReadRequired("traction", load.traction);
      break;
    case LoadConfig::Kind::kPressure:
      m.ReadRequired("pressure", load.pressure);
      m.Read("follower", load.follower);
      if (mpm && load.follower)
        (m.Has("follower") ? m.Get("follower") : m.Get("type"))
            .Error("MPM pressures are dead (per rest area): give follower: false");
      break;
    case LoadConfig::Kind::kBodyForce:
      m.ReadRequired("acceleration", load.acceleration);
      if (m.Read("body", load.body)) {
        if (mpm) m.Get("body").Error("MPM body forces act on the grid, on all bodies: leave out 'body'");
        if (std::find(body_names.begin(), body_names.end(), load.body) == body_names.end())
          m.Get("body").Expected("the name of a body (" + Join(body_names, ", ") + ")");
      }
      break;
  }
  return load;
}

// ============================================================================ model: boundary conditions and collision objects

const KeyTable* BoundaryConditionKeys() {
  static const KeyTable table{
      "boundary_conditions[]", "a Dirichlet condition: the selected nodes follow the motion (none: held fixed)",
      {Text("name", "bc<i>", "the condition's name"),
       Other("select", "map", "required", "", "the nodes held").Sub(SelectionKeys),
       Other("motion", "sequence of segments", "held fixed", "", "scripted motion").Sub(MotionSegmentKeys)}};
  return &table;
}

BoundaryConditionConfig ParseBoundaryCondition(const Field& f, std::size_t i, const Names& body_names) {
  const MapView m(f, *BoundaryConditionKeys());
  BoundaryConditionConfig bc;
  bc.name = "bc" + std::to_string(i);
  m.Read("name", bc.name);
  bc.select = ParseSelection(m.Require("select"), body_names);
  bc.motion = ParseMotion(m.Get("motion"));
  return bc;
}

const Names kCollisionTypes = {"half_space", "sphere", "box", "cylinder", "torus", "bowl", "box_with_hole"};

const KeyTable* CollisionObjectKeys() {
  static const KeyTable table{
      "collision_objects[]",
      "an analytic obstacle: penalty energy k m_i max(-phi, 0)^3 per node, or (FEM) a constraint phi >= 0",
      {Choice("type", "required", kCollisionTypes, "the obstacle's shape"),
       Text("name", "", "the object's name"),
       Number("stiffness", Default(CollisionObjectConfig{}.stiffness), kPositive, "k, 1/(m s^2): energy per unit mass per m^3 penetration",
              "Gast et al. 2015, Sec. 5.2"),
       Number("friction", Default(CollisionObjectConfig{}.friction), kNonNegative, "Coulomb coefficient mu"),
       Number("damping", Default(CollisionObjectConfig{}.damping), kNonNegative,
              "FEM, static penalty objects: the contact dashpot as a fraction of critical damping"),
       Choice("boundary", Default(CollisionObjectConfig{}.boundary), ChoiceNames(GridBoundary{}),
              "MPM: grid nodes at the object keep no relative velocity (sticky) or lose their inward normal part (slip)"),
       Other("motion", "sequence of segments", "static", "", "scripted rigid motion").Sub(MotionSegmentKeys),
       Choice("method", Default(CollisionObjectConfig{}.method), ChoiceNames(CollisionMethod{}),
              "FEM: the penalty energy, or phi >= 0 held by gradient projection", "Gast et al. 2015, Secs. 3.2, 5.1, 5.2"),
       Vector("point", Default(CollisionObjectConfig{}.point), "a point on the plane, m").For({"half_space"}),
       Direction("normal", "required", "the outward normal").For({"half_space"}),
       Vector("center", Default(CollisionObjectConfig{}.center), "m").For({"sphere", "cylinder", "torus", "bowl"}),
       Number("radius", "required", kPositive, "m").For({"sphere", "cylinder"}),
       Vector("min", "required", "m").For({"box", "box_with_hole"}).Allowing("<= max componentwise"),
       Vector("max", "required", "m").For({"box", "box_with_hole"}),
       Direction("axis", Default(CollisionObjectConfig{}.axis), "the axis of revolution (bowl: open toward +axis)")
           .For({"cylinder", "torus", "bowl"}),
       Number("half_length", Default(CollisionObjectConfig{}.half_length), Range{0.0, kInf, true, false, true},
              "capped at |axial offset| < half_length, m; infinite: uncapped")
           .For({"cylinder"}),
       Number("major_radius", "required", kPositive, "R, m").For({"torus"}),
       Number("minor_radius", "required", kPositive, "r, m").For({"torus"}).Allowing("(0, major_radius)"),
       Number("inner_radius", "required", kPositive, "m").For({"bowl"}).Allowing("(0, outer_radius)"),
       Number("outer_radius", "required", kPositive, "m").For({"bowl"}),
       Number("hole_radius", "required", kPositive, "m, leaving a wall on every side").For({"box_with_hole"}),
       Choice("hole_axis", "y", kAxes, "the coordinate axis the hole runs along").For({"box_with_hole"}),
       Vector("hole_center", "the box's center", "a point on the hole's axis, m").For({"box_with_hole"})}};
  return &table;
}

/// A collision object (which integrators take its motion and method: io/SceneCompatibility).
CollisionObjectConfig ParseCollisionObject(const Field& f, bool mpm) {
  std::size_t type = 0;
  const MapView m = TypedMap(f, *CollisionObjectKeys(), "type", &type);
  CollisionObjectConfig object;
  object.kind = static_cast<CollisionObjectConfig::Kind>(type);
  using Kind = CollisionObjectConfig::Kind;
  m.Read("name", object.name);
  m.Read("stiffness", object.stiffness);
  m.Read("friction", object.friction);
  if (mpm && m.Has("damping"))
    m.Get("damping").Error("only FEM scenes take 'damping' (the MPM grid's projection has no "
                           "contact spring to damp)");
  m.Read("damping", object.damping);
  m.Read("boundary", object.boundary);
  if (mpm && m.Has("method"))
    m.Get("method").Error("only FEM scenes (discretization: fem) take 'method' (MPM grid nodes are "
                          "projected at objects as 'boundary' says)");
  m.Read("method", object.method);
  object.motion = ParseMotion(m.Get("motion"));
  // The dashpot acts on a node's own normal displacement over the step, which is the
  // relative one only against a static object; a projected (constraint) node has no spring.
  if (object.damping > 0.0 && !object.motion.empty())
    m.Get("damping").Error("needs a static object: this one has 'motion' (leave damping out)");
  if (object.damping > 0.0 && object.method == CollisionMethod::kConstraint)
    m.Get("damping").Error("damps the penalty contact spring: method: constraint has none "
                           "(leave damping out)");
  switch (object.kind) {
    case Kind::kHalfSpace:
      m.Read("point", object.point);
      m.ReadRequired("normal", object.normal);
      break;
    case Kind::kBox:
      ReadBox(m, object.box_min, object.box_max, /*solid=*/true);
      break;
    case Kind::kSphere:
    case Kind::kCylinder:
    case Kind::kTorus:
      ReadRoundSolid(m, kCollisionTypes[type], /*capped=*/false, &object);
      break;
    case Kind::kBowl:
      m.Read("center", object.center);
      m.Read("axis", object.axis);
      m.ReadRequired("outer_radius", object.outer_radius);
      m.Require("inner_radius").To(object.inner_radius, Range{0.0, object.outer_radius, true, true});
      break;
    case Kind::kBoxWithHole: {
      ReadBox(m, object.box_min, object.box_max, /*solid=*/true);
      const std::size_t axis = m.Has("hole_axis") ? m.Get("hole_axis").ToChoice(kAxes) : 1;
      object.axis = Vec3::Unit(static_cast<int>(axis));
      object.center = 0.5 * (object.box_min + object.box_max);
      m.Read("hole_center", object.center);
      m.ReadRequired("hole_radius", object.hole_radius);
      for (std::size_t a = 0; a < 3; ++a)  // the hole must leave a wall on every side
        if (a != axis && (object.center[a] - object.hole_radius <= object.box_min[a] ||
                          object.center[a] + object.hole_radius >= object.box_max[a]))
          m.Get("hole_radius").Error("the hole of radius " + FormatNumber(object.hole_radius) + " about " +
                                     FormatVec(object.center) + " along " + kAxes[axis] +
                                     " does not fit inside the box's " + kAxes[a] + " extent [" +
                                     FormatNumber(object.box_min[a]) + ", " +
                                     FormatNumber(object.box_max[a]) + "]");
      break;
    }
  }
  return object;
}

// ============================================================================ mpm

const KeyTable* MpmKeys() {
  static const KeyTable table{
      "mpm", "the MPM discretization (required exactly when discretization is mpm)",
      {Number("dx", "required", kPositive, "the background grid's spacing, m"),
       Integer("ppc", Default(MpmConfig{}.ppc), kPositiveInteger, "particles sampled per grid cell"),
       Number("cfl", Default(MpmConfig{}.cfl), Range{0.0, 1.0, true, false}, "CFL number: dt <= cfl dx / max |v_p|",
              "Gast et al. 2015, Sec. 6.3; Wang et al. 2020 (HOT), Sec. 7.1"),
       Number("flip", Default(MpmConfig{}.flip), Range{0.0, 1.0}, "FLIP fraction of the PIC/FLIP blend; 0: APIC", "Jiang et al. 2015 (APIC)"),
       Number("repartition_threshold", Default(MpmConfig{}.repartition_threshold), Range{1.0, kInf, true}, "repartition when max/mean particles per rank exceeds it"),
       Integer("seed", Default(MpmConfig{}.seed), kNonNegative, "seed of the particle sampling"),
       Flag("matrix_free", Default(MpmConfig{}.matrix_free), "PN-PCG(MF): the Newton Hessian applied matrix-free (a MatShell)")}};
  return &table;
}

MpmConfig ParseMpm(const Field& f) {
  const MapView m(f, *MpmKeys());
  MpmConfig mpm;
  m.ReadRequired("dx", mpm.dx);
  m.Read("ppc", mpm.ppc);
  m.Read("cfl", mpm.cfl);
  m.Read("flip", mpm.flip);
  m.Read("repartition_threshold", mpm.repartition_threshold);
  m.Read("seed", mpm.seed);
  m.Read("matrix_free", mpm.matrix_free);
  return mpm;
}

// ============================================================================ defaults that depend on other keys

// The value a closed choice takes when the scene leaves its key out and the default depends
// on other keys: each in one function here, which the parser calls after reading the key
// it depends on (and `optistep keys` describes in the key's default column).

/// friction.model: potential for FEM under the integrators that minimize an incremental
/// potential (backward_euler, quasi_static): a body on a slope with mu > tan theta holds at
/// every step size, which after the solve it does not (docs/methods/friction.md);
/// after_solve for MPM (friction on the slip nodes after the solve) and for the integrators
/// that take no friction potential (xpbd, semi_implicit, async: their own contact friction
/// or none).
FrictionModel DefaultFrictionModel(Discretization discretization, IntegratorKind integrator) {
  const bool minimizes =
      integrator == IntegratorKind::kBackwardEuler || integrator == IntegratorKind::kQuasiStatic;
  return discretization == Discretization::kFem && minimizes ? FrictionModel::kPotential
                                                             : FrictionModel::kAfterSolve;
}

/// solver.forcing: preconditioned for MPM (HOT), gradient with termination absolute (Gast's
/// tau), characteristic_norm for FEM otherwise.
Forcing DefaultForcing(bool mpm, Termination termination) {
  if (mpm) return Forcing::kPreconditioned;
  return termination == Termination::kAbsolute ? Forcing::kGradient : Forcing::kCharacteristicNorm;
}

/// solver.hessian_projection: none for quasi_static (the projection clips a bent beam's
/// compressed modes and makes Newton converge linearly near equilibrium), element otherwise.
HessianProjection DefaultHessianProjection(IntegratorKind integrator) {
  return integrator == IntegratorKind::kQuasiStatic ? HessianProjection::kNone
                                                    : HessianProjection::kElement;
}

// ============================================================================ solvers

constexpr double kMpmCnEpsilon = 1e-7;  // HOT (Wang et al. 2020) Sec. 7.1
// HOT's reference code (ImplicitSolver.h, computeDescentStep) replaces the Newton direction
// by the gradient's when |g.d| < 1e-5 |g| |d|. With its loose CG forcing, Gast's 1e-2
// rejects most directions of stiff or contacting MPM scenes, and the fallback crawls.
constexpr double kMpmKappa = 1e-5;
constexpr int kMpmWindow = 8;  // L-BFGS history, HOT (Wang et al. 2020) Sec. 7.1

const KeyTable* SolverKeys() {
  static const KeyTable table{
      "solver", "the per-step minimizer: defaults of its options (-newton_*, -lbfgs_*, -hot_*, -dot_*), which override them",
      {Other("method", "choice",
             Default(SolverConfig{}.method) + " (a FEM body of " + std::to_string(kNewtonMgDefaultTets) +
                 " tets or more: newton_mg)",
             Join(ChoiceNames(MinimizerMethod{}), ", "), "the minimizer",
             "Gast et al. 2015; Li et al. 2019 (DOT); Wang et al. 2020 (HOT)"),
       Choice("termination", Default(SolverConfig{}.termination), ChoiceNames(Termination{}),
              "the convergence test: characteristic norm, or |g| < tau"),
       Number("cn_epsilon", Default(SolverConfig{}.cn_epsilon) + " (FEM), " + Default(kMpmCnEpsilon) + " (MPM)", kPositive, "characteristic-norm epsilon",
              "Li et al. 2019 (DOT), Sec. 6; Wang et al. 2020 (HOT), Sec. 7.1"),
       Number("rigid_epsilon", Default(SolverConfig{}.rigid_epsilon), kPositive,
              "characteristic-norm termination: bound on each free body's net force and torque over its weight and inertia"),
       Number("tau", Default(SolverConfig{}.tau), kPositive, "absolute gradient-norm tolerance, N (termination absolute)", "Gast et al. 2015, Sec. 3.1"),
       Integer("max_iterations", Default(SolverConfig{}.max_iterations), kPositiveInteger, "iteration cap per step"),
       Number("kappa", Default(SolverConfig{}.kappa) + " (FEM), " + Default(kMpmKappa) + " (MPM)", Range{0.0, 1.0, true, true}, "the downhill check",
              "Gast et al. 2015, Sec. 3.1; HOT's code for MPM"),
       Number("step_clamp", Default(SolverConfig{}.step_clamp), kPositive, "l, the largest step length, m", "Gast et al. 2015, Sec. 3.1"),
       Number("forcing_sigma", Default(SolverConfig{}.forcing_sigma), kPositive, "CG relative tolerance min(1/2, sigma sqrt(max(|g|, floor)))",
              "Gast et al. 2015, Sec. 3.1"),
       Choice("forcing", "preconditioned (MPM), characteristic_norm (FEM), gradient (termination absolute)",
              ChoiceNames(Forcing{}), "what |g| in the forcing term measures",
              "Gast et al. 2015, Sec. 3.1; Wang et al. 2020 (HOT), Sec. 5.3"),
       Flag("best_of_two_guesses", Default(SolverConfig{}.best_of_two_guesses), "start each step from the better of two initial guesses", "Gast et al. 2015"),
       Integer("window", Default(SolverConfig{}.window) + " (FEM), " + Default(kMpmWindow) + " (MPM)", kPositiveInteger, "L-BFGS history size m",
               "DOT's code (FEM); Wang et al. 2020 (HOT), Sec. 7.1 (MPM)"),
       Other("initializer", "choice", "lagged_hessian (lbfgs), vcycle (hot), subdomains (dot)",
             "lagged_hessian, projective_dynamics, subdomains, jacobi, identity, vcycle",
             "the L-BFGS initial inverse Hessian"),
       Integer("mg_levels", "3 (MPM), automatic (FEM: the coarsest grid at most 500 nodes)", kPositiveInteger,
               "multigrid levels, the finest included (MPM: the grid's; FEM: the mesh and the grids embedding it)",
               "Wang et al. 2020 (HOT), Sec. 7.1 (MPM); ours (FEM)"),
       Choice("mg_embedding", Default(SolverConfig{}.mg_embedding), {"linear", "quadratic"}, "prolongation by node embedding",
              "Wang et al. 2020 (HOT), Sec. 4"),
       Choice("hessian_projection", "element (backward_euler), none (quasi_static)", ChoiceNames(HessianProjection{}),
              "FEM: the elastic Hessian Newton solves with: per-tet SPD projection, or the true tangent",
              "Teran et al. 2005")}};
  return &table;
}

SolverConfig ParseSolver(const Field& f, bool mpm, IntegratorKind integrator) {
  const MapView m(f, *SolverKeys());
  SolverConfig solver;
  if (mpm) {
    solver.cn_epsilon = kMpmCnEpsilon;
    solver.kappa = kMpmKappa;
    solver.window = kMpmWindow;
  }
  // The message is the minimizer factory's for -solver_method (solvers/MinimizerFactory.hpp).
  std::string method;
  solver.method_given = m.Read("method", method);
  if (solver.method_given && !FromString(method, &solver.method))
    m.Get("method").Error("'" + method + "' is not a minimizer (" +
                          Join(ChoiceNames(MinimizerMethod{}), ", ") + ")");
  m.Read("termination", solver.termination);
  m.Read("cn_epsilon", solver.cn_epsilon);
  m.Read("rigid_epsilon", solver.rigid_epsilon);
  m.Read("tau", solver.tau);
  m.Read("max_iterations", solver.max_iterations);
  m.Read("kappa", solver.kappa);
  m.Read("step_clamp", solver.step_clamp);
  m.Read("forcing_sigma", solver.forcing_sigma);
  if (!m.Read("forcing", solver.forcing)) solver.forcing = DefaultForcing(mpm, solver.termination);
  m.Read("best_of_two_guesses", solver.best_of_two_guesses);
  m.Read("window", solver.window);
  m.Read("initializer", solver.initializer);
  m.Read("mg_levels", solver.mg_levels);
  m.Read("mg_embedding", solver.mg_embedding);
  if (mpm && m.Has("hessian_projection"))
    m.Get("hessian_projection").Error("only FEM scenes (discretization: fem) take 'hessian_projection'");
  if (!m.Read("hessian_projection", solver.hessian_projection))
    solver.hessian_projection = DefaultHessianProjection(integrator);
  return solver;
}

const KeyTable* DotKeys() {
  static const KeyTable table{
      "dot", "FEM only: DOT's subdomains and coarse space, the defaults of the -dot_ options",
      {Integer("subdomains_per_rank", "by subdomain_nodes", kPositiveInteger,
               "each rank's tets split again by METIS into this many subdomains (instead of subdomain_nodes)",
               "Li et al. 2019 (DOT)"),
       Integer("subdomain_nodes", Default(DotConfig{}.subdomain_nodes), kPositiveInteger,
               "target nodes per subdomain: the mesh split by METIS into max(1, round(N / this)) parts"),
       Choice("merge", "symmetric (coarse rigid), average (coarse none)", {"average", "symmetric"},
              "how subdomain back-solves merge at shared nodes: the mean (DOT's code), or a symmetric partition of unity"),
       Choice("coarse", Default(DotConfig{}.coarse), {"rigid", "none"},
              "coarse space: two-level Schwarz on each subdomain's rigid-body modes, or one level (DOT's)")}};
  return &table;
}

/// The top-level `dot` block (FEM only): DOT's subdomains (Li et al. 2019).
DotConfig ParseDot(const Field& f) {
  const MapView m(f, *DotKeys());
  DotConfig dot;
  m.Read("subdomains_per_rank", dot.subdomains_per_rank);
  m.Read("subdomain_nodes", dot.subdomain_nodes);
  m.Read("merge", dot.merge);
  m.Read("coarse", dot.coarse);
  return dot;
}

// ============================================================================ particles

const KeyTable* ChainMassKeys() {
  static const KeyTable table{"chains[].masses[]", "a particle's own mass",
                              {Integer("index", "required", kNonNegative, "the particle").Allowing("[0, particles - 1]"),
                               Number("mass", "required", kPositive, "kg")}};
  return &table;
}

const KeyTable* ChainKeys() {
  static const KeyTable table{
      "chains[]",
      "particles only: a polyline of particles joined by distance constraints of compliance alpha (XPBD)",
      {Text("name", "chain<i>", "the chain's name"),
       Other("points", "sequence of [x, y, z]", "", "at least 2, no zero-length edge",
             "the particles' positions, m (exactly one of points, start)")
           .For({"points"}),
       Vector("start", "", "the first particle, m (with step and count; exactly one of points, start)").For({"start"}),
       Vector("step", "required with start", "particle i at start + i step, m").For({"start"}),
       Integer("count", "required with start", Range{2.0, kInf}, "the number of particles").For({"start"}),
       Number("mass", "required", kPositive, "kg per particle", "Macklin et al. 2019, Sec. 6.1"),
       Other("masses", "sequence of maps", "", "", "per-particle mass overrides").Sub(ChainMassKeys),
       Other("pinned", "sequence of integers", "", "[0, particles - 1]", "particles held where they start"),
       Number("compliance", Default(ChainConfig{}.compliance), kNonNegative, "alpha, m/N (1/stiffness; 0: inextensible)", "Macklin et al. 2019"),
       Vector("initial_velocity", Default(ChainConfig{}.initial_velocity), "m/s, of every particle not pinned")}};
  return &table;
}

/// chains[i] (discretization: particles): a polyline of particles, see ChainConfig.
ChainConfig ParseChain(const Field& f, std::size_t i) {
  const MapView m(f, *ChainKeys());
  ChainConfig chain;
  chain.name = "chain" + std::to_string(i);
  m.Read("name", chain.name);
  if (m.ExactlyOne({"points", "start"}) == 0) {
    m.RestrictTo("points", "with points");
    const std::vector<Field> items = m.Get("points").Items();
    if (items.size() < 2) m.Get("points").Expected("a sequence of at least 2 points");
    for (std::size_t k = 0; k < items.size(); ++k) {
      items[k].To(chain.points.emplace_back());
      if (k > 0 && chain.points[k] == chain.points[k - 1])
        items[k].Error("zero-length edge: the same position as points[" + std::to_string(k - 1) + "], " +
                       FormatVec(chain.points[k]));
    }
  } else {
    Vec3 start, step;
    int count = 0;
    m.ReadRequired("start", start);
    m.ReadRequired("step", step);
    m.ReadRequired("count", count);
    // Its positions, velocities, previous positions and inverse masses at least.
    RefuseBeyondMemory(m.Require("count"), count, 10.0 * sizeof(double), "chain particles");
    if (step.squaredNorm() == 0.0) m.Get("step").Error("zero-length edge: expected a non-zero step");
    for (int k = 0; k < count; ++k) chain.points.push_back(start + k * step);
  }
  const int n = static_cast<int>(chain.points.size());
  const Range index{0.0, static_cast<double>(n - 1)};
  m.ReadRequired("mass", chain.mass);
  for (const Field& item : m.Get("masses").Items()) {
    const MapView override_mass(item, *ChainMassKeys());
    auto& [particle, mass] = chain.masses.emplace_back();
    override_mass.Require("index").To(particle, index);
    override_mass.ReadRequired("mass", mass);
  }
  for (const Field& item : m.Get("pinned").Items()) item.To(chain.pinned.emplace_back(), index);
  m.Read("compliance", chain.compliance);
  m.Read("initial_velocity", chain.initial_velocity);
  return chain;
}

const KeyTable* ClothKeys() {
  static const KeyTable table{
      "cloths[]",
      "particles only: a triangle surface's vertices, each edge a distance constraint of compliance alpha (XPBD)",
      {Text("name", "cloth<i>", "the cloth's name"),
       Other("mesh", "path", "required", ".off or .stl", "the surface, resolved against the scene's folder"),
       Other("transform", "map", "identity", "", "the rigid placement of the surface").Sub(TransformKeys),
       Number("mass", "required", kPositive, "kg per particle"),
       Other("pinned", "sequence of integers", "", ">= 0", "vertices held where they start"),
       Number("compliance", Default(ClothConfig{}.compliance), kNonNegative, "alpha, m/N (the paper's k = 1e7 N/m: 1e-7)", "Macklin et al. 2019, Sec. 6.2"),
       Vector("initial_velocity", Default(ClothConfig{}.initial_velocity), "m/s"),
       Number("bending_compliance", "none", kNonNegative,
              "m/N: a distance constraint across each interior edge (absent: no bending)")}};
  return &table;
}

/// cloths[i] (discretization: particles): a triangle surface's edges, see ClothConfig.
ClothConfig ParseCloth(const Field& f, std::size_t i, const std::string& scene_folder) {
  const MapView m(f, *ClothKeys());
  ClothConfig cloth;
  cloth.name = "cloth" + std::to_string(i);
  m.Read("name", cloth.name);
  cloth.mesh = ReadPath(m.Require("mesh"), scene_folder);
  cloth.transform = ParseTransform(m.Get("transform"));
  m.ReadRequired("mass", cloth.mass);
  for (const Field& item : m.Get("pinned").Items()) item.To(cloth.pinned.emplace_back(), Range{0.0, kInf});
  m.Read("compliance", cloth.compliance);
  m.Read("initial_velocity", cloth.initial_velocity);
  cloth.bending = m.Read("bending_compliance", cloth.bending_compliance);
  return cloth;
}

// ============================================================================ integrators and fem

const KeyTable* DampingKeys() {
  static const KeyTable table{"damping", "lagged Rayleigh damping",
                              {Number("stiffness_beta", Default(DampingConfig{}.stiffness_beta), kNonNegative, "stiffness-proportional coefficient beta, s",
                                      "Gast et al. 2015, Sec. 4.2")}};
  return &table;
}

const KeyTable* FrictionKeys() {
  static const KeyTable table{
      "friction", "friction against the collision objects",
      {Choice("model", "potential (FEM: backward_euler, quasi_static); after_solve otherwise", ChoiceNames(FrictionModel{}),
              "Coulomb friction on the velocities after the solve, or IPC's lagged smoothed potential inside it",
              "Gast et al. 2015, Sec. 5.2; Li et al. 2020 (IPC), Sec. 5"),
       Number("epsilon_v", Default(FrictionConfig{}.epsilon_v), kPositive, "IPC's eps_v, m/s: tangential speeds below it count as static",
              "Li et al. 2020 (IPC), Sec. 5.2"),
       Integer("lagged_updates", Default(FrictionConfig{}.lagged_updates), kPositiveInteger, "friction solves per step, normals and forces lagged again",
               "Li et al. 2020 (IPC), Sec. 5.1")}};
  return &table;
}

const KeyTable* QuasiStaticKeys() {
  static const KeyTable table{
      "quasi_static", "integrator quasi_static: each step minimizes energy - external work, no inertia",
      {Flag("ramp", Default(QuasiStaticConfig{}.ramp), "gravity scaled by min(1, t / ramp_time) (load stepping)"),
       Number("ramp_time", "the run's duration", kPositive, "s"),
       Number("tolerance", Default(QuasiStaticConfig{}.tolerance), kPositive, "equilibrium: |residual|_2 <= tolerance |f_ext|_2 over the free nodes")}};
  return &table;
}

const KeyTable* XpbdKeys() {
  static const KeyTable table{
      "xpbd", "integrator xpbd: each step cut into substeps of constraint passes",
      {Integer("substeps", Default(XpbdConfig{}.substeps), kPositiveInteger, "n, substeps per step", "Macklin et al. 2019"),
       Integer("iterations", Default(XpbdConfig{}.iterations), kPositiveInteger, "constraint passes per substep", "Macklin et al. 2019, Alg. 1"),
       Number("max_depenetration_speed", Default(XpbdConfig{}.max_depenetration_speed), kPositive,
              "v_max, m/s, the depenetration speed limit of contacts", "Macklin et al. 2019, Sec. 4.2"),
       Choice("order", Default(XpbdConfig{}.order), ChoiceNames(XpbdOrder{}),
              "tet meshes: Gauss-Seidel by color, or Jacobi with averaged corrections", "Macklin et al. 2014, Sec. 4.2")}};
  return &table;
}

const KeyTable* AsyncKeys() {
  static const KeyTable table{
      "async", "FEM, integrator async: asynchronous evolution of a surface layer and the interior",
      {Integer("surface_layers", Default(AsyncConfig{}.surface_layers), kPositiveInteger, "layers of tets from the surface in the semi-implicit region",
               "Schroeder et al. 2010, Sec. 4"),
       Number("epsilon", Default(AsyncConfig{}.epsilon), Range{0.0, 1.0}, "force distribution epsilon P f + (1 - epsilon) f",
              "Schroeder et al. 2010, Sec. 5"),
       Choice("coupling", Default(AsyncConfig{}.coupling), ChoiceNames(AsyncCoupling{}),
              "the interior's step at the frame boundary: one implicit step, or the paper's coupled last substep",
              "Schroeder et al. 2010, Sec. 4.3")}};
  return &table;
}

const KeyTable* SelfContactKeys() {
  static const KeyTable table{
      "self_contact", "FEM: penalty self- and body-body collisions",
      {Flag("enabled", Default(SelfContactConfig{}.enabled), "on or off", "Gast et al. 2015, Sec. 5.3"),
       Number("stiffness", Default(SelfContactConfig{}.stiffness), kPositive, "k in Phi = k d sqrt(d + 1e-15), J/m^3"),
       Flag("line_search_guard", Default(SelfContactConfig{}.line_search_guard), "skip contact detection in a backtracking trial already above E(x_i)",
            "Gast et al. 2015, Sec. 3.3"),
       Number("friction", Default(SelfContactConfig{}.friction), kNonNegative, "Coulomb coefficient mu between a node and its closest primitive",
              "Gast et al. 2015, Sec. 5.3")}};
  return &table;
}

// ============================================================================ output (app)

const KeyTable* OutputKeys() {
  static const KeyTable table{
      "output", "the output folder, frames and checkpoints",
      {Text("directory", "out/<name>", "the output folder, relative to the working directory"),
       Integer("every", Default(OutputConfig{}.every), kPositiveInteger, "write every N-th frame (frame 0 always)"),
       Integer("checkpoint_every_steps", Default(OutputConfig{}.checkpoint_every_steps), kNonNegative, "a checkpoint every N accepted steps (0: not by steps)"),
       Number("checkpoint_every_seconds", Default(OutputConfig{}.checkpoint_every_seconds), kNonNegative, "a checkpoint every T wall-clock seconds (0: not by time)"),
       Integer("checkpoints_kept", Default(OutputConfig{}.checkpoints_kept), kPositiveInteger, "the newest checkpoints kept")}};
  return &table;
}

}  // namespace optistep
