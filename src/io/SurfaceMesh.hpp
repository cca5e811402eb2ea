#pragma once
// Triangle surface readers: OFF, Wavefront OBJ and STL (binary or ASCII). The surfaces bound MPM bodies
// (mpm/ClosedSurface: closedness, inside test).
#include <array>
#include <string>
#include <vector>

#include "core/Types.hpp"

namespace optistep {

/// A triangle surface: vertex positions (m) and, per triangle, 3 0-based vertex indices.
struct TriangleSurface {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;
};

/// Reads a triangle surface chosen by the file's extension (".off", ".obj" or ".stl", any case).
///  - OFF (ASCII): the keyword "OFF" (optionally followed by the counts on the same
///    line), "<#vertices> <#faces> <#edges>" (#edges is ignored), one "x y z" line per
///    vertex, one "n v_1 ... v_n [up to 4 colour fields, ignored]" line per face, n >= 3,
///    0-based indices. '#' starts a comment; blank lines are skipped. A face of n > 3
///    vertices is fan-triangulated: (v_1, v_k, v_k+1), k = 2 .. n-1. Vertices keep their
///    file order and numbering.
///  - OBJ (Wavefront, ASCII): "v x y z [w]" vertex lines (w ignored) and "f v_1 ... v_n" face
///    lines, n >= 3, each corner "v", "v/vt", "v/vt/vn" or "v//vn" with v 1-based or negative
///    (-1: the last vertex so far); faces fan-triangulated as for OFF; vertices numbered
///    0-based in file order. vt, vn, vp, o, g, s, usemtl, mtllib and l lines are skipped,
///    any other statement is an error. '#' starts a comment.
///  - STL, binary or ASCII. Binary exactly when the file size is 84 + 50 N, N being the
///    little-endian uint32 at byte 80 (so a binary file whose 80-byte header starts with
///    "solid", as some exporters write, is still read as binary); otherwise ASCII, which
///    must start with "solid" and hold "facet normal nx ny nz / outer loop / vertex x y z
///    (3 times) / endloop / endfacet" blocks and "endsolid", possibly several solids.
///    Normals are ignored. Corners with exactly equal coordinates are welded into one
///    vertex (-0 equals +0), numbered in order of first appearance.
/// Rank-local, not collective. Throws InputError naming the file and, for text, the
/// line, for: a missing or unreadable file, an unknown extension, a malformed line, a
/// non-finite coordinate, an index out of range, a face or facet with a repeated vertex,
/// a count that does not match the header, a truncated file, or no triangle at all.
/// Closedness is not checked here (mpm::ClosedSurface does it).
TriangleSurface ReadSurfaceMesh(const std::string& path);

}  // namespace optistep
