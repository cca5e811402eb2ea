// The optistep executable end to end: bad input stops with exit code 1 and one line on
// stderr naming the file and the key or element, and leaves earlier output untouched (an
// MPM scene far beyond the memory too, before it allocates);
// check, partition, --help and a short run work and write what the README says.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "TestScenes.hpp"
#include "TestUtil.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  std::string out;
  std::string err;
};

using test::ReadFile;

/// Runs `optistep <args>` in a shell (as an MPI singleton; the multi-rank run of the
/// executable is the ctest entry optistep_run.np2).
Outcome Optistep(const std::string& args, const fs::path& dir) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string command = std::string("cd '") + dir.string() + "' && ";
  command += std::string(OPTISTEP_EXECUTABLE) + " " + args + " > '" + out.string() + "' 2> '" +
             err.string() + "'";
  const int status = std::system(command.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = ReadFile(out);
  o.err = ReadFile(err);
  return o;
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::SharedTempDir("cli");
    test::WriteBoxMesh((dir_ / "box").string(), 2, 2, 2, Vec3(1, 1, 1));
    // Earlier output that a failing run must not touch.
    fs::create_directories(dir_ / "out");
    std::ofstream(dir_ / "out" / "stats.csv") << "earlier run\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Scene(const std::string& name, const std::string& body) const {
    std::ofstream(dir_ / name) << body;
    return name;
  }

  /// A valid scene with `replace` substituted for `find` (when given).
  std::string Variant(const std::string& name, const std::string& find = "",
                      const std::string& replace = "") const {
    std::string text = R"(time: {dt: 0.05, frame_rate: 20, frames: 2}
bodies:
  - name: box
    mesh: box.node
    material: {model: fixed_corotated, E: 1.0e5, nu: 0.3, density: 1000}
collision_objects:
  - {type: half_space, point: [0, -0.5, 0], normal: [0, 1, 0]}
output: {directory: out}
)";
    if (!find.empty()) text.replace(text.find(find), find.size(), replace);
    return Scene(name, text);
  }

  /// Expects exit code 1, one stderr line containing every piece, and untouched output.
  void ExpectInputError(const std::string& args, const std::vector<std::string>& pieces) {
    const Outcome o = Optistep(args, dir_);
    EXPECT_EQ(o.exit_code, 1) << args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    EXPECT_EQ(o.err.rfind("optistep: error: ", 0), 0u) << o.err;
    for (const auto& p : pieces) EXPECT_NE(o.err.find(p), std::string::npos) << o.err << " lacks " << p;
    EXPECT_EQ(ReadFile(dir_ / "out" / "stats.csv"), "earlier run\n");
    EXPECT_FALSE(AnyXdmf());
  }

  bool AnyXdmf() const {
    for (const auto& entry : fs::directory_iterator(dir_ / "out"))
      if (entry.path().extension() == ".xdmf") return true;
    return false;
  }

  fs::path dir_;
};

TEST_F(Cli, BadInputStopsWithOneLineNamingTheProblem) {
  ExpectInputError("run " + Variant("missing_mesh.yaml", "box.node", "nowhere.node"),
                   {"nowhere.node"});
  ExpectInputError("run " + Variant("material.yaml", "fixed_corotated", "jelly"),
                   {"material.yaml", "bodies[0].material.model", "jelly"});
  ExpectInputError("run " + Scene("malformed.yaml", "time: {dt: [0.1\nbodies: ]\n"),
                   {"malformed.yaml"});
  ExpectInputError("run " + Variant("density.yaml", "density: 1000", "density: -5"),
                   {"density.yaml", "bodies[0].material.density"});
  ExpectInputError("run " + Variant("dt.yaml", "dt: 0.05", "dt: 0"), {"dt.yaml", "time.dt"});
  ExpectInputError("run nothing_here.yaml", {"nothing_here.yaml"});
  ExpectInputError("run " + Variant("set.yaml") + " --set time.frames=-1", {"time.frames"});
  // An inverted tet: swap two corners of tet 5 in a copy of the mesh.
  fs::copy_file(dir_ / "box.node", dir_ / "inverted.node");
  std::ifstream in(dir_ / "box.ele");
  std::ofstream out(dir_ / "inverted.ele");
  std::string line;
  for (int i = 0; std::getline(in, line); ++i) {
    if (i == 6) {  // header + tets 0..4 precede tet 5
      std::istringstream s(line);
      int id, a, b, c, d;
      s >> id >> a >> b >> c >> d;
      line = std::to_string(id) + " " + std::to_string(a) + " " + std::to_string(c) + " " +
             std::to_string(b) + " " + std::to_string(d);
    }
    out << line << "\n";
  }
  out.close();
  ExpectInputError("run " + Variant("inverted.yaml", "box.node", "inverted.node"),
                   {"inverted.ele", "tet 5"});
}

TEST_F(Cli, AnMpmRunBeyondTheMemoryIsRefusedBeforeSampling) {
  // mpm.dx = 1e-4 where 1e-2 was meant: 6.4e10 particles.
  const std::string scene = Scene("typo.yaml", R"(discretization: mpm
mpm: {dx: 1.0e-4, ppc: 8}
time: {frame_rate: 24, frames: 1}
bodies:
  - shape: {type: box, min: [0, 0, 0], max: [0.2, 0.2, 0.2]}
    material: {E: 1.0e5, nu: 0.3, density: 1000}
output: {directory: out}
)");
  // 2 GB of address space (inherited by the run): sampling, which allocates the particles
  // first, would end in std::bad_alloc within seconds instead of filling the machine.
  rlimit unlimited{}, limited{};
  getrlimit(RLIMIT_AS, &unlimited);
  limited = unlimited;
  limited.rlim_cur = rlim_t{2} << 30;
  setrlimit(RLIMIT_AS, &limited);
  const auto start = std::chrono::steady_clock::now();
  ExpectInputError("run " + scene, {"typo.yaml: mpm.dx = 0.0001 m and mpm.ppc = 8", "6.4e+10 particles",
                                    "GB available on the run's 1 node", "MemAvailable in /proc/meminfo",
                                    "expected a larger mpm.dx or a smaller mpm.ppc"});
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  setrlimit(RLIMIT_AS, &unlimited);
  EXPECT_LT(took.count(), 20.0) << "refused before sampling";
}

TEST_F(Cli, HelpCheckAndPartition) {
  Outcome o = Optistep("--help", dir_);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("optistep run SCENE.yaml"), std::string::npos);
  o = Optistep("frobnicate x.yaml", dir_);
  EXPECT_EQ(o.exit_code, 1);
  o = Optistep("check " + Variant("ok.yaml"), dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("48 tets"), std::string::npos) << o.out;
  EXPECT_FALSE(AnyXdmf());
  o = Optistep("partition " + Variant("ok.yaml") + " --ranks 3", dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("edge cut"), std::string::npos) << o.out;
}

TEST_F(Cli, RunWritesFramesAndStats) {
  const Outcome o = Optistep("run " + Variant("ok.yaml") + " --set time.frames=3 -newton_pc_type gamg", dir_);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("frames written to out"), std::string::npos) << o.out;
  // The scene is named after its file: ok.yaml -> ok.xdmf.
  EXPECT_TRUE(fs::exists(dir_ / "out" / "ok.xdmf"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "ok_mesh.h5"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "scene.yaml"));
  for (int f = 0; f <= 3; ++f) {
    char name[64];
    std::snprintf(name, sizeof(name), "ok_%06d.h5", f);
    EXPECT_TRUE(fs::exists(dir_ / "out" / "frames" / name)) << name;
  }
  // 3 frames of 1/20 s at dt = 0.05 s: one header and 3 step rows.
  const std::string stats = ReadFile(dir_ / "out" / "stats.csv");
  EXPECT_EQ(std::count(stats.begin(), stats.end(), '\n'), 4) << stats;
  EXPECT_EQ(stats.rfind("step,t,dt,", 0), 0u);
}

}  // namespace
}  // namespace optistep
