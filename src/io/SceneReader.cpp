#include "io/SceneReader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "core/Error.hpp"

namespace optistep {

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence())
    return "a sequence of " + std::to_string(node.size()) + (node.size() == 1 ? " item" : " items");
  return "a map";
}

// --- Field ----------------------------------------------------------------------------------

Field Field::Child(const std::string& key) const {
  const YAML::Node& self = node_;
  // A copy of an undefined node stays undefined, as YAML::Node() would not (it is null).
  return Field(*file_, node_.IsDefined() ? self[key] : node_, path_.empty() ? key : path_ + "." + key);
}

void Field::Error(const std::string& message) const {
  throw InputError(*file_ + ": " + (path_.empty() ? "" : path_ + ": ") + message);
}

void Field::Expected(const std::string& what) const {
  Error("expected " + what + ", got " + Describe(node_));
}

void Field::To(double& out, const Range& range) const {
  double v = 0.0;
  if (!node_.IsScalar() || !YAML::convert<double>::decode(node_, v) || !range.Contains(v))
    Expected(range.Expected(false));
  out = v;
}

void Field::To(int& out, const Range& range) const {
  int v = 0;
  if (!node_.IsScalar() || !YAML::convert<int>::decode(node_, v) || !range.Contains(v))
    Expected(range.Expected(true));
  out = v;
}

void Field::To(bool& out) const {
  if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, out)) Expected("true or false");
}

void Field::To(std::string& out) const {
  if (!node_.IsScalar() || node_.Scalar().empty()) Expected("a non-empty string");
  out = node_.Scalar();
}

std::size_t Field::ToChoice(const Names& choices) const {
  if (node_.IsScalar()) {
    const auto it = std::find(choices.begin(), choices.end(), node_.Scalar());
    if (it != choices.end()) return static_cast<std::size_t>(it - choices.begin());
  }
  Expected("one of " + Join(choices, ", "));
}

void Field::To(Vec3& out, const Range& range) const {
  if (!node_.IsSequence() || node_.size() != 3) Expected("a sequence of 3 numbers");
  const std::vector<Field> items = Items();
  for (int i = 0; i < 3; ++i) items[i].To(out[i], range);
}

void Field::ToDirection(Vec3& out) const {
  Vec3 v;
  To(v);
  if (v.squaredNorm() == 0.0) Error("expected a non-zero vector, got " + FormatVec(v));
  out = v.normalized();
}

std::vector<Field> Field::Items() const {
  std::vector<Field> items;
  if (!node_.IsDefined() || node_.IsNull()) return items;
  if (!node_.IsSequence()) Expected("a sequence");
  for (const YAML::Node& item : node_)
    items.emplace_back(*file_, item, path_ + "[" + std::to_string(items.size()) + "]");
  return items;
}

// --- MapView --------------------------------------------------------------------------------

MapView::MapView(Field self, const KeyTable& table) : self_(std::move(self)), table_(&table) {
  const YAML::Node& node = self_.node();
  if (node.IsDefined() && !node.IsNull() && !node.IsMap()) self_.Expected("a map");
  const Names known = table.KeyNames();
  CheckKeys(known, "unknown key (known: " + Join(known, ", ") + ")");
}

Field MapView::Require(const std::string& key) const {
  if (!Has(key)) Get(key).Error("required key is missing");
  return Get(key);
}

std::size_t MapView::ExactlyOne(const Names& keys) const {
  Names present;
  for (const std::string& key : keys)
    if (Has(key)) present.push_back(key);
  if (present.size() != 1)
    self_.Error("expected exactly one of " + Join(keys, ", ") + ", got " +
                (present.empty() ? "none" : Join(present, " and ")));
  return static_cast<std::size_t>(std::find(keys.begin(), keys.end(), present[0]) - keys.begin());
}

void MapView::RestrictTo(const std::string& variant, const std::string& label) const {
  const Names allowed = table_->VariantKeys(variant);
  CheckKeys(allowed, "not allowed " + label + " (allowed: " + Join(allowed, ", ") + ")");
}

void MapView::CheckKeys(const Names& allowed, const std::string& message) const {
  const YAML::Node& node = self_.node();
  if (!node.IsDefined() || !node.IsMap()) return;
  std::set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) self_.Error("expected string keys, got " + Describe(entry.first));
    const std::string key = entry.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) Get(key).Error(message);
    if (!seen.insert(key).second) Get(key).Error("duplicate key");
  }
}

void MapView::ReadAsDeclared(const Key& key, const Field& f, double& out) { f.To(out, key.range); }
void MapView::ReadAsDeclared(const Key& key, const Field& f, int& out) { f.To(out, key.range); }
void MapView::ReadAsDeclared(const Key&, const Field& f, bool& out) { f.To(out); }

void MapView::ReadAsDeclared(const Key& key, const Field& f, std::string& out) {
  if (key.kind == Key::Kind::kChoice)
    f.To(out, key.choices);
  else
    f.To(out);
}

void MapView::ReadAsDeclared(const Key& key, const Field& f, Vec3& out) {
  if (key.kind == Key::Kind::kDirection)
    f.ToDirection(out);
  else
    f.To(out, key.range);
}

MapView TypedMap(const Field& f, const KeyTable& table, const std::string& type_key,
                 std::size_t* variant) {
  const MapView m(f, table);
  const Names& types = table.Find(type_key).choices;
  *variant = m.Require(type_key).ToChoice(types);
  m.RestrictTo(types[*variant], "for " + type_key + " " + types[*variant]);
  return m;
}

// --- Shared readers -------------------------------------------------------------------------

void ReadBox(const MapView& m, Vec3& min, Vec3& max, bool solid) {
  m.Require("min").To(min);
  m.Require("max").To(max);
  for (int a = 0; a < 3; ++a)
    if (solid ? min[a] >= max[a] : min[a] > max[a])
      m.self().Error(std::string("expected min ") + (solid ? "<" : "<=") +
                     " max componentwise, got min " + FormatVec(min) + " and max " +
                     FormatVec(max) + " (" + "xyz"[a] + ": " +
                     (min[a] == max[a] ? "zero size" : "inside out") + ")");
}

void MpmOnlyKeys(bool mpm, const MapView& m, const Names& keys) {
  for (const std::string& key : keys)
    if (!mpm && m.Has(key)) m.Get(key).Error("only MPM scenes (discretization: mpm) take '" + key + "'");
}

std::string ReadPath(const Field& f, const std::string& scene_folder) {
  namespace fs = std::filesystem;
  std::string path;
  f.To(path);
  return fs::path(path).is_absolute() ? path
                                      : (fs::path(scene_folder) / path).lexically_normal().string();
}

bool IsSafeName(const std::string& name) {
  const auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  };
  return !name.empty() && name[0] != '.' && std::all_of(name.begin(), name.end(), safe);
}

// --- transform ------------------------------------------------------------------------------

namespace {
const KeyTable* RotateKeys() {
  static const KeyTable table{"rotate", "a rotation about an axis through the origin",
                              {Direction("axis", "required", "the rotation axis (right-handed)"),
                               Number("angle_deg", "required", kAnyNumber, "the angle, degrees")}};
  return &table;
}
}  // namespace

const KeyTable* TransformKeys() {
  static const KeyTable table{
      "transform",
      "rigid placement x -> R (s .* x) + t: scaled, then rotated, then translated (m)",
      {Other("scale", "number or [x, y, z]", "1", "> 0", "s: a uniform or per-axis scale"),
       Other("rotate", "map", "", "", "R: axis and angle_deg").Sub(RotateKeys),
       Vector("translate", "[0, 0, 0]", "t, m")}};
  return &table;
}

TransformConfig ParseTransform(const Field& f) {
  const MapView m(f, *TransformKeys());
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
  const MapView rotate(m.Get("rotate"), *RotateKeys());
  if (m.Has("rotate")) {
    rotate.ReadRequired("axis", transform.rotate_axis);
    rotate.ReadRequired("angle_deg", transform.rotate_angle_deg);
  }
  m.Read("translate", transform.translate);
  return transform;
}

}  // namespace optistep
