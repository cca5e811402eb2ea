#pragma once
// The line tokenizer of the text input readers (TetGen .node/.ele and Gmsh .msh in
// io/TetMesh, OFF and ASCII STL in io/SurfaceMesh): a file's lines split into
// whitespace-separated fields, comments dropped, blank lines skipped, and errors worded
// "<file>:<line>: ..." with the line's 1-based number. Each reader adds its own wording
// of what a line should hold.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace optistep {

/// The whole file at path, as bytes (up to the first read error, as for a folder).
/// Rank-local. InputError "<path>: cannot open the <kind> file (<reason>)" if it cannot
/// be opened.
std::string ReadInputFile(const std::string& path, const std::string& kind);

/// True when all of field is an integer (std::from_chars: an optional '-', digits);
/// then *value holds it.
bool ParseInteger(std::string_view field, long long* value);
/// True when all of field is a finite number (std::from_chars, general format, and an
/// optional leading '+'); then *value holds it.
bool ParseFiniteReal(std::string_view field, double* value);

/// text cut to 80 characters for a message (77 and "..." when longer).
std::string Excerpt(std::string text);

/// A text in memory read line by line ('\n' ends a line). On each line, everything from
/// the comment character on is dropped (none when comment is '\0'), and the rest is split
/// into fields at blanks (space, \t, \r, \v, \f); lines without fields are skipped.
/// Not copyable: the fields point into the text it holds.
class LineReader {
 public:
  /// path: the file's name in messages; text: its contents.
  LineReader(std::string path, std::string text, char comment);
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// Advances to the next line with at least one field; false at the end of the text.
  bool Next();

  std::size_t Size() const { return fields_.size(); }
  std::string_view Field(std::size_t i) const { return fields_[i]; }
  const std::vector<std::string_view>& Fields() const { return fields_; }
  const std::string& Path() const { return path_; }

  /// The current line as written from its first to its last field (comment and
  /// surrounding blanks dropped), cut by Excerpt. After a Next that returned true.
  std::string Text() const;

  /// Throws InputError "<path>:<line>: <what>", line being the current line (or the last
  /// one, at the end of the text).
  [[noreturn]] void Fail(const std::string& what) const;

 private:
  std::string path_;
  std::string text_;
  char comment_;
  std::size_t pos_ = 0;
  int line_ = 0;
  std::vector<std::string_view> fields_;
};

}  // namespace optistep
