#pragma once
// The scene schema as data: the key tables the parser (io/SceneConfig.cpp) checks every
// scene against, for `optistep keys` and the generated reference docs/user/scenes-reference.md.
#include <string>

#include "io/SceneKeys.hpp"

namespace optistep {

/// The scene's top-level key table: every section the parser reads, each key's type,
/// default, allowed values and meaning (KeyTable::keys, with Key::sub for nested maps).
const KeyTable& SceneSchema();

/// The tables reachable from `root` (through Key::sub), each once and depth first, as
/// Markdown: one section per table with its keys' type, default, allowed values, meaning,
/// the variants that take them and the source. Not collective; the same text on every build.
std::string SchemaMarkdown(const KeyTable& root);

}  // namespace optistep
