// Tet mesh readers (io/TetMesh): TetGen .node/.ele and Gmsh ASCII 2.2 / 4.1 .msh.
// Reference numbers: the unit cube [0,1]^3 has volume 1; the tet (0,0,0) (1,0,0) (0,1,0)
// (0,0,1) has volume 1/6. The fixtures in tests/data are real TetGen 1.5.0 and Gmsh
// 4.8.4 output (unit_cube*.node/.ele from tetgen, gmsh_cube_*.msh from gmsh) or
// hand-written copies of the same cube (their first lines or $Comments say which).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "core/Error.hpp"
#include "io/TetMesh.hpp"
#include "app/SceneConfig.hpp"
#include "model/SceneMesh.hpp"
#include "TestUtil.hpp"

namespace optistep {
namespace {

using test::SourcePath;

std::string Data(const std::string& name) { return SourcePath("tests/data/" + name); }

double TotalVolume(const TetMeshData& mesh) {
  double volume = 0.0;
  for (int t = 0; t < static_cast<int>(mesh.tets.size()); ++t) volume += SignedVolume(mesh, t);
  return volume;
}

/// The InputError message ReadTetMesh(path) throws; a test failure if it throws none.
std::string ReadError(const std::string& path) {
  try {
    ReadTetMesh(path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "ReadTetMesh(" << path << ") threw no InputError";
  return "";
}

/// Writes text to a file in the test's temporary folder and returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "optistep_mesh_readers_" + name;
  std::ofstream(path) << text;
  return path;
}

/// The unit cube as TetGen writes it, 0-based: the reference the other formats match.
TetMeshData UnitCube() { return ReadTetMesh(Data("unit_cube.node")); }

void ExpectSameMesh(const TetMeshData& expected, const TetMeshData& actual) {
  ASSERT_EQ(expected.nodes.size(), actual.nodes.size());
  for (std::size_t i = 0; i < expected.nodes.size(); ++i)
    EXPECT_EQ(expected.nodes[i], actual.nodes[i]) << "node " << i;
  EXPECT_EQ(expected.tets, actual.tets);
}

TEST(SignedVolume, ReferenceTetIsOneSixthAndFlipsSignWithTwoCornersSwapped) {
  TetMeshData mesh;
  mesh.nodes = {Vec3(0, 0, 0), Vec3(2, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
  mesh.tets = {{0, 1, 2, 3}, {1, 0, 2, 3}};
  EXPECT_DOUBLE_EQ(SignedVolume(mesh, 0), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(SignedVolume(mesh, 1), -2.0 / 6.0);
}

TEST(TetGen, UnitCubeHasVolumeOneAndPositiveTets) {
  const TetMeshData mesh = UnitCube();
  EXPECT_EQ(mesh.nodes.size(), 8u);
  ASSERT_EQ(mesh.tets.size(), 6u);
  EXPECT_NEAR(TotalVolume(mesh), 1.0, 1e-14);
  for (int t = 0; t < 6; ++t) EXPECT_NEAR(SignedVolume(mesh, t), 1.0 / 6.0, 1e-15) << "tet " << t;
  EXPECT_EQ(mesh.nodes[6], Vec3(1, 1, 1));
  EXPECT_EQ(mesh.tets[4], (std::array<int, 4>{5, 0, 6, 1}));
}

TEST(TetGen, EitherFileNameReadsThePair) {
  ExpectSameMesh(UnitCube(), ReadTetMesh(Data("unit_cube.ele")));
}

TEST(TetGen, OneBasedFileWithAttributesMarkersAndCommentsMatchesZeroBased) {
  const TetMeshData mesh = ReadTetMesh(Data("unit_cube_1based.node"));
  ExpectSameMesh(UnitCube(), mesh);
  EXPECT_NEAR(TotalVolume(mesh), 1.0, 1e-14);
}

TEST(TetGen, TenNodeTetsKeepTheCornersAndDropMidEdgeNodes) {
  const TetMeshData mesh = ReadTetMesh(Data("unit_cube_o2.node"));  // 27 points in the file
  ExpectSameMesh(UnitCube(), mesh);
}

TEST(Gmsh, HandWritten22And41MatchTheTetGenCube) {
  for (const char* name : {"unit_cube_22.msh", "unit_cube_41.msh"}) {
    SCOPED_TRACE(name);
    const TetMeshData mesh = ReadTetMesh(Data(name));
    ExpectSameMesh(UnitCube(), mesh);  // node 99 of the point element is dropped
    EXPECT_NEAR(TotalVolume(mesh), 1.0, 1e-14);
  }
}

TEST(Gmsh, RealGmshOutputIn22And41ReadsTheSameCube) {
  // gmsh -3 of an OpenCASCADE unit box with mesh size 1: 14 nodes, 24 tets, plus
  // point, line and triangle elements that the reader skips.
  const TetMeshData v22 = ReadTetMesh(Data("gmsh_cube_22.msh"));
  const TetMeshData v41 = ReadTetMesh(Data("gmsh_cube_41.msh"));
  EXPECT_EQ(v22.nodes.size(), 14u);
  EXPECT_EQ(v22.tets.size(), 24u);
  EXPECT_NEAR(TotalVolume(v22), 1.0, 1e-14);
  ExpectSameMesh(v22, v41);
}

TEST(Validate, InvertedTetIsNamedWithItsIndexAndNodes) {
  const std::string message = ReadError(Data("inverted_tet.node"));
  EXPECT_NE(message.find("inverted_tet.ele: tet 4 (0-based; nodes 0 5 6 1) is inverted"), std::string::npos)
      << message;
  EXPECT_NE(message.find("-1.667e-01 m^3"), std::string::npos) << message;
}

TEST(Validate, ZeroVolumeTetIsNamed) {
  const std::string message = ReadError(Data("degenerate_tet.msh"));
  EXPECT_NE(message.find("degenerate_tet.msh: tet 6 (0-based; nodes 0 1 2 3) is degenerate"), std::string::npos)
      << message;
}

TEST(Validate, NearZeroVolumeRelativeToTheEdgeLengthIsDegenerate) {
  // Edges of about 1 km, height 1 nm: |V| = 1.7e-4 m^3 is below 1e-12 L^3 = 7e-4 m^3
  // (L = 894 m), though a tet of that volume would be fine in a 1 cm mesh.
  TetMeshData mesh;
  mesh.nodes = {Vec3(0, 0, 0), Vec3(1e3, 0, 0), Vec3(0, 1e3, 0), Vec3(300, 300, 1e-9)};
  mesh.tets = {{0, 1, 2, 3}};
  EXPECT_THROW(ValidateTets(mesh, "flat"), InputError);
  mesh.nodes[3].z() = 1e3;
  EXPECT_NO_THROW(ValidateTets(mesh, "tall"));
}

TEST(Validate, OutOfRangeNodeAndEmptyMesh) {
  TetMeshData mesh;
  mesh.nodes = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1)};
  EXPECT_THROW(ValidateTets(mesh, "empty"), InputError);
  mesh.tets = {{0, 1, 2, 3}, {0, 1, 2, 4}};
  try {
    ValidateTets(mesh, "m.node");
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("m.node: tet 1 (0-based; nodes 0 1 2 4) references node 4"),
              std::string::npos)
        << e.what();
  }
}

TEST(Errors, MissingFileAndMissingPartner) {
  EXPECT_NE(ReadError(Data("no_such_mesh.msh")).find("no_such_mesh.msh: cannot open"), std::string::npos);
  const std::string node_only = WriteTemp("lonely.node", "1 3 0 0\n0 0 0 0\n");
  EXPECT_NE(ReadError(node_only).find("lonely.ele: cannot open"), std::string::npos);
  EXPECT_NE(ReadError(Data("unit_cube.vtk")).find("unknown mesh file extension '.vtk'"), std::string::npos);
}

TEST(Errors, MalformedLineIsNamedByLineNumber) {
  const std::string message = ReadError(Data("malformed.node"));
  EXPECT_NE(message.find("malformed.node:6: expected a point line"), std::string::npos) << message;
  EXPECT_NE(message.find("got 3 fields: '3 0 1'"), std::string::npos) << message;
}

TEST(Errors, BinaryMshIsRefused) {
  const std::string message = ReadError(Data("gmsh_cube_binary.msh"));
  EXPECT_NE(message.find("gmsh_cube_binary.msh:2: binary .msh is not supported"), std::string::npos) << message;
}

const char* const kCubeNode = "8 3 0 0\n0 0 0 0\n1 1 0 0\n2 1 1 0\n3 0 1 0\n4 0 0 1\n5 1 0 1\n6 1 1 1\n7 0 1 1\n";

const std::string kCubeMsh22Head =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n8\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n"
    "5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n$EndNodes\n";  // lines 1-14

TEST(Errors, EachDefectIsReportedAtItsLine) {
  struct Case {
    const char* name;
    std::string node;  // for .ele cases: the .node partner
    std::string text;  // the file under test
    const char* expected;
  };
  const std::string tets = "0 0 3 7 2\n1 0 7 4 6\n2 5 0 4 6\n3 0 7 6 2\n4 5 0 6 1\n5 6 0 2 1\n";
  const std::string elements = "$Elements\n1\n1 4 2 1 1 1 4 8 3\n";  // lines 15-17
  const Case cases[] = {
      {"nan.node", "", "2 3 0 0\n0 0 0 0\n1 1 nan 0\n", "nan.node:3: field 3 'nan' is not a finite number"},
      {"word.node", "", "# header next\n2 3 0 0\n0 0 0 0\n1 1 x 0\n", "word.node:4: field 3 'x' is not a finite number"},
      {"dim.node", "", "2 2 0 0\n0 0 0\n1 1 0\n", "dim.node:1: expected dimension 3"},
      {"base.node", "", "2 3 0 0\n2 0 0 0\n3 1 0 0\n", "base.node:2: expected the first point index to be 0 or 1"},
      {"skip.node", "", "2 3 0 0\n0 0 0 0\n2 1 0 0\n", "skip.node:3: expected point index 1"},
      {"short.node", "", "3 3 0 0\n0 0 0 0\n1 1 0 0\n", "short.node:3: unexpected end of file after this line"},
      {"long.node", "", "1 3 0 0\n0 0 0 0\n1 1 0 0\n", "long.node:3: expected the end of the file after the 1 points"},
      {"count.ele", kCubeNode, "7 4 0\n" + tets, "count.ele:7: unexpected end of file after this line, expected a tet line"},
      {"range.ele", kCubeNode, "1 4 0\n0 0 3 7 8\n", "range.ele:2: node 8 is out of range: the .node file numbers its points 0 to 7"},
      {"nodes.ele", kCubeNode, "1 6 0\n0 0 3 7 2 1 5\n", "nodes.ele:1: expected 4 or 10 nodes per tet"},
      {"index.ele", kCubeNode, "1 4 0\n1 0 3 7 2\n", "index.ele:2: expected tet index 0"},
      {"format.msh", "", "$MeshFormat\n4.0 0 8\n$EndMeshFormat\n", "format.msh:2: unsupported .msh version 4.0"},
      {"first.msh", "", "8 3 0 0\n", "first.msh:1: expected $MeshFormat"},
      {"ncount.msh", "", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n9\n1 0 0 0\n2 1 0 0\n3 1 1 0\n4 0 1 0\n"
                         "5 0 0 1\n6 1 0 1\n7 1 1 1\n8 0 1 1\n$EndNodes\n",
       "ncount.msh:14: expected a node line '<tag> <x> <y> <z>' (4 fields), got 1 fields: '$EndNodes'"},
      {"ecount.msh", "", kCubeMsh22Head + "$Elements\n2\n1 4 2 1 1 1 4 8 3\n$EndElements\n",
       "ecount.msh:18: expected an element line"},
      {"extra.msh", "", kCubeMsh22Head + elements + "2 4 2 1 1 1 8 5 7\n$EndElements\n",
       "extra.msh:18: expected $EndElements"},
      {"truncated.msh", "", kCubeMsh22Head + elements,
       "truncated.msh:17: unexpected end of file after this line, expected $EndElements"},
      {"tag.msh", "", kCubeMsh22Head + "$Elements\n1\n1 4 2 1 1 1 4 9 3\n$EndElements\n",
       "tag.msh:17: tet references node tag 9, which $Nodes does not define"},
      {"dup.msh", "", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n1 1 0 0\n$EndNodes\n",
       "dup.msh:7: node tag 1 appears twice"},
      {"order.msh", "", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Elements\n0\n$EndElements\n",
       "order.msh:4: expected $Nodes before $Elements"},
      {"blocks.msh", "", "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 2 1 2\n3 1 0 1\n1\n0 0 0\n$EndNodes\n",
       "blocks.msh:8: the $Nodes header announces 2 nodes, its blocks hold 1"},
      {"notet.msh", "", kCubeMsh22Head + "$Elements\n1\n1 2 2 0 1 1 2 3\n$EndElements\n",
       "notet.msh: expected at least one tetrahedron"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = WriteTemp(c.name, c.text);
    const std::string name(c.name);
    if (!c.node.empty()) WriteTemp(name.substr(0, name.rfind('.')) + ".node", c.node);
    const std::string message = ReadError(path);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
  }
}

/// CGAL's elephant tetrahedralized by scripts/fetch-meshes.sh (not in the repository) must
/// read with every tet positive.
TEST(FetchedMeshes, ElephantReadsWithNoInvertedTet) {
  const std::string node_path = test::FetchedMesh("elephant.1.node");
  if (node_path.empty()) return test::MissingFetchedMesh("elephant.1.node");
  std::ifstream header(node_path);
  std::size_t points = 0;
  header >> points;
  const TetMeshData mesh = ReadTetMesh(node_path);  // throws on an inverted tet
  EXPECT_EQ(mesh.nodes.size(), points);
  EXPECT_GT(mesh.tets.size(), 3 * points);
  EXPECT_GT(TotalVolume(mesh), 0.0);
}

/// The message CheckFemMemory throws, or "" if it accepts.
std::string FemMemoryError(double tets, double nodes, const AvailableMemory& available) {
  SceneConfig scene;
  scene.path = "scene.yaml";
  scene.bodies.resize(3);
  try {
    CheckFemMemory(scene, tets, nodes, available);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The refusal of a FEM scene whose meshes cannot fit: at kRunBytesPerTet = 500 B, 1 GB holds
// 2e6 tets; the mesh rank 0 assembles takes 20 B per tet and 28 B per node.
TEST(FemMemory, TetsBeyondTheRunsMemoryAreRefusedNamingTheCountsTheEstimateAndTheKeys) {
  AvailableMemory available;
  available.total = available.rank0_node = 1e9;
  available.source = "the test";
  EXPECT_EQ(FemMemoryError(1.9e6, 4e5, available), "");
  const std::string message = FemMemoryError(3e6, 6e5, available);
  for (const char* part : {"scene.yaml: the bodies' meshes hold 3e+06 tets and 6e+05 nodes in all (3 bodies)",
                           "the run needs at least 1.5 GB, more than the 1 GB available on the run's 1 node (the test)",
                           "expected coarser meshes (bodies[].mesh) or fewer copies (bodies[].copies.count)"})
    EXPECT_NE(message.find(part), std::string::npos) << message;
}

TEST(FemMemory, AMeshBeyondRankZerosNodeIsRefusedEvenWhenTheRunFits) {
  AvailableMemory available;
  available.total = 1e12;
  available.rank0_node = 1e7;
  available.nodes = 8;
  available.source = "the test";
  // 1e6 tets and 2e5 nodes assemble into 2e7 + 5.6e6 B.
  EXPECT_EQ(AssembledMeshBytes(1e6, 2e5), 2.56e7);
  const std::string message = FemMemoryError(1e6, 2e5, available);
  EXPECT_NE(message.find("rank 0 needs at least 0.0256 GB, more than the 0.01 GB available on its node (the test)"),
            std::string::npos)
      << message;
  available.rank0_node = 1e8;
  EXPECT_EQ(FemMemoryError(1e6, 2e5, available), "");
}

}  // namespace
}  // namespace optistep
