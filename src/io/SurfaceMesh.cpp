#include "io/SurfaceMesh.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <string_view>
#include <utility>

#include "core/Error.hpp"
#include "io/LineReader.hpp"

namespace optistep {

namespace {

/// A text surface file read line by line (LineReader), with errors that say what the
/// line should hold.
class SurfaceLineReader : public LineReader {
 public:
  using LineReader::LineReader;

  /// Advances to the next line, which should hold `expected`; the end of the file throws.
  void Require(const std::string& expected) {
    if (!Next()) Fail("unexpected end of file, expected " + expected);
  }

  /// The current line must start with the given keywords and have `size` fields.
  void Expect(std::initializer_list<std::string_view> keywords, std::size_t size,
              const std::string& expected) const {
    bool ok = Size() == size;
    std::size_t i = 0;
    for (std::string_view keyword : keywords) ok = ok && Field(i++) == keyword;
    if (!ok) Fail("expected " + expected + ", got '" + FieldsText() + "'");
  }

  long long Integer(std::size_t i, const std::string& expected) const {
    long long value = 0;
    if (!ParseInteger(Field(i), &value))
      Fail("field " + std::to_string(i + 1) + " '" + std::string(Field(i)) + "' is not an integer; expected " +
           expected);
    return value;
  }

  double Real(std::size_t i, const std::string& expected) const {
    double value = 0.0;
    if (!ParseFiniteReal(Field(i), &value))
      Fail("field " + std::to_string(i + 1) + " '" + std::string(Field(i)) +
           "' is not a finite number; expected " + expected);
    return value;
  }

  Vec3 Point(std::size_t first, const std::string& expected) const {
    return Vec3(Real(first, expected), Real(first + 1, expected), Real(first + 2, expected));
  }

 private:
  /// The current line's fields joined by single blanks, cut by Excerpt.
  std::string FieldsText() const {
    std::string text;
    for (std::string_view f : Fields()) text += (text.empty() ? "" : " ") + std::string(f);
    return Excerpt(text);
  }
};

// ---- OFF ---------------------------------------------------------------------------

TriangleSurface ReadOff(const std::string& path) {
  SurfaceLineReader in(path, ReadInputFile(path, "surface"), '#');
  in.Require("the keyword OFF");
  if (in.Field(0) != "OFF")
    in.Fail("expected the keyword OFF (plain OFF: no colours, normals or texture coordinates), got '" +
            std::string(in.Field(0)) + "'");
  const std::string counts = "the counts '<#vertices> <#faces> <#edges>'";
  const std::size_t first = in.Size() == 1 ? 0 : 1;  // counts on the next line or after OFF
  if (first == 0) in.Require(counts);
  if (in.Size() != first + 3) in.Fail("expected " + counts);
  const long long num_vertices = in.Integer(first, counts);
  const long long num_faces = in.Integer(first + 1, counts);
  in.Integer(first + 2, counts);
  if (num_vertices < 3 || num_faces < 1 || num_vertices > INT32_MAX || num_faces > INT32_MAX)
    in.Fail("expected at least 3 vertices and 1 face, and fewer than 2^31 of each");

  TriangleSurface surface;
  surface.vertices.reserve(num_vertices);
  const std::string vertex = "a vertex line 'x y z'";
  for (long long v = 0; v < num_vertices; ++v) {
    in.Require(vertex);
    if (in.Size() != 3) in.Fail("expected " + vertex + " (vertex " + std::to_string(v) + ")");
    surface.vertices.push_back(in.Point(0, vertex));
  }
  const std::string face = "a face line 'n v_1 ... v_n [colour]' with n >= 3";
  for (long long f = 0; f < num_faces; ++f) {
    in.Require(face);
    const long long n = in.Integer(0, face);
    if (n < 3 || static_cast<long long>(in.Size()) < n + 1 || static_cast<long long>(in.Size()) > n + 5)
      in.Fail("expected " + face + " and at most 4 colour fields (face " + std::to_string(f) + ")");
    std::vector<int> corners;
    for (long long k = 1; k <= n; ++k) {
      const long long index = in.Integer(k, face);
      if (index < 0 || index >= num_vertices)
        in.Fail("face " + std::to_string(f) + " refers to vertex " + std::to_string(index) +
                ", expected a 0-based index below " + std::to_string(num_vertices));
      if (std::find(corners.begin(), corners.end(), index) != corners.end())
        in.Fail("face " + std::to_string(f) + " repeats vertex " + std::to_string(index));
      corners.push_back(static_cast<int>(index));
    }
    for (std::size_t k = 1; k + 1 < corners.size(); ++k)
      surface.triangles.push_back({corners[0], corners[k], corners[k + 1]});
  }
  if (in.Next())
    in.Fail("expected the end of the file after the " + std::to_string(num_faces) +
            " faces the header announces, found more lines");
  return surface;
}

// ---- OBJ ---------------------------------------------------------------------------

TriangleSurface ReadObj(const std::string& path) {
  SurfaceLineReader in(path, ReadInputFile(path, "surface"), '#');
  TriangleSurface surface;
  const std::string vertex = "a vertex line 'v x y z [w]'";
  const std::string face = "a face line 'f v_1 ... v_n' (v, v/vt, v/vt/vn or v//vn) with n >= 3";
  long long faces = 0;
  while (in.Next()) {
    const std::string_view key = in.Field(0);
    if (key == "v") {
      if (in.Size() != 4 && in.Size() != 5) in.Fail("expected " + vertex);
      surface.vertices.push_back(in.Point(1, vertex));
    } else if (key == "f") {
      if (in.Size() < 4) in.Fail("expected " + face);
      std::vector<int> corners;
      for (std::size_t k = 1; k < in.Size(); ++k) {
        const std::string_view field = in.Field(k);
        long long index = 0;  // 1-based, or negative: counted back from the last vertex
        if (!ParseInteger(field.substr(0, field.find('/')), &index))
          in.Fail("field " + std::to_string(k + 1) + " '" + std::string(field) + "' is not " + face);
        const long long n = static_cast<long long>(surface.vertices.size());
        const long long zero_based = index > 0 ? index - 1 : n + index;
        if (index == 0 || zero_based < 0 || zero_based >= n)
          in.Fail("face " + std::to_string(faces) + " refers to vertex " + std::to_string(index) +
                  ", expected 1.." + std::to_string(n) + " or -" + std::to_string(n) + "..-1");
        if (std::find(corners.begin(), corners.end(), zero_based) != corners.end())
          in.Fail("face " + std::to_string(faces) + " repeats vertex " + std::to_string(index));
        corners.push_back(static_cast<int>(zero_based));
      }
      for (std::size_t k = 1; k + 1 < corners.size(); ++k)
        surface.triangles.push_back({corners[0], corners[k], corners[k + 1]});
      ++faces;
    } else if (key != "vt" && key != "vn" && key != "vp" && key != "o" && key != "g" &&
               key != "s" && key != "usemtl" && key != "mtllib" && key != "l") {
      in.Fail("unknown OBJ statement '" + std::string(key) +
              "' (read: v, f; skipped: vt, vn, vp, o, g, s, usemtl, mtllib, l)");
    }
  }
  return surface;
}

// ---- STL ---------------------------------------------------------------------------

/// Numbers STL corners, welding those with exactly equal coordinates.
class Welder {
 public:
  explicit Welder(TriangleSurface* surface) : surface_(surface) {}
  int Index(const Vec3& x) {
    const auto [it, inserted] = index_.try_emplace({x.x(), x.y(), x.z()}, static_cast<int>(index_.size()));
    if (inserted) surface_->vertices.push_back(x);
    return it->second;
  }

 private:
  TriangleSurface* surface_;
  std::map<std::array<double, 3>, int> index_;  // std::less: -0 and +0 are one key
};

/// Adds a triangle; false (and nothing added) when two welded corners coincide.
bool AddFacet(TriangleSurface* surface, Welder* welder, const std::array<Vec3, 3>& x) {
  std::array<int, 3> t;
  for (int c = 0; c < 3; ++c) t[c] = welder->Index(x[c]);
  if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2]) return false;
  surface->triangles.push_back(t);
  return true;
}

const char* const kRepeatedCorner = "facet has two equal corners, expected a triangle";

uint32_t LittleEndian32(const char* bytes) {
  uint32_t value = 0;
  for (int b = 3; b >= 0; --b) value = (value << 8) | static_cast<unsigned char>(bytes[b]);
  return value;
}

TriangleSurface ReadBinaryStl(const std::string& path, const std::string& data, uint32_t count) {
  TriangleSurface surface;
  Welder welder(&surface);
  for (uint32_t f = 0; f < count; ++f) {
    const char* record = data.data() + 84 + 50 * static_cast<std::size_t>(f);
    std::array<Vec3, 3> x;
    for (int c = 0; c < 3; ++c)
      for (int d = 0; d < 3; ++d) {
        float value = 0.0f;
        const uint32_t bits = LittleEndian32(record + 12 + 12 * c + 4 * d);  // after the normal
        static_assert(sizeof value == sizeof bits);
        std::memcpy(&value, &bits, sizeof value);
        if (!std::isfinite(value))
          throw InputError(path + ": binary STL facet " + std::to_string(f) + " has a non-finite coordinate");
        x[c][d] = value;
      }
    if (!AddFacet(&surface, &welder, x))
      throw InputError(path + ": binary STL facet " + std::to_string(f) + ": " + kRepeatedCorner);
  }
  return surface;
}

TriangleSurface ReadAsciiStl(const std::string& path, std::string text) {
  TriangleSurface surface;
  Welder welder(&surface);
  SurfaceLineReader in(path, std::move(text), '\0');
  in.Require("'solid <name>'");
  in.Expect({"solid"}, in.Size(), "'solid <name>'");
  while (in.Next()) {
    if (in.Field(0) == "endsolid") {
      if (in.Next()) in.Expect({"solid"}, in.Size(), "'solid <name>' after 'endsolid'");
      else break;
      continue;
    }
    in.Expect({"facet", "normal"}, 5, "'facet normal nx ny nz' or 'endsolid'");
    in.Point(2, "'facet normal nx ny nz'");
    in.Require("'outer loop'");
    in.Expect({"outer", "loop"}, 2, "'outer loop'");
    std::array<Vec3, 3> x;
    for (int c = 0; c < 3; ++c) {
      in.Require("'vertex x y z'");
      in.Expect({"vertex"}, 4, "'vertex x y z' (3 per facet)");
      x[c] = in.Point(1, "'vertex x y z'");
    }
    in.Require("'endloop'");
    in.Expect({"endloop"}, 1, "'endloop' after 3 vertices");
    in.Require("'endfacet'");
    in.Expect({"endfacet"}, 1, "'endfacet'");
    if (!AddFacet(&surface, &welder, x)) in.Fail(kRepeatedCorner);
  }
  return surface;
}

TriangleSurface ReadStl(const std::string& path) {
  std::string data = ReadInputFile(path, "surface");
  if (data.size() >= 84) {
    const uint32_t count = LittleEndian32(data.data() + 80);
    if (data.size() == 84 + 50 * static_cast<std::size_t>(count)) return ReadBinaryStl(path, data, count);
  }
  const std::size_t start = data.find_first_not_of(" \t\r\n");
  if (start == std::string::npos || data.compare(start, 5, "solid") != 0)
    throw InputError(path + ": neither binary STL (size " + std::to_string(data.size()) +
                     " bytes is not 84 + 50 N for the N triangles at byte 80) nor ASCII STL "
                     "(does not start with 'solid')");
  return ReadAsciiStl(path, std::move(data));
}

}  // namespace

TriangleSurface ReadSurfaceMesh(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  TriangleSurface surface;
  if (extension == ".off") surface = ReadOff(path);
  else if (extension == ".obj") surface = ReadObj(path);
  else if (extension == ".stl") surface = ReadStl(path);
  else
    throw InputError(path + ": unknown surface file extension '" + extension +
                     "', expected .off, .obj or .stl");
  if (surface.triangles.empty()) throw InputError(path + ": expected at least one triangle, found none");
  return surface;
}

}  // namespace optistep
