#include "io/LineReader.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "core/Error.hpp"

namespace optistep {

namespace {

constexpr const char* kBlanks = " \t\r\v\f";

}  // namespace

std::string ReadInputFile(const std::string& path, const std::string& kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InputError(path + ": cannot open the " + kind + " file (" + std::strerror(errno) + ")");
  // A read error (the path is a folder) ends the text as the end of the file would, and
  // the reader then names the file and what it expected.
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool ParseInteger(std::string_view field, long long* value) {
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *value);
  return ec == std::errc() && end == field.data() + field.size();
}

bool ParseFiniteReal(std::string_view field, double* value) {
  if (!field.empty() && field[0] == '+') field.remove_prefix(1);  // from_chars takes no '+'
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), *value);
  return ec == std::errc() && end == field.data() + field.size() && std::isfinite(*value);
}

std::string Excerpt(std::string text) {
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

LineReader::LineReader(std::string path, std::string text, char comment)
    : path_(std::move(path)), text_(std::move(text)), comment_(comment) {}

bool LineReader::Next() {
  while (pos_ < text_.size()) {
    const std::size_t end = std::min(text_.find('\n', pos_), text_.size());
    std::string_view line(text_.data() + pos_, end - pos_);
    pos_ = end + 1;
    ++line_;
    if (comment_) line = line.substr(0, std::min(line.find(comment_), line.size()));
    fields_.clear();
    std::size_t at = 0;
    while (true) {
      at = line.find_first_not_of(kBlanks, at);
      if (at == std::string_view::npos) break;
      const std::size_t field_end = std::min(line.find_first_of(kBlanks, at), line.size());
      fields_.push_back(line.substr(at, field_end - at));
      at = field_end;
    }
    if (!fields_.empty()) return true;
  }
  return false;
}

std::string LineReader::Text() const {
  const char* begin = fields_.front().data();
  return Excerpt(std::string(begin, fields_.back().data() + fields_.back().size() - begin));
}

void LineReader::Fail(const std::string& what) const {
  throw InputError(path_ + ":" + std::to_string(line_) + ": " + what);
}

}  // namespace optistep
