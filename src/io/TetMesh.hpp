#pragma once
// Tetrahedral mesh readers: TetGen .node/.ele and Gmsh .msh (ASCII 2.2 and 4.1).
//
// Orientation. optistep's convention is that a valid tet (x0, x1, x2, x3) has a POSITIVE
// signed volume det[x1-x0, x2-x0, x3-x0] / 6, exactly as its corners are listed in the
// file; the readers never reorder corners. Verified for:
//  - TetGen 1.5.0 (Debian's tetgen 1.5.0-5): `tetgen -pq1.5 -Q` on a unit cube .off, with
//    outward and with inward facet orientation, on the same cube with -a0.01 (891 tets)
//    and with -o2, and on CGAL's elephant.off (43123 tets) and armadillo.off (751680
//    tets): every tet positive. With -o2 the first 4 of the 10 nodes are the corners.
//  - Gmsh 4.8.4 (Debian's gmsh): `gmsh -3` on an OpenCASCADE unit box, written as
//    msh22 and msh41: every tet positive (tests/data/gmsh_cube_*.msh are those files).
//    This agrees with Gmsh's reference tetrahedron (0,0,0) (1,0,0) (0,1,0) (0,0,1).
// A file written the other way round fails ValidateTets; it is not silently flipped.
#include <array>
#include <string>
#include <vector>

#include "core/Types.hpp"

namespace optistep {

/// A rank-local tetrahedral mesh: node positions (m) and, per tet, 4 0-based indices
/// into nodes.
struct TetMeshData {
  std::vector<Vec3> nodes;
  std::vector<std::array<int, 4>> tets;
};

/// Reads a tet mesh chosen by the file's extension, then validates it (ValidateTets).
///  - TetGen ".node" or ".ele": either name may be given; the other file is the same
///    path with the extension replaced. .node header "<#points> 3 <#attributes>
///    <#boundary markers: 0|1>"; the first point's index (0 or 1) sets the numbering
///    base, and the .ele's element numbers and node references use the same base.
///    .ele header "<#tets> <4|10> <#attributes>"; of 10-node tets the 4 corners (the
///    first 4 nodes) are kept. Attributes and markers are read and dropped. '#' starts a
///    comment; blank lines are skipped.
///  - Gmsh ".msh", ASCII 2.2 or ASCII 4.1 (told apart by $MeshFormat). Only 4-node
///    tetrahedra (element type 4) are kept; other element types (points, lines,
///    triangles, higher-order tets) are skipped, and so are unknown sections. Node tags
///    may be any distinct integers. Binary .msh is refused.
/// In both formats, nodes that no tet references (Gmsh: nodes of surface or point
/// elements only; TetGen -o2: the mid-edge nodes) are dropped, since a node without a
/// tet has no mass; the others are numbered 0, 1, ... in their order in the file.
/// Rank-local, not collective. Throws InputError, one line naming the file and line and
/// what was expected, for a missing file, an unknown extension, a short or long line, a
/// non-number, a count that does not match the header, a truncated file, a reference to
/// an unknown node, and whatever ValidateTets rejects.
TetMeshData ReadTetMesh(const std::string& path);

/// Checks that mesh has at least one tet, that every node index is in [0, #nodes), and
/// that every tet has a positive, non-degenerate signed volume: a tet with
/// |V| <= 1e-12 L^3 (L: mean length of the 6 edges of all tets, shared edges counted
/// once per tet) is degenerate, one with V < 0 otherwise is inverted. Throws InputError
/// naming path, the 0-based tet index, its 0-based nodes and its volume. Rank-local.
void ValidateTets(const TetMeshData& mesh, const std::string& path);

/// Bytes a mesh of `tets` tets and `nodes` nodes holds once rank 0 has assembled it into
/// the scene's mesh (GlobalTetMesh: 4 corners and a body index per tet, a position and a
/// body index per node): a lower bound of what reading a scene's meshes needs on rank 0.
inline double AssembledMeshBytes(double tets, double nodes) {
  return tets * 5.0 * sizeof(int) + nodes * (sizeof(Vec3) + sizeof(int));
}

/// Signed volume (m^3) det[x1-x0, x2-x0, x3-x0] / 6 of tet t, corners in stored order.
/// No range checks (ValidateTets does them).
double SignedVolume(const TetMeshData& mesh, int t);

}  // namespace optistep
