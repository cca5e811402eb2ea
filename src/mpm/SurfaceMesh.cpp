#include "mpm/SurfaceMesh.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <string_view>

#include "core/Error.hpp"

namespace optistep::mpm {

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the surface file (" + std::strerror(errno) + ")");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// The lines of a text file in memory, split into whitespace-separated fields; every
/// error reads "<file>:<line>: ...".
class TextLines {
 public:
  TextLines(const std::string& path, const std::string& text, char comment)
      : path_(path), text_(text), comment_(comment) {}

  /// Advances to the next line with a field; false at the end of the text.
  bool Next() {
    while (pos_ < text_.size()) {
      std::size_t end = std::min(text_.find('\n', pos_), text_.size());
      std::string_view line(text_.data() + pos_, end - pos_);
      pos_ = end + 1;
      ++line_;
      if (comment_) line = line.substr(0, std::min(line.find(comment_), line.size()));
      fields_.clear();
      for (std::size_t i = 0; i < line.size();) {
        if (std::isspace(static_cast<unsigned char>(line[i]))) { ++i; continue; }
        std::size_t j = i;
        while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
        fields_.push_back(line.substr(i, j - i));
        i = j;
      }
      if (!fields_.empty()) return true;
    }
    return false;
  }

  /// Advances to the next line, which should hold `expected`; the end of the file throws.
  void Require(const std::string& expected) {
    if (!Next()) Fail("unexpected end of file, expected " + expected);
  }

  std::size_t Size() const { return fields_.size(); }
  std::string_view Field(std::size_t i) const { return fields_[i]; }

  /// The current line must start with the given keywords and have `size` fields.
  void Expect(std::initializer_list<std::string_view> keywords, std::size_t size,
              const std::string& expected) const {
    bool ok = fields_.size() == size;
    std::size_t i = 0;
    for (std::string_view keyword : keywords) ok = ok && fields_[i++] == keyword;
    if (!ok) Fail("expected " + expected + ", got '" + Text() + "'");
  }

  long long Integer(std::size_t i, const std::string& expected) const {
    long long value = 0;
    const std::string_view t = fields_[i];
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec != std::errc() || end != t.data() + t.size())
      Fail("field " + std::to_string(i + 1) + " '" + std::string(t) + "' is not an integer; expected " +
           expected);
    return value;
  }

  double Real(std::size_t i, const std::string& expected) const {
    std::string_view t = fields_[i];
    if (!t.empty() && t[0] == '+') t.remove_prefix(1);  // from_chars takes no '+'
    double value = 0.0;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
    if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(value))
      Fail("field " + std::to_string(i + 1) + " '" + std::string(fields_[i]) +
           "' is not a finite number; expected " + expected);
    return value;
  }

  Vec3 Point(std::size_t first, const std::string& expected) const {
    return Vec3(Real(first, expected), Real(first + 1, expected), Real(first + 2, expected));
  }

  [[noreturn]] void Fail(const std::string& what) const {
    throw InputError(path_ + ":" + std::to_string(line_) + ": " + what);
  }

 private:
  std::string Text() const {
    std::string text;
    for (std::string_view f : fields_) text += (text.empty() ? "" : " ") + std::string(f);
    return text.size() > 80 ? text.substr(0, 77) + "..." : text;
  }

  const std::string& path_;
  const std::string& text_;
  char comment_;
  std::size_t pos_ = 0;
  int line_ = 0;
  std::vector<std::string_view> fields_;
};

// ---- OFF ---------------------------------------------------------------------------

TriangleSurface ReadOff(const std::string& path) {
  const std::string text = ReadFile(path);
  TextLines in(path, text, '#');
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

TriangleSurface ReadAsciiStl(const std::string& path, const std::string& text) {
  TriangleSurface surface;
  Welder welder(&surface);
  TextLines in(path, text, '\0');
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
  const std::string data = ReadFile(path);
  if (data.size() >= 84) {
    const uint32_t count = LittleEndian32(data.data() + 80);
    if (data.size() == 84 + 50 * static_cast<std::size_t>(count)) return ReadBinaryStl(path, data, count);
  }
  const std::size_t start = data.find_first_not_of(" \t\r\n");
  if (start == std::string::npos || data.compare(start, 5, "solid") != 0)
    throw InputError(path + ": neither binary STL (size " + std::to_string(data.size()) +
                     " bytes is not 84 + 50 N for the N triangles at byte 80) nor ASCII STL "
                     "(does not start with 'solid')");
  return ReadAsciiStl(path, data);
}

// ---- Ray crossing ------------------------------------------------------------------

/// Fixed ray directions with pairwise irrational component ratios: a ray from a sample
/// point passes exactly through a mesh edge or vertex with probability zero, and the
/// three are far apart, so two of them rarely graze the same feature.
const std::array<Vec3, 3>& RayDirections() {
  static const std::array<Vec3, 3> directions = {
      Vec3(1.0, std::sqrt(2.0), std::sqrt(3.0)).normalized(),
      Vec3(-std::sqrt(5.0), 1.0, -M_PI / 3.0).normalized(),
      Vec3(std::sqrt(7.0) / 3.0, -M_E, 0.5 * std::sqrt(11.0)).normalized()};
  return directions;
}

}  // namespace

TriangleSurface ReadSurfaceMesh(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  TriangleSurface surface;
  if (extension == ".off") surface = ReadOff(path);
  else if (extension == ".stl") surface = ReadStl(path);
  else
    throw InputError(path + ": unknown surface file extension '" + extension + "', expected .off or .stl");
  if (surface.triangles.empty()) throw InputError(path + ": expected at least one triangle, found none");
  return surface;
}

void CheckClosed(const TriangleSurface& surface, const std::string& name) {
  std::vector<std::pair<int, int>> edges;
  edges.reserve(3 * surface.triangles.size());
  for (const auto& t : surface.triangles)
    for (int c = 0; c < 3; ++c) edges.emplace_back(std::minmax(t[c], t[(c + 1) % 3]));
  std::sort(edges.begin(), edges.end());
  for (std::size_t i = 0; i < edges.size();) {
    std::size_t j = i;
    while (j < edges.size() && edges[j] == edges[i]) ++j;
    if (j - i != 2)
      throw InputError(name + ": surface is not closed (edge " + std::to_string(edges[i].first) + "-" +
                       std::to_string(edges[i].second) + " used by " + std::to_string(j - i) +
                       (j - i == 1 ? " triangle)" : " triangles)"));
    i = j;
  }
}

double EnclosedVolume(const TriangleSurface& surface) {
  double six_volume = 0.0;
  for (const auto& t : surface.triangles) {
    const Vec3& a = surface.vertices[t[0]];
    six_volume += a.dot(surface.vertices[t[1]].cross(surface.vertices[t[2]]));
  }
  return std::abs(six_volume) / 6.0;
}

namespace {

/// The triangles' bounding boxes, after the checks the grid and the parity test rely on.
std::vector<Aabb> TriangleBoxes(const TriangleSurface& surface, const std::string& name) {
  if (surface.triangles.empty()) throw InputError(name + ": surface has no triangle");
  CheckClosed(surface, name);
  return ElementBounds(surface.vertices, surface.triangles);
}

}  // namespace

ClosedSurface::ClosedSurface(TriangleSurface surface, std::string name)
    : surface_(std::move(surface)),
      name_(std::move(name)),
      grid_(TriangleBoxes(surface_, name_), /*items_per_bin=*/1.0) {
  triangles_.reserve(surface_.triangles.size());
  for (const auto& t : surface_.triangles) {
    const Vec3& a = surface_.vertices[t[0]];
    triangles_.push_back({a, surface_.vertices[t[1]] - a, surface_.vertices[t[2]] - a});
  }
  // Classify each face-connected set of empty bins from its first bin's centre, then
  // flood the set. Rays from later seeds stop at the sets already classified.
  const Eigen::Vector3i& n = grid_.Resolution();
  bin_inside_.assign(grid_.NumBins(), -1);
  std::vector<Eigen::Vector3i> stack;
  Eigen::Vector3i seed;
  for (seed.z() = 0; seed.z() < n.z(); ++seed.z())
    for (seed.y() = 0; seed.y() < n.y(); ++seed.y())
      for (seed.x() = 0; seed.x() < n.x(); ++seed.x()) {
        const int s = grid_.Index(seed);
        if (bin_inside_[s] >= 0 || grid_.Begin(s) != grid_.End(s)) continue;
        const Vec3 centre = grid_.Bounds().lo + (seed.cast<double>().array() + 0.5).matrix().cwiseProduct(grid_.BinSize());
        const signed char status = InsideByRays(centre) ? 1 : 0;
        bin_inside_[s] = status;
        stack.push_back(seed);
        while (!stack.empty()) {
          const Eigen::Vector3i b = stack.back();
          stack.pop_back();
          for (int axis = 0; axis < 3; ++axis)
            for (int step : {-1, 1}) {
              Eigen::Vector3i c = b;
              c[axis] += step;
              if (c[axis] < 0 || c[axis] >= n[axis]) continue;
              const int i = grid_.Index(c);
              if (bin_inside_[i] >= 0 || grid_.Begin(i) != grid_.End(i)) continue;
              bin_inside_[i] = status;
              stack.push_back(c);
            }
        }
      }
}

bool ClosedSurface::Inside(const Vec3& x) const {
  const Aabb& box = grid_.Bounds();
  if ((x.array() <= box.lo.array()).any() || (x.array() >= box.hi.array()).any()) return false;
  const signed char status = bin_inside_[grid_.Index(grid_.BinOf(x))];
  return status >= 0 ? status == 1 : InsideByRays(x);
}

bool ClosedSurface::InsideByRays(const Vec3& x) const {
  const auto& d = RayDirections();
  const bool first = InsideAlongRay(x, d[0]);
  if (first == InsideAlongRay(x, d[1])) return first;
  return InsideAlongRay(x, d[2]);
}

bool ClosedSurface::InsideAlongRay(const Vec3& x, const Vec3& d) const {
  // Amanatides and Woo's traversal: bin b holds the ray parameters [t_enter, t_exit).
  Eigen::Vector3i b = grid_.BinOf(x);
  const Eigen::Vector3i& n = grid_.Resolution();
  const Vec3& h = grid_.BinSize();
  Eigen::Vector3i step;
  Vec3 t_next, t_delta;
  for (int k = 0; k < 3; ++k) {
    step[k] = d[k] > 0.0 ? 1 : -1;
    const double face = grid_.Bounds().lo[k] + (b[k] + (step[k] > 0 ? 1 : 0)) * h[k];
    t_next[k] = (face - x[k]) / d[k];
    t_delta[k] = h[k] / std::abs(d[k]);
  }
  bool odd = false;
  double t_enter = 0.0;
  while (true) {
    const int bin = grid_.Index(b);
    if (bin_inside_[bin] >= 0) return odd != (bin_inside_[bin] == 1);
    int axis = 0;
    t_next.minCoeff(&axis);
    const bool last = b[axis] + step[axis] < 0 || b[axis] + step[axis] >= n[axis];
    const double t_exit = last ? std::numeric_limits<double>::infinity() : t_next[axis];
    for (const int* it = grid_.Begin(bin); it != grid_.End(bin); ++it) {
      // Moller and Trumbore's ray-triangle test.
      const Triangle& tri = triangles_[*it];
      const Vec3 p = d.cross(tri.e2);
      const double det = tri.e1.dot(p);
      if (det == 0.0) continue;  // ray parallel to the triangle's plane
      const double inv = 1.0 / det;
      const Vec3 s = x - tri.a;
      const double u = s.dot(p) * inv;
      if (u < 0.0 || u > 1.0) continue;
      const Vec3 q = s.cross(tri.e1);
      const double v = d.dot(q) * inv;
      if (v < 0.0 || u + v > 1.0) continue;
      const double t = tri.e2.dot(q) * inv;
      if (t > 0.0 && t >= t_enter && t < t_exit) odd = !odd;
    }
    if (last) return odd;  // outside the grid is outside the surface
    b[axis] += step[axis];
    t_enter = t_exit;
    t_next[axis] += t_delta[axis];
  }
}

}  // namespace optistep::mpm
