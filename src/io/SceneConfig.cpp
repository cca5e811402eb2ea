// Scene reader: YAML (yaml-cpp) -> SceneConfig, with --set overrides and strict validation.
//
// The parser is built from two pieces so that each schema rule is written once:
//  - Field: one YAML value and its key path ("bodies[0].material.E"); its To() overloads
//    read one value type each and report "expected X, got Y" against that path;
//  - MapView: a map whose keys were checked against the allowed list on construction,
//    with Read (optional key), Require, ExactlyOne and Restrict (keys of one variant);
//    TypedMap builds one whose `type` (or `model`) key picks the variant.
// Every rank parses the same text, so every rank throws the same InputError.
#include "io/SceneConfig.hpp"

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

#include "core/AvailableMemory.hpp"
#include "core/Error.hpp"

namespace optistep {

Vec3 TransformConfig::Apply(const Vec3& x) const {
  constexpr double kPi = 3.14159265358979323846;
  const Eigen::AngleAxisd R(rotate_angle_deg * kPi / 180.0, rotate_axis.normalized());
  return R * scale.cwiseProduct(x) + translate;
}

namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string FormatNumber(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", v);
  return buffer;
}

std::string FormatVec(const Vec3& v) {
  return "[" + FormatNumber(v.x()) + ", " + FormatNumber(v.y()) + ", " + FormatNumber(v.z()) + "]";
}

std::string Join(const Names& items, const std::string& separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

/// What a value is, for "got ..." in messages.
std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence())
    return "a sequence of " + std::to_string(node.size()) + (node.size() == 1 ? " item" : " items");
  return "a map";
}

/// Allowed values of a number: an interval, open or closed at each end. Infinite values
/// are refused unless allow_infinite (and the interval reaches them).
struct Range {
  double lo = -kInf;
  double hi = kInf;
  bool lo_open = false;
  bool hi_open = false;
  bool allow_infinite = false;

  bool Contains(double v) const {
    if (!allow_infinite && !std::isfinite(v)) return false;
    return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
  }

  /// "a positive number", "an integer >= 1", "a number in [0, 0.5)", ...
  std::string Expected(bool integer) const {
    const std::string noun = integer ? "an integer" : "a number";
    if (lo == -kInf && hi == kInf) return noun;
    if (hi == kInf) {
      if (lo == 0.0 && lo_open && !integer) return "a positive number";
      return noun + (lo_open ? " > " : " >= ") + FormatNumber(lo);
    }
    return noun + " in " + (lo_open ? "(" : "[") + FormatNumber(lo) + ", " + FormatNumber(hi) +
           (hi_open ? ")" : "]");
  }
};

const Range kAnyNumber{};
const Range kPositive{0.0, kInf, true};
const Range kNonNegative{0.0, kInf};
const Range kPositiveInteger{1.0, kInf};

/// One YAML value of the scene and its key path.
class Field {
 public:
  Field(const std::string& file, YAML::Node node, std::string path)
      : file_(&file), node_(std::move(node)), path_(std::move(path)) {}

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }

  /// The value of `key` in this map (null or absent counting as the empty map); an absent
  /// key gives an undefined node. Only for values MapView has checked to be maps.
  Field Child(const std::string& key) const {
    const YAML::Node& self = node_;
    // A copy of an undefined node stays undefined, as YAML::Node() would not (it is null).
    return Field(*file_, node_.IsDefined() ? self[key] : node_,
                 path_.empty() ? key : path_ + "." + key);
  }

  /// "file: path: message"
  [[noreturn]] void Error(const std::string& message) const {
    throw InputError(*file_ + ": " + (path_.empty() ? "" : path_ + ": ") + message);
  }
  [[noreturn]] void Expected(const std::string& what) const {
    Error("expected " + what + ", got " + Describe(node_));
  }

  void To(double& out, const Range& range = kAnyNumber) const {
    double v = 0.0;
    if (!node_.IsScalar() || !YAML::convert<double>::decode(node_, v) || !range.Contains(v))
      Expected(range.Expected(false));
    out = v;
  }

  void To(int& out, const Range& range) const {
    int v = 0;
    if (!node_.IsScalar() || !YAML::convert<int>::decode(node_, v) || !range.Contains(v))
      Expected(range.Expected(true));
    out = v;
  }

  void To(bool& out) const {
    if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, out)) Expected("true or false");
  }

  void To(std::string& out) const {
    if (!node_.IsScalar() || node_.Scalar().empty()) Expected("a non-empty string");
    out = node_.Scalar();
  }

  /// A string that must be one of `choices`.
  void To(std::string& out, const Names& choices) const { out = choices[ToChoice(choices)]; }

  /// Index in `choices` of the string value.
  std::size_t ToChoice(const Names& choices) const {
    if (node_.IsScalar()) {
      const auto it = std::find(choices.begin(), choices.end(), node_.Scalar());
      if (it != choices.end()) return static_cast<std::size_t>(it - choices.begin());
    }
    Expected("one of " + Join(choices, ", "));
  }

  /// A sequence of exactly 3 numbers, each in `range`.
  void To(Vec3& out, const Range& range = kAnyNumber) const {
    if (!node_.IsSequence() || node_.size() != 3) Expected("a sequence of 3 numbers");
    const std::vector<Field> items = Items();
    for (int i = 0; i < 3; ++i) items[i].To(out[i], range);
  }

  /// A non-zero 3-vector, normalized.
  void ToDirection(Vec3& out) const {
    Vec3 v;
    To(v);
    if (v.squaredNorm() == 0.0) Error("expected a non-zero vector, got " + FormatVec(v));
    out = v.normalized();
  }

  /// The items of a sequence; absent or null is the empty sequence.
  std::vector<Field> Items() const {
    std::vector<Field> items;
    if (!node_.IsDefined() || node_.IsNull()) return items;
    if (!node_.IsSequence()) Expected("a sequence");
    for (const YAML::Node& item : node_)
      items.emplace_back(*file_, item, path_ + "[" + std::to_string(items.size()) + "]");
    return items;
  }

 private:
  const std::string* file_;
  YAML::Node node_;
  std::string path_;
};

/// A map whose keys are all among `known` (checked on construction); absent or null is
/// the empty map.
class MapView {
 public:
  MapView(Field self, const Names& known) : self_(std::move(self)) {
    const YAML::Node& node = self_.node();
    if (node.IsDefined() && !node.IsNull() && !node.IsMap()) self_.Expected("a map");
    CheckKeys(known, "unknown key (known: " + Join(known, ", ") + ")");
  }

  const Field& self() const { return self_; }
  bool Has(const std::string& key) const { return self_.Child(key).node().IsDefined(); }
  Field Get(const std::string& key) const { return self_.Child(key); }

  Field Require(const std::string& key) const {
    if (!Has(key)) Get(key).Error("required key is missing");
    return Get(key);
  }

  /// Reads an optional key into `out` (left unchanged when absent); true if present.
  template <class T, class... Check>
  bool Read(const std::string& key, T& out, const Check&... check) const {
    if (!Has(key)) return false;
    Get(key).To(out, check...);
    return true;
  }

  /// Index of the one key of `keys` that is present; an error if none or several are.
  std::size_t ExactlyOne(const Names& keys) const {
    Names present;
    for (const std::string& key : keys)
      if (Has(key)) present.push_back(key);
    if (present.size() != 1)
      self_.Error("expected exactly one of " + Join(keys, ", ") + ", got " +
                  (present.empty() ? "none" : Join(present, " and ")));
    return static_cast<std::size_t>(std::find(keys.begin(), keys.end(), present[0]) - keys.begin());
  }

  /// Narrows the allowed keys to those of one variant (`variant`: "for type sphere").
  void Restrict(const Names& allowed, const std::string& variant) const {
    CheckKeys(allowed, "not allowed " + variant + " (allowed: " + Join(allowed, ", ") + ")");
  }

 private:
  void CheckKeys(const Names& allowed, const std::string& message) const {
    const YAML::Node& node = self_.node();
    if (!node.IsDefined() || !node.IsMap()) return;
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar())
        self_.Error("expected string keys, got " + Describe(entry.first));
      const std::string key = entry.first.Scalar();
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) Get(key).Error(message);
      if (!seen.insert(key).second) Get(key).Error("duplicate key");
    }
  }

  Field self_;
};

/// min and max keys of a box, min <= max componentwise (min < max if `solid`: a solid of zero
/// size in some axis, or inside out, is refused, naming the first such axis).
void ReadBox(const MapView& m, Vec3& min, Vec3& max, bool solid = false) {
  m.Require("min").To(min);
  m.Require("max").To(max);
  for (int a = 0; a < 3; ++a)
    if (solid ? min[a] >= max[a] : min[a] > max[a])
      m.self().Error(std::string("expected min ") + (solid ? "<" : "<=") +
                     " max componentwise, got min " + FormatVec(min) + " and max " +
                     FormatVec(max) + " (" + "xyz"[a] + ": " +
                     (min[a] == max[a] ? "zero size" : "inside out") + ")");
}

/// The keys of a round solid, `type` sphere, cylinder or torus, into a ShapeConfig or a
/// CollisionObjectConfig: center and axis (normalized) optional, radius > 0 (sphere,
/// cylinder), 0 < minor_radius < major_radius (torus), half_length > 0 (cylinder;
/// required if `capped`, else optional and possibly infinite).
template <class Solid>
void ReadRoundSolid(const MapView& m, const std::string& type, bool capped, Solid* solid) {
  m.Read("center", solid->center);
  if (m.Has("axis")) m.Get("axis").ToDirection(solid->axis);
  if (type == "torus") {
    m.Require("major_radius").To(solid->major_radius, kPositive);
    m.Require("minor_radius").To(solid->minor_radius, Range{0.0, solid->major_radius, true, true});
    return;
  }
  m.Require("radius").To(solid->radius, kPositive);
  if (type != "cylinder") return;
  if (capped)
    m.Require("half_length").To(solid->half_length, kPositive);
  else
    m.Read("half_length", solid->half_length, Range{0.0, kInf, true, false, true});
}

/// A map whose required key `type_key` picks one of `types`; the map may hold the keys of
/// `common` (which lists type_key) and those of the picked type, type_keys[*type].
MapView TypedMap(const Field& f, const std::string& type_key, const Names& types,
                 const std::vector<Names>& type_keys, Names common, std::size_t* type) {
  Names all_keys = common;
  for (const Names& keys : type_keys)
    for (const std::string& key : keys)
      if (std::find(all_keys.begin(), all_keys.end(), key) == all_keys.end())
        all_keys.push_back(key);
  const MapView m(f, all_keys);
  *type = m.Require(type_key).ToChoice(types);
  common.insert(common.end(), type_keys[*type].begin(), type_keys[*type].end());
  m.Restrict(common, "for " + type_key + " " + types[*type]);
  return m;
}

/// Unless the scene is MPM, an InputError at the first of `keys` present in m.
void MpmOnlyKeys(bool mpm, const MapView& m, const Names& keys) {
  for (const std::string& key : keys)
    if (!mpm && m.Has(key))
      m.Get(key).Error("only MPM scenes (discretization: mpm) take '" + key + "'");
}

template <class T, class ParseItem>
std::vector<T> ParseList(const Field& list, ParseItem parse_item) {
  std::vector<T> out;
  const std::vector<Field> items = list.Items();
  for (std::size_t i = 0; i < items.size(); ++i) out.push_back(parse_item(items[i], i));
  return out;
}

const Names kMaterialModels = {"fixed_corotated", "stable_neo_hookean", "linear"};
const Names kTerminations = {"characteristic_norm", "absolute"};
const Names kForcings = {"gradient", "characteristic_norm", "preconditioned"};
const Names kEmbeddings = {"linear", "quadratic"};
const Names kDiscretizations = {"fem", "mpm", "particles"};
const Names kDotMerges = {"average", "symmetric"};
const Names kDotCoarseSpaces = {"rigid", "none"};
const Names kFrictionModels = {"after_solve", "potential"};
const Names kHessianProjections = {"element", "none"};
const Names kBoundaries = {"sticky", "slip"};
const Names kPlasticityModels = {"none", "snow", "von_mises"};
const std::vector<Names> kPlasticityModelKeys = {
    {}, {"theta_c", "theta_s", "hardening"}, {"yield_stress"}};
// Order of the Kind enums.
const Names kAxes = {"x", "y", "z"};
const Names kEnds = {"min", "max"};
const Names kBodySources = {"mesh", "surface", "shape"};
const Names kShapeTypes = {"box", "sphere", "cylinder", "torus"};
const Names kCollisionTypes = {"half_space", "sphere",  "box",          "cylinder",
                               "torus",      "bowl",    "box_with_hole"};
// Keys of each shape and collision type.
const Names kBoxKeys = {"min", "max"};
const Names kSphereKeys = {"center", "radius"};
const Names kCylinderKeys = {"center", "radius", "axis", "half_length"};
const Names kTorusKeys = {"center", "axis", "major_radius", "minor_radius"};
const std::vector<Names> kShapeTypeKeys = {kBoxKeys, kSphereKeys, kCylinderKeys, kTorusKeys};
const Names kCollisionCommonKeys = {"type", "name", "stiffness", "friction", "damping",
                                    "boundary", "motion", "method"};
const Names kCollisionMethods = {"penalty", "constraint"};
const std::vector<Names> kCollisionTypeKeys = {
    {"point", "normal"}, kSphereKeys, kBoxKeys, kCylinderKeys, kTorusKeys,
    {"center", "axis", "inner_radius", "outer_radius"},
    {"min", "max", "hole_radius", "hole_axis", "hole_center"}};

constexpr double kMpmCnEpsilon = 1e-7;  // HOT (Wang et al. 2020) Sec. 7.1
// HOT's reference code (ImplicitSolver.h, computeDescentStep) replaces the Newton direction
// by the gradient's when |g.d| < 1e-5 |g| |d|. With its loose CG forcing, Gast's 1e-2
// rejects most directions of stiff or contacting MPM scenes, and the fallback crawls.
constexpr double kMpmKappa = 1e-5;
constexpr int kMpmWindow = 8;  // L-BFGS history, HOT (Wang et al. 2020) Sec. 7.1

TimeConfig ParseTime(const Field& f) {
  const MapView m(f, {"dt", "frame_rate", "frame_dt", "frames", "end_time", "max_dt_halvings"});
  TimeConfig time;
  if (m.ExactlyOne({"frame_rate", "frame_dt"}) == 0) {
    double frame_rate = 0.0;
    m.Get("frame_rate").To(frame_rate, kPositive);
    time.frame_dt = 1.0 / frame_rate;
  } else {
    m.Get("frame_dt").To(time.frame_dt, kPositive);
  }
  time.dt = time.frame_dt;
  m.Read("dt", time.dt, kPositive);
  if (m.ExactlyOne({"frames", "end_time"}) == 0) {
    m.Get("frames").To(time.frames, kPositiveInteger);
  } else {
    double end_time = 0.0;
    m.Get("end_time").To(end_time, kPositive);
    // The tolerance keeps 1.1 s of 0.1 s frames at 11 frames, not 12.
    const double frames = std::ceil(end_time / time.frame_dt - 1e-9);
    if (frames > std::numeric_limits<int>::max())
      m.Get("end_time").Error("gives " + FormatNumber(frames) + " frames, too many");
    time.frames = std::max(1, static_cast<int>(frames));
  }
  m.Read("max_dt_halvings", time.max_dt_halvings, Range{0.0, 30.0});
  return time;
}

TransformConfig ParseTransform(const Field& f) {
  const MapView m(f, {"scale", "rotate", "translate"});
  TransformConfig transform;
  if (m.Has("scale")) {
    const Field scale = m.Get("scale");
    if (scale.node().IsSequence()) {
      scale.To(transform.scale, kPositive);
    } else {
      double s = 0.0;
      scale.To(s, kPositive);
      transform.scale.setConstant(s);
    }
  }
  const MapView rotate(m.Get("rotate"), {"axis", "angle_deg"});
  if (m.Has("rotate")) {
    rotate.Require("axis").ToDirection(transform.rotate_axis);
    rotate.Require("angle_deg").To(transform.rotate_angle_deg);
  }
  m.Read("translate", transform.translate);
  return transform;
}

PlasticityConfig ParsePlasticity(const Field& f) {
  std::size_t model = 0;
  const MapView m =
      TypedMap(f, "model", kPlasticityModels, kPlasticityModelKeys, {"model"}, &model);
  PlasticityConfig plasticity;
  plasticity.model = kPlasticityModels[model];
  m.Read("theta_c", plasticity.theta_c, Range{0.0, 1.0, true, true});
  m.Read("theta_s", plasticity.theta_s, kNonNegative);
  m.Read("hardening", plasticity.hardening, kNonNegative);
  if (plasticity.model == "von_mises")
    m.Require("yield_stress").To(plasticity.yield_stress, kPositive);
  return plasticity;
}

MaterialConfig ParseMaterial(const Field& f, bool mpm) {
  const MapView m(f, {"model", "E", "nu", "density", "plasticity"});
  MaterialConfig material;
  m.Read("model", material.model, kMaterialModels);
  m.Require("E").To(material.E, kPositive);
  m.Require("nu").To(material.nu, Range{0.0, 0.5, false, true});
  m.Require("density").To(material.density, kPositive);
  MpmOnlyKeys(mpm, m, {"plasticity"});
  if (m.Has("plasticity")) material.plasticity = ParsePlasticity(m.Get("plasticity"));
  return material;
}

ShapeConfig ParseShape(const Field& f) {
  std::size_t type = 0;
  const MapView m = TypedMap(f, "type", kShapeTypes, kShapeTypeKeys, {"type"}, &type);
  ShapeConfig shape;
  shape.kind = static_cast<ShapeConfig::Kind>(type);
  if (shape.kind == ShapeConfig::Kind::kBox)
    ReadBox(m, shape.box_min, shape.box_max, /*solid=*/true);
  else
    ReadRoundSolid(m, kShapeTypes[type], /*capped=*/true, &shape);
  return shape;
}

/// A name that is one path component: [A-Za-z0-9._-]+, not starting with '.'.
bool IsSafeName(const std::string& name) {
  const auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
  };
  return !name.empty() && name[0] != '.' && std::all_of(name.begin(), name.end(), safe);
}

/// A file path, resolved against the scene's folder unless absolute.
std::string ReadPath(const Field& f, const fs::path& scene_folder) {
  std::string path;
  f.To(path);
  return fs::path(path).is_absolute() ? path : (scene_folder / path).lexically_normal().string();
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
  msg << count << " " << what << " need at least " << bytes / 1e9 << " GB (" << bytes_each
      << " B each), more than the " << available / 1e9 << " GB available on this node (" << source
      << "); expected a smaller count";
  at.Error(msg.str());
}

InitialConditionsConfig ParseInitialConditions(const Field& f, const fs::path& scene_folder,
                                               bool mpm);

BodyConfig ParseBody(const Field& f, std::size_t i, const fs::path& scene_folder, bool mpm) {
  const MapView m(f, {"name", "mesh", "surface", "shape", "transform", "material",
                      "initial_velocity", "initial_conditions", "copies"});
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
    const MapView copies(m.Get("copies"), {"count", "spacing", "jitter", "seed"});
    const Field count = copies.Require("count");
    if (!count.node().IsSequence() || count.node().size() != 3)
      count.Expected("a sequence of 3 integers >= 1");
    const std::vector<Field> items = count.Items();
    for (int a = 0; a < 3; ++a) items[a].To(body.copies.count[a], kPositiveInteger);
    const double n = static_cast<double>(body.copies.count[0]) * body.copies.count[1] * body.copies.count[2];
    if (n > 2147483647.0) count.Error("expected at most 2147483647 copies in all, got " + std::to_string(n));
    // Each copy is a body of the scene (its mesh or sampled particles come on top).
    RefuseBeyondMemory(count, n, static_cast<double>(sizeof(BodyConfig)), "copies");
    copies.Read("spacing", body.copies.spacing);
    copies.Read("jitter", body.copies.jitter, kNonNegative);
    copies.Read("seed", body.copies.seed, kNonNegative);
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

SelectionConfig ParseSelection(const Field& f, const Names& body_names) {
  const MapView m(f, {"box", "axis", "end", "within", "body"});
  SelectionConfig select;
  if (m.Read("body", select.body) &&
      std::find(body_names.begin(), body_names.end(), select.body) == body_names.end())
    m.Get("body").Expected("the name of a body (" + Join(body_names, ", ") + ")");
  if (m.ExactlyOne({"box", "axis"}) == 0) {
    m.Restrict({"box", "body"}, "with box");
    select.kind = SelectionConfig::Kind::kBox;
    ReadBox(MapView(m.Get("box"), {"min", "max"}), select.box_min, select.box_max);
  } else {
    m.Restrict({"axis", "end", "within", "body"}, "with axis");
    select.kind = SelectionConfig::Kind::kAxisEnd;
    select.axis = static_cast<int>(m.Get("axis").ToChoice(kAxes));
    select.end_max = m.Require("end").ToChoice(kEnds) == 1;
    m.Read("within", select.within, Range{0.0, 1.0, true, false});
  }
  return select;
}

MotionSegmentConfig ParseSegment(const Field& f) {
  const MapView m(f, {"translate", "rotate", "start", "end"});
  MotionSegmentConfig segment;
  if (m.ExactlyOne({"translate", "rotate"}) == 0) {
    segment.kind = MotionSegmentConfig::Kind::kTranslate;
    MapView(m.Get("translate"), {"velocity"}).Require("velocity").To(segment.velocity);
  } else {
    segment.kind = MotionSegmentConfig::Kind::kRotate;
    const MapView rotate(m.Get("rotate"), {"axis", "angular_velocity", "center"});
    rotate.Require("axis").ToDirection(segment.axis);
    rotate.Require("angular_velocity").To(segment.angular_velocity);
    segment.has_center = rotate.Read("center", segment.center);
  }
  m.Read("start", segment.start, kNonNegative);
  m.Read("end", segment.end, Range{segment.start, kInf, true, false, true});
  return segment;
}

std::vector<MotionSegmentConfig> ParseMotion(const Field& f) {
  return ParseList<MotionSegmentConfig>(
      f, [](const Field& item, std::size_t) { return ParseSegment(item); });
}

// --- Loads, time functions, initial conditions ----------------------------------------------

const Names kTimeFunctionTypes = {"constant", "ramp", "table"};
const std::vector<Names> kTimeFunctionTypeKeys = {{"value"}, {"start", "end", "from", "to"}, {"points"}};
const Names kLoadTypes = {"point", "traction", "pressure", "body_force"};
const std::vector<Names> kLoadTypeKeys = {
    {"select", "force"}, {"select", "traction"}, {"select", "pressure", "follower"},
    {"acceleration", "body"}};
using TimeFunctions = std::map<std::string, TimeFunctionConfig>;

TimeFunctionConfig ParseTimeFunction(const Field& f, const std::string& name) {
  std::size_t type = 0;
  const MapView m = TypedMap(f, "type", kTimeFunctionTypes, kTimeFunctionTypeKeys, {"type"}, &type);
  TimeFunctionConfig tf;
  tf.kind = static_cast<TimeFunctionConfig::Kind>(type);
  tf.name = name;
  switch (tf.kind) {
    case TimeFunctionConfig::Kind::kConstant:
      m.Require("value").To(tf.value);
      break;
    case TimeFunctionConfig::Kind::kRamp:
      m.Read("start", tf.start, kNonNegative);
      m.Require("end").To(tf.end, Range{tf.start, kInf, true});
      m.Read("from", tf.from);
      m.Read("to", tf.to);
      break;
    case TimeFunctionConfig::Kind::kTable: {
      const Field points = m.Require("points");
      for (const Field& item : points.Items()) {
        if (!item.node().IsSequence() || item.node().size() != 2)
          item.Expected("a pair [t, value]");
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

LoadConfig ParseLoad(const Field& f, std::size_t i, const Names& body_names,
                     const TimeFunctions& named, bool mpm) {
  std::size_t type = 0;
  const MapView m =
      TypedMap(f, "type", kLoadTypes, kLoadTypeKeys, {"type", "name", "time_function"}, &type);
  LoadConfig load;
  load.kind = static_cast<LoadConfig::Kind>(type);
  load.name = "load" + std::to_string(i);
  m.Read("name", load.name);
  if (m.Has("time_function")) load.time_function = ReadTimeFunction(m.Get("time_function"), named);
  if (load.kind != LoadConfig::Kind::kBodyForce)
    load.select = ParseSelection(m.Require("select"), body_names);
  switch (load.kind) {
    case LoadConfig::Kind::kPoint:
      m.Require("force").To(load.force);
      break;
    case LoadConfig::Kind::kTraction:
      m.Require("traction").To(load.traction);
      break;
    case LoadConfig::Kind::kPressure:
      m.Require("pressure").To(load.pressure);
      m.Read("follower", load.follower);
      if (mpm && load.follower)
        (m.Has("follower") ? m.Get("follower") : m.Get("type"))
            .Error("MPM pressures are dead (per rest area): give follower: false");
      break;
    case LoadConfig::Kind::kBodyForce:
      m.Require("acceleration").To(load.acceleration);
      if (m.Read("body", load.body)) {
        if (mpm)
          m.Get("body").Error("MPM body forces act on the grid, on all bodies: leave out 'body'");
        if (std::find(body_names.begin(), body_names.end(), load.body) == body_names.end())
          m.Get("body").Expected("the name of a body (" + Join(body_names, ", ") + ")");
      }
      break;
  }
  return load;
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

InitialConditionsConfig ParseInitialConditions(const Field& f, const fs::path& scene_folder,
                                               bool mpm) {
  const MapView m(f, {"angular_velocity", "velocity_expression", "velocity_table", "prestrain"});
  InitialConditionsConfig ic;
  if (m.Has("angular_velocity")) {
    const MapView w(m.Get("angular_velocity"), {"axis", "rate", "center"});
    ic.has_angular_velocity = true;
    w.Require("axis").ToDirection(ic.axis);
    w.Require("rate").To(ic.angular_velocity);
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
    const MapView p(m.Get("prestrain"), {"scale", "deformation_gradient", "center"});
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

// --------------------------------------------------------------------------------------------

BoundaryConditionConfig ParseBoundaryCondition(const Field& f, std::size_t i,
                                               const Names& body_names) {
  const MapView m(f, {"name", "select", "motion"});
  BoundaryConditionConfig bc;
  bc.name = "bc" + std::to_string(i);
  m.Read("name", bc.name);
  bc.select = ParseSelection(m.Require("select"), body_names);
  bc.motion = ParseMotion(m.Get("motion"));
  return bc;
}

/// A collision object; `integrator` is the scene's (FEM objects move only with the
/// integrators that pose them at each step's end: backward_euler, quasi_static).
CollisionObjectConfig ParseCollisionObject(const Field& f, bool mpm, const std::string& integrator) {
  std::size_t type = 0;
  const MapView m =
      TypedMap(f, "type", kCollisionTypes, kCollisionTypeKeys, kCollisionCommonKeys, &type);
  CollisionObjectConfig object;
  object.kind = static_cast<CollisionObjectConfig::Kind>(type);
  using Kind = CollisionObjectConfig::Kind;
  if (!mpm && m.Has("motion") && integrator != "backward_euler" && integrator != "quasi_static")
    m.Get("motion").Error("FEM collision objects move only with integrator backward_euler or "
                          "quasi_static, not '" + integrator + "'");

  m.Read("name", object.name);
  m.Read("stiffness", object.stiffness, kPositive);
  m.Read("friction", object.friction, kNonNegative);
  if (mpm && m.Has("damping"))
    m.Get("damping").Error("only FEM scenes take 'damping' (the MPM grid's projection has no "
                           "contact spring to damp)");
  m.Read("damping", object.damping, kNonNegative);
  m.Read("boundary", object.boundary, kBoundaries);
  if (mpm && m.Has("method"))
    m.Get("method").Error("only FEM scenes (discretization: fem) take 'method' (MPM grid nodes are "
                          "projected at objects as 'boundary' says)");
  m.Read("method", object.method, kCollisionMethods);
  object.motion = ParseMotion(m.Get("motion"));
  // The dashpot acts on a node's own normal displacement over the step, which is the
  // relative one only against a static object; a projected (constraint) node has no spring.
  if (object.damping > 0.0 && !object.motion.empty())
    m.Get("damping").Error("needs a static object: this one has 'motion' (leave damping out)");
  if (object.damping > 0.0 && object.method == "constraint")
    m.Get("damping").Error("damps the penalty contact spring: method: constraint has none "
                           "(leave damping out)");
  switch (object.kind) {
    case Kind::kHalfSpace:
      m.Read("point", object.point);
      m.Require("normal").ToDirection(object.normal);
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
      if (m.Has("axis")) m.Get("axis").ToDirection(object.axis);
      m.Require("outer_radius").To(object.outer_radius, kPositive);
      m.Require("inner_radius").To(object.inner_radius, Range{0.0, object.outer_radius, true, true});
      break;
    case Kind::kBoxWithHole: {
      ReadBox(m, object.box_min, object.box_max, /*solid=*/true);
      const std::size_t axis = m.Has("hole_axis") ? m.Get("hole_axis").ToChoice(kAxes) : 1;
      object.axis = Vec3::Unit(static_cast<int>(axis));
      object.center = 0.5 * (object.box_min + object.box_max);
      m.Read("hole_center", object.center);
      m.Require("hole_radius").To(object.hole_radius, kPositive);
      for (std::size_t a = 0; a < 3; ++a)  // the hole must leave a wall on every side
        if (a != axis && (object.center[a] - object.hole_radius <= object.box_min[a] ||
                          object.center[a] + object.hole_radius >= object.box_max[a]))
          m.Get("hole_radius").Error("the hole of radius " + FormatNumber(object.hole_radius) +
                                     " about " + FormatVec(object.center) + " along " +
                                     kAxes[axis] + " does not fit inside the box's " + kAxes[a] +
                                     " extent [" + FormatNumber(object.box_min[a]) + ", " +
                                     FormatNumber(object.box_max[a]) + "]");
      break;
    }
  }
  return object;
}

MpmConfig ParseMpm(const Field& f) {
  const MapView m(f, {"dx", "ppc", "cfl", "flip", "repartition_threshold", "seed", "matrix_free"});
  MpmConfig mpm;
  m.Require("dx").To(mpm.dx, kPositive);
  m.Read("ppc", mpm.ppc, kPositiveInteger);
  m.Read("cfl", mpm.cfl, Range{0.0, 1.0, true, false});
  m.Read("flip", mpm.flip, Range{0.0, 1.0});
  m.Read("repartition_threshold", mpm.repartition_threshold, Range{1.0, kInf, true});
  m.Read("seed", mpm.seed, kNonNegative);
  m.Read("matrix_free", mpm.matrix_free);
  return mpm;
}

SolverConfig ParseSolver(const Field& f, bool mpm) {
  const MapView m(f, {"method", "termination", "cn_epsilon", "rigid_epsilon", "tau",
                      "max_iterations", "kappa",
                      "step_clamp", "forcing_sigma", "forcing", "best_of_two_guesses", "window",
                      "initializer", "mg_levels", "mg_embedding", "hessian_projection"});
  SolverConfig solver;
  if (mpm) {
    solver.cn_epsilon = kMpmCnEpsilon;
    solver.kappa = kMpmKappa;
    solver.window = kMpmWindow;
  }
  // The minimizer factory checks the names (solvers/MinimizerFactory.hpp).
  m.Read("method", solver.method);
  m.Read("termination", solver.termination, kTerminations);
  m.Read("cn_epsilon", solver.cn_epsilon, kPositive);
  m.Read("rigid_epsilon", solver.rigid_epsilon, kPositive);
  m.Read("tau", solver.tau, kPositive);
  m.Read("max_iterations", solver.max_iterations, kPositiveInteger);
  m.Read("kappa", solver.kappa, Range{0.0, 1.0, true, true});
  m.Read("step_clamp", solver.step_clamp, kPositive);
  m.Read("forcing_sigma", solver.forcing_sigma, kPositive);
  m.Read("forcing", solver.forcing, kForcings);
  if (solver.forcing.empty())
    solver.forcing = mpm ? "preconditioned"
                         : solver.termination == "absolute" ? "gradient" : "characteristic_norm";
  m.Read("best_of_two_guesses", solver.best_of_two_guesses);
  m.Read("window", solver.window, kPositiveInteger);
  m.Read("initializer", solver.initializer);
  m.Read("mg_levels", solver.mg_levels, kPositiveInteger);
  m.Read("mg_embedding", solver.mg_embedding, kEmbeddings);
  if (mpm && m.Has("hessian_projection"))
    m.Get("hessian_projection").Error("only FEM scenes (discretization: fem) take 'hessian_projection'");
  m.Read("hessian_projection", solver.hessian_projection, kHessianProjections);
  return solver;
}

/// chains[i] (discretization: particles): a polyline of particles, see ChainConfig.
ChainConfig ParseChain(const Field& f, std::size_t i) {
  const MapView m(f, {"name", "points", "start", "step", "count", "mass", "masses", "pinned",
                      "compliance", "initial_velocity"});
  ChainConfig chain;
  chain.name = "chain" + std::to_string(i);
  m.Read("name", chain.name);
  if (m.ExactlyOne({"points", "start"}) == 0) {
    m.Restrict({"name", "points", "mass", "masses", "pinned", "compliance", "initial_velocity"},
               "with points");
    const std::vector<Field> items = m.Get("points").Items();
    if (items.size() < 2) m.Get("points").Expected("a sequence of at least 2 points");
    for (std::size_t k = 0; k < items.size(); ++k) {
      items[k].To(chain.points.emplace_back());
      if (k > 0 && chain.points[k] == chain.points[k - 1])
        items[k].Error("zero-length edge: the same position as points[" + std::to_string(k - 1) +
                       "], " + FormatVec(chain.points[k]));
    }
  } else {
    Vec3 start, step;
    int count = 0;
    m.Require("start").To(start);
    m.Require("step").To(step);
    m.Require("count").To(count, Range{2.0, kInf});
    // Its positions, velocities, previous positions and inverse masses at least.
    RefuseBeyondMemory(m.Require("count"), count, 10.0 * sizeof(double), "chain particles");
    if (step.squaredNorm() == 0.0) m.Get("step").Error("zero-length edge: expected a non-zero step");
    for (int k = 0; k < count; ++k) chain.points.push_back(start + k * step);
  }
  const int n = static_cast<int>(chain.points.size());
  const Range index{0.0, static_cast<double>(n - 1)};
  m.Require("mass").To(chain.mass, kPositive);
  for (const Field& item : m.Get("masses").Items()) {
    const MapView override_mass(item, {"index", "mass"});
    auto& [particle, mass] = chain.masses.emplace_back();
    override_mass.Require("index").To(particle, index);
    override_mass.Require("mass").To(mass, kPositive);
  }
  for (const Field& item : m.Get("pinned").Items()) item.To(chain.pinned.emplace_back(), index);
  m.Read("compliance", chain.compliance, kNonNegative);
  m.Read("initial_velocity", chain.initial_velocity);
  return chain;
}

/// cloths[i] (discretization: particles): a triangle surface's edges, see ClothConfig.
ClothConfig ParseCloth(const Field& f, std::size_t i, const fs::path& scene_folder) {
  const MapView m(f, {"name", "mesh", "transform", "mass", "pinned", "compliance", "initial_velocity",
                      "bending_compliance"});
  ClothConfig cloth;
  cloth.name = "cloth" + std::to_string(i);
  m.Read("name", cloth.name);
  cloth.mesh = ReadPath(m.Require("mesh"), scene_folder);
  cloth.transform = ParseTransform(m.Get("transform"));
  m.Require("mass").To(cloth.mass, kPositive);
  for (const Field& item : m.Get("pinned").Items())
    item.To(cloth.pinned.emplace_back(), Range{0.0, kInf});
  m.Read("compliance", cloth.compliance, kNonNegative);
  m.Read("initial_velocity", cloth.initial_velocity);
  cloth.bending = m.Read("bending_compliance", cloth.bending_compliance, kNonNegative);
  return cloth;
}

/// The top-level `dot` block (FEM only): DOT's subdomains (Li et al. 2019).
DotConfig ParseDot(const Field& f) {
  const MapView m(f, {"subdomains_per_rank", "subdomain_nodes", "merge", "coarse"});
  DotConfig dot;
  m.Read("subdomains_per_rank", dot.subdomains_per_rank, kPositiveInteger);
  m.Read("subdomain_nodes", dot.subdomain_nodes, kPositiveInteger);
  m.Read("merge", dot.merge, kDotMerges);
  m.Read("coarse", dot.coarse, kDotCoarseSpaces);
  return dot;
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
  const MapView m(root, {"name", "gravity", "integrator", "discretization", "mpm", "time",
                         "bodies", "boundary_conditions", "collision_objects", "solver",
                         "dot", "damping", "friction", "quasi_static", "xpbd", "chains", "cloths",
                         "async", "self_contact", "output", "petsc_options", "time_functions",
                         "loads", "gravity_time_function"});
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
  // The integrator factory checks the name (integrators/IntegratorFactory.hpp).
  m.Read("integrator", scene.integrator);
  m.Read("discretization", scene.discretization, kDiscretizations);
  const bool mpm = scene.discretization == "mpm";
  MpmOnlyKeys(mpm, m, {"mpm"});
  if (mpm) scene.mpm = ParseMpm(m.Require("mpm"));
  scene.time = ParseTime(m.Require("time"));

  const fs::path scene_folder = fs::path(path).parent_path();
  // Particle scenes hold chains, cloths and collision objects; the others bodies.
  const bool particles = scene.discretization == "particles";
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
      [&](const Field& item, std::size_t) { return ParseCollisionObject(item, mpm, scene.integrator); });
  const TimeFunctions time_functions = ParseTimeFunctions(m.Get("time_functions"));
  scene.loads = ParseList<LoadConfig>(m.Get("loads"), [&](const Field& item, std::size_t i) {
    return ParseLoad(item, i, body_names, time_functions, mpm);
  });
  if (m.Has("gravity_time_function"))
    scene.gravity_time_function = ReadTimeFunction(m.Get("gravity_time_function"), time_functions);
  scene.solver = ParseSolver(m.Get("solver"), mpm);
  // DOT's subdomains are sets of tets: an MPM grid has none.
  if (mpm && m.Has("dot")) m.Get("dot").Error("only FEM scenes (discretization: fem) take 'dot'");
  if (mpm && scene.solver.method == "dot")
    m.Get("solver").Child("method").Error("'dot' needs a tet mesh: only FEM scenes (discretization: fem) take it");
  scene.solver.dot = ParseDot(m.Get("dot"));
  scene.solver.scene_path = path;
  MapView(m.Get("damping"), {"stiffness_beta"})
      .Read("stiffness_beta", scene.damping.stiffness_beta, kNonNegative);
  const MapView friction(m.Get("friction"), {"model", "epsilon_v", "lagged_updates"});
  friction.Read("model", scene.friction.model, kFrictionModels);
  friction.Read("epsilon_v", scene.friction.epsilon_v, kPositive);
  friction.Read("lagged_updates", scene.friction.lagged_updates, kPositiveInteger);
  const MapView quasi_static(m.Get("quasi_static"), {"ramp", "ramp_time", "tolerance"});
  quasi_static.Read("ramp", scene.quasi_static.ramp);
  quasi_static.Read("ramp_time", scene.quasi_static.ramp_time, kPositive);
  quasi_static.Read("tolerance", scene.quasi_static.tolerance, kPositive);
  const MapView xpbd(m.Get("xpbd"),
                     {"substeps", "iterations", "max_depenetration_speed", "order"});
  xpbd.Read("substeps", scene.xpbd.substeps, kPositiveInteger);
  xpbd.Read("iterations", scene.xpbd.iterations, kPositiveInteger);
  xpbd.Read("max_depenetration_speed", scene.xpbd.max_depenetration_speed, kPositive);
  xpbd.Read("order", scene.xpbd.order, Names{"coloring", "jacobi"});
  if (particles && xpbd.Has("order"))
    xpbd.Get("order").Error("only for tet meshes: particle scenes step their constraints by color");
  if (mpm && m.Has("async")) m.Get("async").Error("only FEM scenes (discretization: fem) take 'async'");
  const MapView async(m.Get("async"), {"surface_layers", "epsilon", "coupling"});
  async.Read("surface_layers", scene.async.surface_layers, kPositiveInteger);
  async.Read("epsilon", scene.async.epsilon, Range{0.0, 1.0});
  async.Read("coupling", scene.async.coupling, Names{"frame", "paper"});
  if (mpm && m.Has("self_contact"))
    m.Get("self_contact").Error("only FEM scenes (discretization: fem) take 'self_contact'");
  const MapView self_contact(m.Get("self_contact"),
                             {"enabled", "stiffness", "line_search_guard", "friction"});
  self_contact.Read("enabled", scene.self_contact.enabled);
  self_contact.Read("stiffness", scene.self_contact.stiffness, kPositive);
  self_contact.Read("line_search_guard", scene.self_contact.line_search_guard);
  self_contact.Read("friction", scene.self_contact.friction, kNonNegative);
  // Constraint collisions (fem/ConstraintCollisions.hpp) live in backward Euler's
  // minimization, whose Hessian pattern they keep; self-contact adds nonzeros outside it.
  for (std::size_t i = 0; i < scene.collision_objects.size(); ++i) {
    if (scene.collision_objects[i].method != "constraint") continue;
    const Field method = m.Get("collision_objects").Items()[i].Child("method");
    if (scene.integrator != "backward_euler")
      method.Error("'constraint' needs integrator: backward_euler (got '" + scene.integrator + "')");
    if (scene.self_contact.enabled)
      method.Error("'constraint' cannot be combined with self_contact.enabled: true (use 'penalty')");
  }
  const MapView output(m.Get("output"), {"directory", "every", "checkpoint_every_steps",
                                         "checkpoint_every_seconds", "checkpoints_kept"});
  scene.output.directory = "out/" + scene.name;
  output.Read("directory", scene.output.directory);
  output.Read("every", scene.output.every, kPositiveInteger);
  output.Read("checkpoint_every_steps", scene.output.checkpoint_every_steps, kNonNegative);
  output.Read("checkpoint_every_seconds", scene.output.checkpoint_every_seconds, kNonNegative);
  output.Read("checkpoints_kept", scene.output.checkpoints_kept, kPositiveInteger);
  scene.petsc_options = ParsePetscOptions(m.Get("petsc_options"));
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
