#include "io/SceneSchema.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace optistep {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

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

// --- Range ----------------------------------------------------------------------------------

bool Range::Contains(double v) const {
  if (!allow_infinite && !std::isfinite(v)) return false;
  return (lo_open ? v > lo : v >= lo) && (hi_open ? v < hi : v <= hi);
}

std::string Range::Expected(bool integer) const {
  const std::string noun = integer ? "an integer" : "a number";
  if (lo == -kInf && hi == kInf) return noun;
  if (hi == kInf) {
    if (lo == 0.0 && lo_open && !integer) return "a positive number";
    return noun + (lo_open ? " > " : " >= ") + FormatNumber(lo);
  }
  return noun + " in " + (lo_open ? "(" : "[") + FormatNumber(lo) + ", " + FormatNumber(hi) +
         (hi_open ? ")" : "]");
}

std::string Range::Text() const {
  if (lo == -kInf && hi == kInf) return "";
  if (hi == kInf)
    return std::string(lo_open ? "> " : ">= ") + FormatNumber(lo) + (allow_infinite ? " or .inf" : "");
  return (lo_open ? "(" : "[") + FormatNumber(lo) + ", " + FormatNumber(hi) + (hi_open ? ")" : "]");
}

// --- Key and KeyTable -----------------------------------------------------------------------

Key Key::For(Names only) const {
  Key k = *this;
  k.variants = std::move(only);
  return k;
}

Key Key::Sub(const KeyTable* (*table)()) const {
  Key k = *this;
  k.sub = table;
  return k;
}

Key Key::Allowing(std::string text) const {
  Key k = *this;
  k.allowed = std::move(text);
  return k;
}

namespace {
Key MakeKey(std::string name, Key::Kind kind, std::string type, std::string default_value,
            std::string meaning, std::string source) {
  Key k;
  k.name = std::move(name);
  k.kind = kind;
  k.type = std::move(type);
  k.default_value = std::move(default_value);
  k.meaning = std::move(meaning);
  k.source = std::move(source);
  return k;
}
}  // namespace

Key Number(std::string name, std::string default_value, Range range, std::string meaning,
           std::string source) {
  Key k = MakeKey(std::move(name), Key::Kind::kNumber, "number", std::move(default_value),
                  std::move(meaning), std::move(source));
  k.range = range;
  k.allowed = range.Text();
  return k;
}

Key Integer(std::string name, std::string default_value, Range range, std::string meaning,
            std::string source) {
  Key k = MakeKey(std::move(name), Key::Kind::kInteger, "integer", std::move(default_value),
                  std::move(meaning), std::move(source));
  k.range = range;
  k.allowed = range.Text();
  return k;
}

Key Flag(std::string name, std::string default_value, std::string meaning, std::string source) {
  Key k = MakeKey(std::move(name), Key::Kind::kFlag, "bool", std::move(default_value),
                  std::move(meaning), std::move(source));
  k.allowed = "true, false";
  return k;
}

Key Text(std::string name, std::string default_value, std::string meaning) {
  Key k = MakeKey(std::move(name), Key::Kind::kString, "string", std::move(default_value),
                  std::move(meaning), "");
  k.allowed = "non-empty";
  return k;
}

Key Vector(std::string name, std::string default_value, std::string meaning, Range range) {
  Key k = MakeKey(std::move(name), Key::Kind::kVector, "[x, y, z]", std::move(default_value),
                  std::move(meaning), "");
  k.range = range;
  k.allowed = range.Text().empty() ? "" : "each " + range.Text();
  return k;
}

Key Direction(std::string name, std::string default_value, std::string meaning) {
  Key k = MakeKey(std::move(name), Key::Kind::kDirection, "[x, y, z]", std::move(default_value),
                  std::move(meaning), "");
  k.allowed = "non-zero (normalized)";
  return k;
}

Key Choice(std::string name, std::string default_value, Names choices, std::string meaning,
           std::string source) {
  Key k = MakeKey(std::move(name), Key::Kind::kChoice, "choice", std::move(default_value),
                  std::move(meaning), std::move(source));
  k.allowed = Join(choices, ", ");
  k.choices = std::move(choices);
  return k;
}

Key Other(std::string name, std::string type, std::string default_value, std::string allowed,
          std::string meaning, std::string source) {
  Key k = MakeKey(std::move(name), Key::Kind::kOther, std::move(type), std::move(default_value),
                  std::move(meaning), std::move(source));
  k.allowed = std::move(allowed);
  return k;
}

Names KeyTable::KeyNames() const {
  Names names;
  for (const Key& key : keys) names.push_back(key.name);
  return names;
}

Names KeyTable::VariantKeys(const std::string& variant) const {
  Names names;
  for (const Key& key : keys)
    if (key.variants.empty() ||
        std::find(key.variants.begin(), key.variants.end(), variant) != key.variants.end())
      names.push_back(key.name);
  return names;
}

const Key& KeyTable::Find(const std::string& name) const {
  for (const Key& key : keys)
    if (key.name == name) return key;
  throw std::logic_error("scene key table '" + path + "' has no key '" + name + "'");
}

// --- Markdown --------------------------------------------------------------------------------

namespace {

/// An HTML id for a table's section: its path with every run of other characters a '-'.
std::string Anchor(const KeyTable& table) {
  if (table.path.empty()) return "scene";
  std::string id;
  for (char c : table.path) {
    const bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (word)
      id += c;
    else if (!id.empty() && id.back() != '-')
      id += '-';
  }
  while (!id.empty() && id.back() == '-') id.pop_back();
  return id;
}

/// text with a capital first letter and a full stop.
std::string Sentence(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text + ".";
}

/// A Markdown table cell: '|' escaped, "" left empty.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

/// "type: sphere, cylinder" when the table's type (or model) key picks the variants, else
/// "with box" (the key whose presence picks it).
std::string VariantLabel(const KeyTable& table, const Names& variants) {
  for (const Key& key : table.keys) {
    if (key.kind != Key::Kind::kChoice || (key.name != "type" && key.name != "model")) continue;
    const bool all = std::all_of(variants.begin(), variants.end(), [&](const std::string& v) {
      return std::find(key.choices.begin(), key.choices.end(), v) != key.choices.end();
    });
    if (all) return key.name + ": " + Join(variants, ", ");
  }
  return "with " + Join(variants, " or ");
}

/// Pre-order from `table`, each table once.
void CollectTables(const KeyTable* table, std::vector<const KeyTable*>& out) {
  if (std::find(out.begin(), out.end(), table) != out.end()) return;
  out.push_back(table);
  for (const Key& key : table->keys)
    if (key.sub) CollectTables(key.sub(), out);
}

}  // namespace

std::string SchemaMarkdown(const KeyTable& root) {
  std::vector<const KeyTable*> tables;
  CollectTables(&root, tables);
  std::string out;
  for (const KeyTable* table : tables) {
    const bool top = table == &root;
    out += "<a id=\"" + Anchor(*table) + "\"></a>\n\n## " +
           (top || table->path.empty() ? std::string("Top level") : "`" + table->path + "`") + "\n\n" +
           Sentence(table->meaning) + "\n\n";
    const bool any_variants = std::any_of(table->keys.begin(), table->keys.end(),
                                          [](const Key& k) { return !k.variants.empty(); });
    const bool any_source = std::any_of(table->keys.begin(), table->keys.end(),
                                        [](const Key& k) { return !k.source.empty(); });
    out += "| key | type | default | allowed | meaning |";
    std::string rule = "|---|---|---|---|---|";
    if (any_variants) out += " only for |", rule += "---|";
    if (any_source) out += " source |", rule += "---|";
    out += "\n" + rule + "\n";
    for (const Key& key : table->keys) {
      std::string type = key.type;
      if (key.sub) type += ", see [`" + key.sub()->path + "`](#" + Anchor(*key.sub()) + ")";
      out += "| `" + key.name + "` | " + Cell(type) + " | " + Cell(key.default_value) + " | " +
             Cell(key.allowed) + " | " + Cell(key.meaning) + " |";
      if (any_variants) out += " " + Cell(key.variants.empty() ? "" : VariantLabel(*table, key.variants)) + " |";
      if (any_source) out += " " + Cell(key.source) + " |";
      out += "\n";
    }
    out += "\n";
  }
  return out;
}

Vec3 TransformConfig::Apply(const Vec3& x) const {
  constexpr double kPi = 3.14159265358979323846;
  const Eigen::AngleAxisd R(rotate_angle_deg * kPi / 180.0, rotate_axis.normalized());
  return R * scale.cwiseProduct(x) + translate;
}

}  // namespace optistep
