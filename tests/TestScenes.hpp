#pragma once
// Scenes and meshes made by the tests themselves: structured box meshes written as
// TetGen .node/.ele files and scene YAML written to a per-run temporary folder.
#include <mpi.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "TempDirs.hpp"
#include "core/Types.hpp"
#include "app/SceneConfig.hpp"

namespace optistep::test {

/// A temporary folder shared by all ranks (rank 0 creates it; the name is broadcast).
inline std::string SharedTempDir(const std::string& tag) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char buffer[512] = {0};
  if (rank == 0) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / ("optistep_" + tag + "_XXXXXX")).string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    const char* made = mkdtemp(name.data());
    std::snprintf(buffer, sizeof(buffer), "%s", made ? made : "/tmp");
  }
  MPI_Bcast(buffer, sizeof(buffer), MPI_CHAR, 0, MPI_COMM_WORLD);
  TempDirs().push_back(buffer);
  return buffer;
}

/// Writes dir/tet.node|ele: the one tet (0,0,0), (1,0,0), (0,1,0), (0,0,1) in m (volume 1/6
/// m^3), for the single-element oscillators. Rank 0 writes; everyone waits.
inline void WriteUnitTet(const std::string& dir) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::ofstream(dir + "/tet.node") << "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n";
    std::ofstream(dir + "/tet.ele") << "1 4 0\n0 0 1 2 3\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/// Writes <stem>.node/.ele of the box [0, L] split into nx*ny*nz hexes of 6 tets each
/// (Kuhn subdivision along the main diagonal, all tets positively oriented). Rank 0
/// writes; everyone waits. Returns the .node path.
inline std::string WriteBoxMesh(const std::string& stem, int nx, int ny, int nz, const Vec3& L) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    auto id = [&](int i, int j, int k) { return i + (nx + 1) * (j + (ny + 1) * k); };
    std::vector<Vec3> X;
    for (int k = 0; k <= nz; ++k)
      for (int j = 0; j <= ny; ++j)
        for (int i = 0; i <= nx; ++i)
          X.emplace_back(L[0] * i / nx, L[1] * j / ny, L[2] * k / nz);
    // The 6 paths from corner 0 to corner 7 of a hex, one tet each.
    const int paths[6][2] = {{1, 3}, {1, 5}, {2, 3}, {2, 6}, {4, 5}, {4, 6}};
    std::vector<std::array<int, 4>> tets;
    for (int k = 0; k < nz; ++k)
      for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
          auto corner = [&](int c) { return id(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1)); };
          for (const auto& p : paths) {
            std::array<int, 4> t = {corner(0), corner(p[0]), corner(p[1]), corner(7)};
            Mat3 D;
            for (int a = 1; a < 4; ++a) D.col(a - 1) = X[t[a]] - X[t[0]];
            if (D.determinant() < 0) std::swap(t[2], t[3]);
            tets.push_back(t);
          }
        }
    std::ofstream node(stem + ".node");
    node.precision(17);
    node << X.size() << " 3 0 0\n";
    for (size_t n = 0; n < X.size(); ++n)
      node << n << " " << X[n][0] << " " << X[n][1] << " " << X[n][2] << "\n";
    std::ofstream ele(stem + ".ele");
    ele << tets.size() << " 4 0\n";
    for (size_t e = 0; e < tets.size(); ++e)
      ele << e << " " << tets[e][0] << " " << tets[e][1] << " " << tets[e][2] << " "
          << tets[e][3] << "\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return stem + ".node";
}

/// Writes a scene file (rank 0) and reads it back on every rank.
inline SceneConfig MakeScene(const std::string& path, const std::string& yaml,
                             const std::vector<std::string>& overrides = {}) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::ofstream(path) << yaml;
  MPI_Barrier(MPI_COMM_WORLD);
  return ReadSceneConfig(path, overrides);
}

/// DOT's twist test shape: a 4 x 1 x 1 m bar (8 x 2 x 2 hexes) of FCR, rotated in opposite
/// senses at both ends by Dirichlet conditions, under gravity, on a ground with friction; 4
/// frames of 0.05 s in steps of 0.025 s. Written to a temporary folder named after tag;
/// overrides as --set gives them.
inline SceneConfig TwistedBarScene(const std::string& tag,
                                   const std::vector<std::string>& overrides = {}) {
  const std::string dir = SharedTempDir(tag);
  WriteBoxMesh(dir + "/bar", 8, 2, 2, Vec3(4.0, 1.0, 1.0));
  return MakeScene(dir + "/twist.yaml", R"(
time: {dt: 0.025, frame_dt: 0.05, frames: 4}
gravity: [0, -9.81, 0]
bodies:
  - mesh: bar.node
    material: {E: 1.0e5, nu: 0.4, density: 1000}
    transform: {translate: [0, 0.2, 0]}
boundary_conditions:
  - select: {axis: x, end: min, within: 0.01}
    motion: [{rotate: {axis: [1, 0, 0], angular_velocity: -3.0}}]
  - select: {axis: x, end: max, within: 0.01}
    motion: [{rotate: {axis: [1, 0, 0], angular_velocity: 3.0}}]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], friction: 0.3}
solver: {cn_epsilon: 1.0e-9}
)",
                   overrides);
}

/// The text of a valid FEM scene for the suites that run the executable: the mesh box.node
/// beside the scene file (WriteBoxMesh), 2 frames of one 0.05 s step over a floor, output in
/// out/ (relative to where the run starts); with `replace` for the first `find` if given.
inline std::string BoxScene(const std::string& find = "", const std::string& replace = "") {
  std::string text = R"(time: {dt: 0.05, frame_rate: 20, frames: 2}
bodies:
  - name: box
    mesh: box.node
    material: {model: fixed_corotated, E: 1.0e5, nu: 0.3, density: 1000}
collision_objects:
  - {type: half_space, point: [0, -0.5, 0], normal: [0, 1, 0]}
output: {directory: out}
)";
  if (find.empty()) return text;
  const std::size_t at = text.find(find);
  if (at == std::string::npos) throw std::invalid_argument("BoxScene: no '" + find + "'");
  return text.replace(at, find.size(), replace);
}

/// Writes dir/box.node|ele (a 1 x 0.5 x 0.5 m box of 12 tets) and dir/drop.yaml: the box
/// thrown along a floor with friction, 2 steps of a few milliseconds per frame, frames as
/// given, a frame file every 10 frames, output in dir/out. For the suites that run the
/// executable (not MPI-collective: a serial suite's process alone).
inline void WriteDropScene(const std::filesystem::path& dir, int frames) {
  WriteBoxMesh((dir / "box").string(), 2, 1, 1, Vec3(1.0, 0.5, 0.5));
  std::ofstream(dir / "drop.yaml") << "time: {dt: 0.005, frame_dt: 0.01, frames: " << frames
                                   << R"(}
bodies:
  - mesh: box.node
    material: {E: 1.0e5, nu: 0.3, density: 1000}
    transform: {translate: [0, 0.05, 0]}
    initial_velocity: [1, 0, 0]
collision_objects:
  - {type: half_space, point: [0, 0, 0], normal: [0, 1, 0], friction: 0.5}
output: {directory: out, every: 10}
)";
}

}  // namespace optistep::test
