#pragma once
// The toolkit every scene-section parser is written with (yaml-cpp underneath), on the
// key tables of io/SceneKeys.hpp:
//
//  - Field: one YAML value and its key path ("bodies[0].material.E"); its To() overloads
//    read one value type each and report "expected X, got Y" against that path;
//  - MapView: a map whose keys were checked against its table on construction, with Read
//    (optional key), Require, ExactlyOne and RestrictTo (the keys of one variant);
//    its Read takes a key's range, choices or direction from the table; TypedMap builds
//    one whose `type` (or `model`) key picks the variant.
//
// Errors are InputErrors of one line, "file: key.path: message". Every rank parses the
// same text, so every rank throws the same InputError.
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/Types.hpp"
#include "io/SceneChoices.hpp"
#include "io/SceneKeys.hpp"

namespace optistep {

/// A default as `optistep keys` prints it, from the config struct's own initializer, so
/// that the struct stays the one source of every default.
inline std::string Default(double v) { return std::isinf(v) ? ".inf" : FormatNumber(v); }
inline std::string Default(int v) { return std::to_string(v); }
inline std::string Default(bool v) { return v ? "true" : "false"; }
inline std::string Default(const Vec3& v) { return FormatVec(v); }
inline std::string Default(const std::string& v) { return v; }
std::string Default(const char*) = delete;
template <class Choice, std::enable_if_t<std::is_enum_v<Choice>, int> = 0>
std::string Default(Choice v) { return ToString(v); }

/// What a YAML value is, for "got ..." in messages: 'text', nothing, a map, ...
std::string Describe(const YAML::Node& node);

/// One YAML value of the scene and its key path.
class Field {
 public:
  Field(const std::string& file, YAML::Node node, std::string path)
      : file_(&file), node_(std::move(node)), path_(std::move(path)) {}

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }

  /// The value of `key` in this map (null or absent counting as the empty map); an absent
  /// key gives an undefined node. Only for values MapView has checked to be maps.
  Field Child(const std::string& key) const;

  /// "file: path: message"
  [[noreturn]] void Error(const std::string& message) const;
  [[noreturn]] void Expected(const std::string& what) const;

  void To(double& out, const Range& range = kAnyNumber) const;
  void To(int& out, const Range& range) const;
  void To(bool& out) const;
  void To(std::string& out) const;
  /// A string that must be one of `choices`.
  void To(std::string& out, const Names& choices) const { out = choices[ToChoice(choices)]; }
  /// Index in `choices` of the string value.
  std::size_t ToChoice(const Names& choices) const;
  /// A sequence of exactly 3 numbers, each in `range`.
  void To(Vec3& out, const Range& range = kAnyNumber) const;
  /// A non-zero 3-vector, normalized.
  void ToDirection(Vec3& out) const;
  /// The items of a sequence; absent or null is the empty sequence.
  std::vector<Field> Items() const;

 private:
  const std::string* file_;
  YAML::Node node_;
  std::string path_;
};

/// A map whose keys are all among its table's (checked on construction); absent or null
/// is the empty map.
class MapView {
 public:
  MapView(Field self, const KeyTable& table);

  const Field& self() const { return self_; }
  const KeyTable& table() const { return *table_; }
  bool Has(const std::string& key) const { return self_.Child(key).node().IsDefined(); }
  Field Get(const std::string& key) const { return self_.Child(key); }
  Field Require(const std::string& key) const;

  /// Reads an optional key into `out` (left unchanged when absent) as its table entry
  /// says (range, choices, direction); true if present.
  template <class T>
  bool Read(const std::string& key, T& out) const {
    if (!Has(key)) return false;
    ReadAsDeclared(table_->Find(key), Get(key), out);
    return true;
  }
  /// Reads an optional key with the parser's own check (a range that depends on another
  /// key, say); true if present.
  template <class T, class Check, class... More>
  bool Read(const std::string& key, T& out, const Check& check, const More&... more) const {
    if (!Has(key)) return false;
    Get(key).To(out, check, more...);
    return true;
  }
  /// Require(key), read as its table entry says.
  template <class T>
  void ReadRequired(const std::string& key, T& out) const {
    ReadAsDeclared(table_->Find(key), Require(key), out);
  }

  /// Index of the one key of `keys` that is present; an error if none or several are.
  std::size_t ExactlyOne(const Names& keys) const;
  /// Narrows the allowed keys to those of one variant (KeyTable::VariantKeys); `label`
  /// names it in the message ("for type sphere", "with box").
  void RestrictTo(const std::string& variant, const std::string& label) const;

 private:
  void CheckKeys(const Names& allowed, const std::string& message) const;
  static void ReadAsDeclared(const Key& key, const Field& f, double& out);
  static void ReadAsDeclared(const Key& key, const Field& f, int& out);
  static void ReadAsDeclared(const Key& key, const Field& f, bool& out);
  static void ReadAsDeclared(const Key& key, const Field& f, std::string& out);
  static void ReadAsDeclared(const Key& key, const Field& f, Vec3& out);
  /// A closed choice (io/SceneChoices.hpp): the value of the name, one of ChoiceNames.
  template <class Choice, std::enable_if_t<std::is_enum_v<Choice>, int> = 0>
  static void ReadAsDeclared(const Key&, const Field& f, Choice& out) {
    out = static_cast<Choice>(f.ToChoice(ChoiceNames(Choice{})));
  }

  Field self_;
  const KeyTable* table_;
};

/// A map whose required key `type_key` picks one of that key's choices (the variant); the
/// map may hold the keys of the table that the variant takes. *variant is the choice's index.
MapView TypedMap(const Field& f, const KeyTable& table, const std::string& type_key,
                 std::size_t* variant);

/// min and max keys of a box, min <= max componentwise (min < max if `solid`: a solid of zero
/// size in some axis, or inside out, is refused, naming the first such axis).
void ReadBox(const MapView& m, Vec3& min, Vec3& max, bool solid = false);

/// Unless the scene is MPM, an InputError at the first of `keys` present in m.
void MpmOnlyKeys(bool mpm, const MapView& m, const Names& keys);

/// A file path, resolved against the scene's folder unless absolute.
std::string ReadPath(const Field& f, const std::string& scene_folder);

/// A name that is one path component: [A-Za-z0-9._-]+, not starting with '.'.
bool IsSafeName(const std::string& name);

/// The items of a sequence, each parsed by parse_item(item, index).
template <class T, class ParseItem>
std::vector<T> ParseList(const Field& list, ParseItem parse_item) {
  std::vector<T> out;
  const std::vector<Field> items = list.Items();
  for (std::size_t i = 0; i < items.size(); ++i) out.push_back(parse_item(items[i], i));
  return out;
}


}  // namespace optistep
