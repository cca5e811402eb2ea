// MPM particle seeding (mpm/Shapes, io/SurfaceMesh and mpm/ClosedSurface, mpm/Sampling).
// Reference numbers: analytic volumes (box: product of sides; ball 4/3 pi r^3; capped
// cylinder 2 pi r^2 h; ring torus 2 pi^2 R r^2; unit cube 1; the tet (0,0,0) (1,0,0)
// (0,1,0) (0,0,1) 1/6), closed-form signed distances, and for the CGAL meshes the volume
// by the divergence theorem and by summing TetGen's tets (the elephant's surface and its
// TetGen mesh sample the same particles; inside/outside of its surface agrees with the
// generalized winding number); Shape::Volume gives the same
// numbers. A particle stands for dx^3 / ppc, so count * dx^3 / ppc estimates a volume;
// cells wholly inside hold exactly ppc particles.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <sstream>
#include <string>

#include "core/Error.hpp"
#include "io/SurfaceMesh.hpp"
#include "io/TetMesh.hpp"
#include "mpm/ClosedSurface.hpp"
#include "mpm/Sampling.hpp"
#include "mpm/Shapes.hpp"
#include "TestUtil.hpp"

namespace optistep::mpm {
namespace {

using test::SourcePath;

/// The InputError message f() throws; a test failure if it throws none.
template <class F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "threw no InputError";
  return "";
}

/// Writes bytes to a file in the test's temporary folder and returns its path.
std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = ::testing::TempDir() + "optistep_mpm_sampling_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

double SampledVolume(const SampledParticles& p, double dx, int ppc) {
  return static_cast<double>(p.x.size()) * ParticleVolume(dx, ppc);
}

void ExpectSameParticles(const SampledParticles& expected, const SampledParticles& actual) {
  ASSERT_EQ(expected.x.size(), actual.x.size());
  EXPECT_EQ(expected.id, actual.id);
  for (std::size_t p = 0; p < expected.x.size(); ++p) ASSERT_EQ(expected.x[p], actual.x[p]) << "particle " << p;
}

// ---- Primitives --------------------------------------------------------------------

TEST(Shapes, SignedDistancesMatchClosedForms) {
  const Box box(Vec3(0, 0, 0), Vec3(2, 1, 1));
  EXPECT_DOUBLE_EQ(box.SignedDistance(Vec3(1, 0.5, 0.25)), -0.25);
  EXPECT_DOUBLE_EQ(box.SignedDistance(Vec3(3, 2, 0.5)), std::sqrt(2.0));  // nearest: edge
  const Sphere sphere(Vec3(1, 1, 1), 0.5);
  EXPECT_DOUBLE_EQ(sphere.SignedDistance(Vec3(1, 1, 3)), 1.5);
  EXPECT_DOUBLE_EQ(sphere.SignedDistance(Vec3(1, 1, 1)), -0.5);
  // Axis along y (given unnormalized): radial 0.3 + 0.4 outside the 0.3 radius, axial 1
  // past the cap: distance to the rim is |(0.4, 1)|.
  const Cylinder cylinder(Vec3(0, 0, 0), Vec3(0, 5, 0), 0.3, 1.0);
  EXPECT_NEAR(cylinder.SignedDistance(Vec3(0.7, 2.0, 0.0)), std::hypot(0.4, 1.0), 1e-15);
  EXPECT_NEAR(cylinder.SignedDistance(Vec3(0.0, 0.9, 0.1)), -0.1, 1e-15);  // nearest: cap
  EXPECT_NEAR(cylinder.SignedDistance(Vec3(0.25, 0.0, 0.0)), -0.05, 1e-15);  // nearest: side
  const Torus torus(Vec3(0, 0, 0), Vec3(0, 0, 2), 1.0, 0.25);
  EXPECT_NEAR(torus.SignedDistance(Vec3(1.0, 0.0, 0.0)), -0.25, 1e-15);  // on the core circle
  EXPECT_NEAR(torus.SignedDistance(Vec3(0.0, 0.0, 0.0)), 0.75, 1e-15);
  EXPECT_NEAR(torus.SignedDistance(Vec3(0.0, 1.0, 0.5)), 0.25, 1e-15);
  EXPECT_TRUE(torus.Inside(Vec3(0, -1.1, 0.1)));
  EXPECT_FALSE(torus.Inside(Vec3(0, 0, 0)));
}

TEST(Shapes, BoundsOfTiltedCylinderAndTorusAreTight) {
  // Axis (0, 0.6, 0.8): extents h |a_e| + r sqrt(1 - a_e^2) and R sqrt(1 - a_e^2) + r.
  const Cylinder cylinder(Vec3(1, 2, 3), Vec3(0, 3, 4), 0.5, 2.0);
  const Aabb c = cylinder.Bounds();
  EXPECT_NEAR(c.hi.x() - 1, 0.5, 1e-15);
  EXPECT_NEAR(c.hi.y() - 2, 2.0 * 0.6 + 0.5 * 0.8, 1e-15);
  EXPECT_NEAR(3 - c.lo.z(), 2.0 * 0.8 + 0.5 * 0.6, 1e-15);
  const Torus torus(Vec3(0, 0, 0), Vec3(0, 3, 4), 1.0, 0.25);
  const Aabb t = torus.Bounds();
  EXPECT_NEAR(t.hi.x(), 1.25, 1e-15);
  EXPECT_NEAR(t.hi.y(), 0.8 + 0.25, 1e-15);
  EXPECT_NEAR(t.lo.z(), -(0.6 + 0.25), 1e-15);
}

TEST(Shapes, InvalidParametersAreRefusedNamingShapeAndParameter) {
  auto expect = [](const std::string& message, const std::string& shape, const std::string& parameter) {
    EXPECT_NE(message.find(shape + ": " + parameter), std::string::npos) << message;
  };
  expect(ErrorOf([] { Sphere(Vec3(0, 0, 0), -1.0); }), "sphere", "radius");
  expect(ErrorOf([] { Sphere(Vec3(0, 0, 0), 0.0); }), "sphere", "radius");
  expect(ErrorOf([] { Sphere(Vec3(0, NAN, 0), 1.0); }), "sphere", "center");
  expect(ErrorOf([] { Box(Vec3(0, 1, 0), Vec3(1, 0, 1)); }), "box", "min");
  expect(ErrorOf([] { Box(Vec3(0, 0, 0), Vec3(1, 1, 0)); }), "box", "min");  // flat
  expect(ErrorOf([] { Cylinder(Vec3(0, 0, 0), Vec3(0, 0, 0), 1.0, 1.0); }), "cylinder", "axis");
  expect(ErrorOf([] { Cylinder(Vec3(0, 0, 0), Vec3(0, 0, 1), -0.5, 1.0); }), "cylinder", "radius");
  expect(ErrorOf([] { Cylinder(Vec3(0, 0, 0), Vec3(0, 0, 1), 0.5, 0.0); }), "cylinder", "half_length");
  expect(ErrorOf([] { Torus(Vec3(0, 0, 0), Vec3(0, 0, 0), 1.0, 0.2); }), "torus", "axis");
  expect(ErrorOf([] { Torus(Vec3(0, 0, 0), Vec3(0, 1, 0), -1.0, 0.2); }), "torus", "major_radius");
  expect(ErrorOf([] { Torus(Vec3(0, 0, 0), Vec3(0, 1, 0), 1.0, 0.0); }), "torus", "minor_radius");
  expect(ErrorOf([] { Torus(Vec3(0, 0, 0), Vec3(0, 1, 0), 1.0, 1.5); }), "torus", "minor_radius");
  expect(ErrorOf([] { Sphere(Vec3(0, 0, 0), -2.0, "bodies[3]"); }), "bodies[3]", "radius");
}

// ---- Sampling ----------------------------------------------------------------------

TEST(Sampling, GridAlignedBoxHoldsExactlyCellsTimesPpc) {
  const double dx = 0.125;  // a power of 2: the faces below lie exactly on grid planes
  const Box box(Vec3(-0.25, 0.0, 0.5), Vec3(0.5, 0.375, 1.0), "aligned box");
  EXPECT_DOUBLE_EQ(box.Volume(), 0.75 * 0.375 * 0.5);
  for (int ppc : {1, 8, 27}) {
    const SampledParticles p = Sample(box, dx, ppc, 7);
    EXPECT_EQ(p.x.size(), static_cast<std::size_t>(6 * 3 * 4 * ppc)) << "ppc " << ppc;
    ASSERT_EQ(p.x.size(), p.id.size());
    EXPECT_TRUE(std::is_sorted(p.id.begin(), p.id.end()));
    EXPECT_EQ(std::adjacent_find(p.id.begin(), p.id.end()), p.id.end()) << "ids are unique";
    for (const Vec3& x : p.x) EXPECT_TRUE(box.Inside(x));
  }
}

TEST(Sampling, VolumesOfSphereCylinderAndTorusMatchAnalytic) {
  const double dx = 0.04;
  const int ppc = 8;
  const double pi = M_PI;
  const Sphere sphere(Vec3(0.1, -0.2, 0.3), 0.5);
  EXPECT_NEAR(SampledVolume(Sample(sphere, dx, ppc, 1), dx, ppc) / (4.0 / 3.0 * pi * 0.125), 1.0, 0.01);
  EXPECT_DOUBLE_EQ(sphere.Volume(), 4.0 / 3.0 * pi * 0.125);
  const Cylinder cylinder(Vec3(0.0, 0.1, 0.0), Vec3(1, 2, 2), 0.3, 0.5);
  EXPECT_DOUBLE_EQ(cylinder.Volume(), 2.0 * pi * 0.09 * 0.5);
  const SampledParticles c = Sample(cylinder, dx, ppc, 2);
  EXPECT_NEAR(SampledVolume(c, dx, ppc) / (2.0 * pi * 0.09 * 0.5), 1.0, 0.02);
  const Aabb bounds = cylinder.Bounds();
  for (const Vec3& x : c.x)
    EXPECT_TRUE((x.array() >= bounds.lo.array()).all() && (x.array() <= bounds.hi.array()).all());
  const Torus torus(Vec3(0, 0, 0), Vec3(0, 1, 1), 0.5, 0.15);
  EXPECT_DOUBLE_EQ(torus.Volume(), 2.0 * pi * pi * 0.5 * 0.0225);
  EXPECT_NEAR(SampledVolume(Sample(torus, dx, ppc, 3), dx, ppc) / (2.0 * pi * pi * 0.5 * 0.0225), 1.0, 0.02);
}

TEST(Sampling, SameCallTwiceIsIdenticalAndAnotherSeedIsNot) {
  const Sphere sphere(Vec3(0, 0, 0), 0.3);
  const SampledParticles a = Sample(sphere, 0.05, 8, 42);
  ExpectSameParticles(a, Sample(sphere, 0.05, 8, 42));
  const SampledParticles b = Sample(sphere, 0.05, 8, 43);
  EXPECT_NE(a.x.front(), b.x.front());
}

TEST(Sampling, UnionOfPiecesEqualsTheWhole) {
  // Split planes through the middle of cells: the pieces share those cells, and each
  // keeps its own half of their candidates.
  const Sphere sphere(Vec3(0.03, -0.02, 0.01), 0.4);
  const auto inside = [&](const Vec3& x) { return sphere.Inside(x); };
  const double dx = 0.05;
  const int ppc = 8;
  const uint64_t seed = 2024;
  const Aabb whole = sphere.Bounds();
  const SampledParticles expected = SampleInside(inside, whole, dx, ppc, seed);
  for (int axis = 0; axis < 3; ++axis) {
    Aabb low = whole, high = whole;
    low.hi[axis] = high.lo[axis] = 0.0137 + 0.1 * axis;
    SampledParticles merged = SampleInside(inside, low, dx, ppc, seed);
    const SampledParticles second = SampleInside(inside, high, dx, ppc, seed);
    ASSERT_FALSE(merged.x.empty());
    ASSERT_FALSE(second.x.empty());
    merged.x.insert(merged.x.end(), second.x.begin(), second.x.end());
    merged.id.insert(merged.id.end(), second.id.begin(), second.id.end());
    std::vector<std::size_t> order(merged.id.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return merged.id[a] < merged.id[b]; });
    SampledParticles sorted;
    for (std::size_t p : order) {
      sorted.x.push_back(merged.x[p]);
      sorted.id.push_back(merged.id[p]);
    }
    ExpectSameParticles(expected, sorted);
  }
}

TEST(Sampling, BadSpacingPpcAndEmptyShapesAreRefused) {
  const Sphere sphere(Vec3(0, 0, 0), 0.3, "ball");
  EXPECT_NE(ErrorOf([&] { Sample(sphere, 0.0, 8, 1); }).find("ball: grid spacing dx = 0"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { Sample(sphere, -0.1, 8, 1); }).find("dx"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { Sample(sphere, NAN, 8, 1); }).find("dx"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { Sample(sphere, 0.1, 0, 1); }).find("ball: particles per cell ppc = 0"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { Sample(sphere, 0.1, -3, 1); }).find("ppc"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { Sample(sphere, 0.1, kMaxParticlesPerCell + 1, 1); }).find("ppc"), std::string::npos);
  const Sphere speck(Vec3(0.05, 0.05, 0.05), 1e-4, "speck");
  EXPECT_NE(ErrorOf([&] { Sample(speck, 0.1, 1, 1); }).find("speck: holds no particle"), std::string::npos);
  const Sphere far(Vec3(1e6, 0, 0), 1.0, "far");
  EXPECT_NE(ErrorOf([&] { Sample(far, 0.5, 1, 1); }).find("far: x from"), std::string::npos);
}

// ---- Surface readers ---------------------------------------------------------------

const char* const kTetrahedronOff =
    "OFF\n"
    "# the corner tetrahedron, volume 1/6\n"
    "4 4 6\n"
    "0 0 0\n1 0 0   # vertex 1\n0 1 0\n\n0 0 1\n"
    "3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3 255 0 0\n";

/// The unit cube as 6 quads (fan-triangulated into 12 triangles); without the top face
/// when open.
std::string CubeOff(bool open) {
  std::string off = "OFF\n8 " + std::string(open ? "5" : "6") + " 0\n";
  for (int v = 0; v < 8; ++v) off += std::to_string(v & 1) + " " + std::to_string((v >> 1) & 1) + " " + std::to_string(v >> 2) + "\n";
  off += "4 0 2 3 1\n4 0 1 5 4\n4 0 4 6 2\n4 1 3 7 5\n4 2 6 7 3\n";
  if (!open) off += "4 4 5 7 6\n";
  return off;
}

/// The unit cube's 12 triangles as corner coordinates, for writing STL.
std::vector<std::array<Vec3, 3>> CubeTriangles() {
  const TriangleSurface cube = ReadSurfaceMesh(WriteTemp("cube_for_stl.off", CubeOff(false)));
  std::vector<std::array<Vec3, 3>> triangles;
  for (const auto& t : cube.triangles)
    triangles.push_back({cube.vertices[t[0]], cube.vertices[t[1]], cube.vertices[t[2]]});
  return triangles;
}

std::string AsciiStl(const std::vector<std::array<Vec3, 3>>& triangles) {
  std::ostringstream out;
  out << "solid cube\n";
  for (std::size_t f = 0; f < triangles.size(); ++f) {
    out << "  facet normal 0 0 0\n    outer loop\n";
    // Odd facets write 0 as -0, which must weld with 0.
    for (const Vec3& x : triangles[f]) {
      out << "      vertex";
      for (int d = 0; d < 3; ++d) out << " " << (f % 2 && x[d] == 0.0 ? "-0" : std::to_string(x[d]));
      out << "\n";
    }
    out << "    endloop\n  endfacet\n";
  }
  out << "endsolid cube\n";
  return out.str();
}

/// Binary STL whose header starts with "solid", as some exporters write it.
std::string BinaryStl(const std::vector<std::array<Vec3, 3>>& triangles) {
  std::string bytes = "solid binary file, header text that looks like ASCII STL";
  bytes.resize(80, ' ');
  auto put32 = [&bytes](uint32_t v) {
    for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
  };
  auto put_float = [&put32](double x) {
    const float f = static_cast<float>(x);
    uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    put32(bits);
  };
  put32(static_cast<uint32_t>(triangles.size()));
  for (const auto& t : triangles) {
    for (int d = 0; d < 3; ++d) put_float(0.0);  // normal
    for (const Vec3& x : t)
      for (int d = 0; d < 3; ++d) put_float(x[d]);
    bytes += std::string(2, '\0');  // attribute byte count
  }
  return bytes;
}

/// Inside agrees with the unit cube's on a lattice of points off its faces.
void ExpectUnitCube(const ClosedSurface& cube) {
  for (int a = 0; a < 9; ++a)
    for (int b = 0; b < 9; ++b)
      for (int c = 0; c < 9; ++c) {
        const Vec3 x = Vec3(-0.3, -0.3, -0.3) + 0.2 * Vec3(a, b, c);
        const bool expected = (x.array() > 0.0).all() && (x.array() < 1.0).all();
        EXPECT_EQ(cube.Inside(x), expected) << cube.Name() << " at " << x.transpose();
      }
}

TEST(SurfaceMesh, OffTetrahedronWithCommentsAndColours) {
  const std::string path = WriteTemp("tetrahedron.off", kTetrahedronOff);
  const TriangleSurface surface = ReadSurfaceMesh(path);
  ASSERT_EQ(surface.vertices.size(), 4u);
  ASSERT_EQ(surface.triangles.size(), 4u);
  EXPECT_EQ(surface.vertices[3], Vec3(0, 0, 1));
  EXPECT_EQ(surface.triangles[3], (std::array<int, 3>{1, 2, 3}));
  EXPECT_NEAR(EnclosedVolume(surface), 1.0 / 6.0, 1e-15);
  const ClosedSurface tet(surface, path);
  EXPECT_TRUE(tet.Inside(Vec3(0.1, 0.1, 0.1)));
  EXPECT_TRUE(tet.Inside(Vec3(0.3, 0.3, 0.3)));
  EXPECT_TRUE(tet.Inside(Vec3(0.01, 0.9, 0.05)));
  EXPECT_FALSE(tet.Inside(Vec3(0.4, 0.4, 0.4)));
  EXPECT_FALSE(tet.Inside(Vec3(-0.1, 0.1, 0.1)));
  EXPECT_FALSE(tet.Inside(Vec3(2, 2, 2)));
}

TEST(SurfaceMesh, OffCubeOfQuadsIsFanTriangulated) {
  const std::string path = WriteTemp("cube.off", CubeOff(false));
  const TriangleSurface surface = ReadSurfaceMesh(path);
  EXPECT_EQ(surface.vertices.size(), 8u);
  EXPECT_EQ(surface.triangles.size(), 12u);
  EXPECT_EQ(surface.triangles[0], (std::array<int, 3>{0, 2, 3}));
  EXPECT_EQ(surface.triangles[1], (std::array<int, 3>{0, 3, 1}));
  EXPECT_NEAR(EnclosedVolume(surface), 1.0, 1e-15);
  ExpectUnitCube(ClosedSurface(surface, path));
}

TEST(SurfaceMesh, ObjCubeOfQuadsWithTextureAndNormalIndices) {
  // The cube of CubeOff as OBJ: 1-based corners in the four forms, and negative indices.
  std::string obj = "# unit cube\no cube\nmtllib cube.mtl\n";
  for (int v = 0; v < 8; ++v)
    obj += "v " + std::to_string(v & 1) + " " + std::to_string((v >> 1) & 1) + " " + std::to_string(v >> 2) + "\n";
  obj += "vt 0 0\nvn 0 0 -1\ns off\n"
         "f 1 3 4 2\nf 1/1 2/1 6/1 5/1\nf 1/1/1 5/1/1 7/1/1 3/1/1\nf 2//1 4//1 8//1 6//1\n"
         "f -6 -2 -1 -5\nf 5 6 8 7\n";
  const std::string path = WriteTemp("cube.OBJ", obj);
  const TriangleSurface surface = ReadSurfaceMesh(path);
  EXPECT_EQ(surface.vertices.size(), 8u);
  EXPECT_EQ(surface.triangles.size(), 12u);
  EXPECT_EQ(surface.vertices[6], Vec3(0, 1, 1));
  EXPECT_EQ(surface.triangles[0], (std::array<int, 3>{0, 2, 3}));
  EXPECT_EQ(surface.triangles[1], (std::array<int, 3>{0, 3, 1}));
  EXPECT_EQ(surface.triangles[4], (std::array<int, 3>{0, 4, 6}));
  EXPECT_EQ(surface.triangles[8], (std::array<int, 3>{2, 6, 7}));
  EXPECT_NEAR(EnclosedVolume(surface), 1.0, 1e-15);
  ExpectUnitCube(ClosedSurface(surface, path));
}

TEST(SurfaceMesh, AsciiAndBinaryStlCubesAreWelded) {
  const auto triangles = CubeTriangles();
  for (const auto& [name, bytes] : {std::pair{"cube_ascii.STL", AsciiStl(triangles)},
                                    std::pair{"cube_binary.stl", BinaryStl(triangles)}}) {
    const std::string path = WriteTemp(name, bytes);
    const TriangleSurface surface = ReadSurfaceMesh(path);
    EXPECT_EQ(surface.vertices.size(), 8u) << name;
    EXPECT_EQ(surface.triangles.size(), 12u) << name;
    EXPECT_NEAR(EnclosedVolume(surface), 1.0, 1e-15) << name;
    ExpectUnitCube(ClosedSurface(surface, path));
  }
}

TEST(SurfaceMesh, OpenSurfaceIsRefusedNamingAnEdge) {
  const std::string path = WriteTemp("open_cube.off", CubeOff(true));
  const TriangleSurface surface = ReadSurfaceMesh(path);
  // The missing top face (4 5 7 6) leaves its 4 edges with one triangle each; 4-5 is the
  // first in vertex order.
  EXPECT_EQ(ErrorOf([&] { ClosedSurface(surface, path); }),
            path + ": surface is not closed (edge 4-5 used by 1 triangle)");
}

TEST(SurfaceMesh, MalformedFilesAreRefusedNamingFileAndLine) {
  auto error = [](const std::string& name, const std::string& text) {
    const std::string path = WriteTemp(name, text);
    return ErrorOf([&] { ReadSurfaceMesh(path); });
  };
  EXPECT_NE(error("bad_index.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n")
                .find("bad_index.off:6: face 0 refers to vertex 3"),
            std::string::npos);
  EXPECT_NE(error("short.off", "OFF\n3 2 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n").find("unexpected end of file"),
            std::string::npos);
  EXPECT_NE(error("coff.off", "COFF\n").find("coff.off:1: expected the keyword OFF"), std::string::npos);
  EXPECT_NE(error("bad_vertex.stl", "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 zero\n")
                .find("bad_vertex.stl:4: field 4 'zero' is not a finite number"),
            std::string::npos);
  EXPECT_NE(error("neither.stl", "not an stl file\n").find("neither binary STL"), std::string::npos);
  EXPECT_NE(error("mesh.ply", "ply\n").find("unknown surface file extension '.ply'"), std::string::npos);
  EXPECT_NE(error("bad_face.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n")
                .find("bad_face.obj:4: face 0 refers to vertex 4"),
            std::string::npos);
  EXPECT_NE(error("curve.obj", "v 0 0 0\ncurv 0 1 1 2\n").find("curve.obj:2: unknown OBJ statement 'curv'"),
            std::string::npos);
}

// ---- Sampling meshes ---------------------------------------------------------------

TEST(Sampling, GridAlignedMeshCubesHoldExactlyCellsTimesPpc) {
  const double dx = 0.125;
  const std::string off = WriteTemp("cube_sampled.off", CubeOff(false));
  const ClosedSurface surface(ReadSurfaceMesh(off), off);
  EXPECT_EQ(Sample(surface, dx, 4, 5).x.size(), 512u * 4u);
  EXPECT_NEAR(surface.Volume(), 1.0, 1e-15);
  const std::string node = SourcePath("tests/data/unit_cube.node");
  const TetMeshShape tets(ReadTetMesh(node), node);
  EXPECT_EQ(Sample(tets, dx, 3, 5).x.size(), 512u * 3u);
  EXPECT_NEAR(tets.Volume(), 1.0, 1e-15);
}

TEST(Sampling, ElephantSurfaceAndItsTetGenMeshGiveTheSameParticles) {
  const std::string off = test::FetchedMesh("elephant.off");
  const std::string node = test::FetchedMesh("elephant.1.node");
  if (off.empty()) return test::MissingFetchedMesh("elephant.off");
  if (node.empty()) return test::MissingFetchedMesh("elephant.1.node");
  const ClosedSurface surface(ReadSurfaceMesh(off), off);
  const TetMeshData mesh = ReadTetMesh(node);
  double tet_volume = 0.0;
  for (int t = 0; t < static_cast<int>(mesh.tets.size()); ++t) tet_volume += SignedVolume(mesh, t);
  EXPECT_NEAR(EnclosedVolume(surface.Surface()) / tet_volume, 1.0, 1e-6);  // TetGen rounds the coordinates it writes
  EXPECT_EQ(surface.Volume(), EnclosedVolume(surface.Surface()));
  EXPECT_NEAR(TetMeshShape(mesh, node).Volume() / tet_volume, 1.0, 1e-12);
  // TetGen -p keeps the surface, so both shapes are one solid and, with the same
  // candidates, keep the same particles (up to candidates within rounding of the surface).
  const double dx = 0.02;
  const int ppc = 8;
  const SampledParticles from_surface = Sample(surface, dx, ppc, 9);
  const SampledParticles from_tets = Sample(TetMeshShape(mesh, node), dx, ppc, 9);
  std::vector<int64_t> differ;
  std::set_symmetric_difference(from_surface.id.begin(), from_surface.id.end(), from_tets.id.begin(),
                                from_tets.id.end(), std::back_inserter(differ));
  EXPECT_LE(differ.size(), 2u);
  EXPECT_NEAR(SampledVolume(from_surface, dx, ppc) / tet_volume, 1.0, 0.02);
  std::printf("[          ] elephant: %zu particles at dx = %g, ppc = %d; %zu differ\n", from_surface.x.size(),
              dx, ppc, differ.size());
}

/// Generalized winding number of a closed surface about x: the solid angles of its
/// triangles over 4 pi (Van Oosterom and Strackee 1983), +-1 inside, 0 outside.
double WindingNumber(const TriangleSurface& surface, const Vec3& x) {
  double sum = 0.0;
  for (const auto& t : surface.triangles) {
    const Vec3 a = surface.vertices[t[0]] - x, b = surface.vertices[t[1]] - x, c = surface.vertices[t[2]] - x;
    const double la = a.norm(), lb = b.norm(), lc = c.norm();
    sum += 2.0 * std::atan2(a.dot(b.cross(c)), la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb);
  }
  return sum / (4.0 * M_PI);
}

TEST(SurfaceMesh, ElephantInsideAgreesWithWindingNumber) {
  const std::string off = test::FetchedMesh("elephant.off");
  if (off.empty()) return test::MissingFetchedMesh("elephant.off");
  const ClosedSurface elephant(ReadSurfaceMesh(off), off);
  const Aabb box = elephant.Bounds();
  // Points on a lattice through the bounding box, offset from the grid planes.
  int inside = 0;
  for (int a = 0; a < 12; ++a)
    for (int b = 0; b < 12; ++b)
      for (int c = 0; c < 12; ++c) {
        const Vec3 f = (Vec3(a, b, c).array() + 0.37) / 12.0;
        const Vec3 x = box.lo + f.cwiseProduct(box.hi - box.lo);
        const bool expected = std::abs(WindingNumber(elephant.Surface(), x)) > 0.5;
        EXPECT_EQ(elephant.Inside(x), expected) << "at " << x.transpose();
        inside += expected;
      }
  EXPECT_GT(inside, 100);
}

TEST(Sampling, ArmadilloIsSampledQuickly) {
  const std::string off = test::FetchedMesh("armadillo.off");
  if (off.empty()) return test::MissingFetchedMesh("armadillo.off");
  const auto start = std::chrono::steady_clock::now();
  const ClosedSurface armadillo(ReadSurfaceMesh(off), off);
  const auto built = std::chrono::steady_clock::now();
  const double dx = 2.5;
  const int ppc = 8;
  const SampledParticles p = Sample(armadillo, dx, ppc, 11);
  const auto sampled = std::chrono::steady_clock::now();
  const double volume = EnclosedVolume(armadillo.Surface());
  EXPECT_NEAR(SampledVolume(p, dx, ppc) / volume, 1.0, 0.02);
  EXPECT_GT(p.x.size(), 50000u);
  EXPECT_LT(p.x.size(), 400000u);
  using Seconds = std::chrono::duration<double>;
  std::printf("[          ] armadillo: %zu triangles, %zu particles at dx = %g, ppc = %d; "
              "read + grid %.2f s, sampling %.2f s\n",
              armadillo.Surface().triangles.size(), p.x.size(), dx, ppc, Seconds(built - start).count(),
              Seconds(sampled - built).count());
}

}  // namespace
}  // namespace optistep::mpm
