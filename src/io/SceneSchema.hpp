#pragma once
// The scene schema as data: the key tables the parsers (io/SceneSections.cpp,
// app/SceneConfig.cpp) check every scene against (the top-level one: SceneSchema,
// app/SceneConfig.hpp), for `optistep keys` and the generated reference
// docs/user/scenes-reference.md.
#include <string>

#include "io/SceneKeys.hpp"

namespace optistep {

/// The tables reachable from `root` (through Key::sub), each once and depth first, as
/// Markdown: one section per table with its keys' type, default, allowed values, meaning,
/// the variants that take them and the source. Not collective; the same text on every build.
std::string SchemaMarkdown(const KeyTable& root);

}  // namespace optistep
