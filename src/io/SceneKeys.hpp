#pragma once
// Scene keys declared as data: each section's parser lists its keys in a KeyTable (name,
// type, default, allowed values, one line of meaning, the paper it comes from), which its
// MapView checks the YAML against (io/SceneReader.hpp) and `optistep keys` prints
// (io/SceneSchema.hpp). No yaml-cpp here: section headers include this one, parsers (.cpp) include SceneReader.hpp.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "core/Types.hpp"

namespace optistep {

class Field;

using Names = std::vector<std::string>;

/// "%g" of v, as messages and `optistep keys` print numbers.
std::string FormatNumber(double v);
/// "[x, y, z]" with FormatNumber.
std::string FormatVec(const Vec3& v);
std::string Join(const Names& items, const std::string& separator);

/// Allowed values of a number: an interval, open or closed at each end. Infinite values
/// are refused unless allow_infinite (and the interval reaches them).
struct Range {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;
  bool hi_open = false;
  bool allow_infinite = false;

  bool Contains(double v) const;
  /// "a positive number", "an integer >= 1", "a number in [0, 0.5)", ...
  std::string Expected(bool integer) const;
  /// The same for `optistep keys`: "> 0", ">= 1", "[0, 0.5)"; "" for any number.
  std::string Text() const;
};

inline const Range kAnyNumber{};
inline const Range kPositive{0.0, std::numeric_limits<double>::infinity(), true};
inline const Range kNonNegative{0.0, std::numeric_limits<double>::infinity()};
inline const Range kPositiveInteger{1.0, std::numeric_limits<double>::infinity()};

struct KeyTable;

/// One key of a scene section, as the parser reads it and `optistep keys` prints it.
struct Key {
  /// How MapView::Read reads the value when the parser gives no check of its own.
  enum class Kind { kNumber, kInteger, kFlag, kString, kChoice, kVector, kDirection, kOther };
  std::string name;
  Kind kind = Kind::kOther;
  std::string type;           ///< printed: number, integer, true|false, string, choice, [x, y, z], ...
  std::string default_value;  ///< printed; "required" when it must be given, "" when none
  Range range;                ///< kNumber, kInteger, kVector (each component)
  Names choices;              ///< kChoice
  std::string allowed;        ///< printed allowed values; from range or choices unless set
  std::string meaning;        ///< one line
  std::string source;         ///< the paper (and section) a default or the method comes from
  Names variants;             ///< the variants (types, models, forms) that take it; empty: all
  /// The table of the map (or of each item of the sequence) this key holds, if any.
  const KeyTable* (*sub)() = nullptr;

  /// Only in these variants (a TypedMap's types, or RestrictTo's variants).
  Key For(Names only) const;
  /// The map or sequence items this key holds are read with `table`.
  Key Sub(const KeyTable* (*table)()) const;
  /// Replaces the printed allowed values (when the parser checks more than the range says).
  Key Allowing(std::string text) const;
};

Key Number(std::string name, std::string default_value, Range range, std::string meaning,
           std::string source = "");
Key Integer(std::string name, std::string default_value, Range range, std::string meaning,
            std::string source = "");
Key Flag(std::string name, std::string default_value, std::string meaning, std::string source = "");
Key Text(std::string name, std::string default_value, std::string meaning);
Key Vector(std::string name, std::string default_value, std::string meaning, Range range = kAnyNumber);
Key Direction(std::string name, std::string default_value, std::string meaning);
Key Choice(std::string name, std::string default_value, Names choices, std::string meaning,
           std::string source = "");
/// A value that no single To() reads (a path, a map, a sequence, a number or a vector):
/// the parser reads it with its own code; `type` and `allowed` are what keys prints.
Key Other(std::string name, std::string type, std::string default_value, std::string allowed,
          std::string meaning, std::string source = "");

/// The keys of one map of the scene, in the order messages list them.
struct KeyTable {
  std::string path;     ///< where the map sits: "solver", "bodies[].material", "" (the top)
  std::string meaning;  ///< one line
  std::vector<Key> keys;

  Names KeyNames() const;
  /// The keys a variant takes (those with no variants, and those listing it), in order.
  Names VariantKeys(const std::string& variant) const;
  /// The key called name; std::logic_error if the table has none (a parser bug).
  const Key& Find(const std::string& name) const;
};

/// Rigid placement of a body or cloth: x -> R (s .* x) + t, with s a per-axis scale, R a
/// rotation of angle_deg degrees about axis (right-handed), t a translation (m).
struct TransformConfig {
  Vec3 scale = Vec3::Ones();
  Vec3 rotate_axis = Vec3::UnitZ();
  double rotate_angle_deg = 0.0;
  Vec3 translate = Vec3::Zero();
  Vec3 Apply(const Vec3& x) const;
};
const KeyTable* TransformKeys();
/// transform: scale, rotate, translate.
TransformConfig ParseTransform(const Field& f);

}  // namespace optistep
