// The optistep executable end to end: bad input stops with exit code 1 and one line on
// stderr naming the file and the key or element, and leaves earlier output untouched (a
// scene name that is not one safe path component included, and an MPM scene far beyond
// the memory, before it allocates); a bad PETSc option value stops with one line naming
// the option; options set but never used are reported once (an error with
// --strict-options); usage errors are printed once however many ranks;
// check, partition, --help and a short run work and write what the README says.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>

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

using test::LinesStartingWith;
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

TEST_F(Cli, ASceneNameIsOneSafePathComponent) {
  // '../escaped' would put the frames beside out/, 'runs/bar_v2' in a folder never made.
  for (const std::string name : {"../escaped", "runs/bar_v2", ".hidden", "a b"}) {
    SCOPED_TRACE(name);
    ExpectInputError("run " + Variant("named.yaml", "time:", "name: '" + name + "'\ntime:"),
                     {"named.yaml", "name", name});
  }
  EXPECT_FALSE(fs::exists(dir_ / "escaped.xdmf"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "scene.yaml"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "runs"));
  // A file stem is the default name, so it follows the same rule.
  ExpectInputError("run '" + Variant("bad stem.yaml") + "'",
                   {"bad stem.yaml", "'bad stem'", "name"});
  const Outcome o =
      Optistep("check " + Variant("ok.yaml", "time:", "name: bar_v2.1-x\ntime:"), dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
}

TEST_F(Cli, AnOptionSetButNeverUsedIsReportedOnce) {
  const std::string run = "run " + Variant("ok.yaml") + " -newton_pc_typo jacobi";
  Outcome o = Optistep(run, dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_EQ(o.err.rfind("optistep: warning: ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("-newton_pc_typo"), std::string::npos) << o.err;
  // In the scene's petsc_options too; options that were used raise nothing.
  const std::string scene_options = "petsc_options: -newton_ksp_typo cg -newton_ksp_rtol 0.1\n";
  o = Optistep("run " + Variant("scene_options.yaml", "output:", scene_options + "output:") +
                   " -newton_pc_type jacobi -log_view :/dev/null",
               dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(LinesStartingWith(o.err, "optistep: warning: "), 1) << o.err;
  EXPECT_NE(o.err.find("-newton_ksp_typo"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("-newton_ksp_rtol"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("-log_view"), std::string::npos) << o.err;
  // --strict-options makes it an error, found after the first step: not at the end.
  o = Optistep(run + " --strict-options --set time.frames=20", dir_);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_EQ(o.err.rfind("optistep: error: ", 0), 0u) << o.err;
  EXPECT_NE(o.err.find("-newton_pc_typo"), std::string::npos) << o.err;
  const std::string stats = ReadFile(dir_ / "out" / "stats.csv");
  EXPECT_EQ(std::count(stats.begin(), stats.end(), '\n'), 2) << "one step, not 20";
}

TEST_F(Cli, ABadOptionValueStopsWithOneLineNamingTheOption) {
  // Some are judged when the option is read, some only at the first solve (a factorization
  // package, a preconditioner that does not take the matrix format).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"-hessian_mat_type nonsense", "-hessian_mat_type"},
      {"-newton_ksp_type nonsense", "-newton_ksp_type"},
      {"-newton_pc_type nonsense", "-newton_pc_type"},
      {"-newton_pc_type lu -newton_pc_factor_mat_solver_type nonsense",
       "-newton_pc_factor_mat_solver_type"},
      {"-hessian_mat_type sbaij -newton_pc_type gamg", "-newton_pc_type"},
      {"-newton_tao_ls_type nonsense", "-newton_tao_ls_type"},
      {"-newton_ksp_max_it abc", "-newton_ksp_max_it"},
      {"-solver_method lbfgs -lbfgsh_ksp_type nonsense", "-lbfgsh_ksp_type"},
      {"-solver_method lbfgs -lbfgs_initializer nonsense", "-lbfgs_initializer"},
      {"-solver_method nonsense", "-solver_method"},
      {"-solver_method dot -dot_subdomains_per_rank 0", "-dot_subdomains_per_rank"},
      {"-solver_method dot -dot_merge nonsense", "-dot_merge"},
      {"-solver_method dot -dot_sub_pc_factor_mat_solver_type nonsense", "-dot_sub_pc_factor_mat_solver_type"},
      {"-solver_method dot -dot_subdomains_per_rank 1000000", "dot.subdomains_per_rank"},
  };
  for (const auto& [options, name] : cases) {
    const Outcome o = Optistep("run " + Variant("ok.yaml") + " " + options, dir_);
    EXPECT_EQ(o.exit_code, 1) << options << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << options << "\n" << o.err;
    EXPECT_EQ(o.err.rfind("optistep: error: " + name, 0), 0u) << options << "\n" << o.err;
  }
}

TEST_F(Cli, UsageErrorsArePrintedOnceOnManyRanks) {
  // Before MPI starts every rank reads the command line; only the first one speaks.
  const std::string mpiexec = test::Mpiexec(2) + " " + OPTISTEP_EXECUTABLE;
  EXPECT_NE(test::Shell(dir_, mpiexec + " frobnicate x.yaml > o.txt 2> e.txt"), 0);
  const std::string err = ReadFile(dir_ / "e.txt");
  EXPECT_EQ(LinesStartingWith(err, "optistep: error: unknown command 'frobnicate'"), 1) << err;
  EXPECT_EQ(LinesStartingWith(err, "(see optistep --help)"), 1) << err;
  EXPECT_EQ(test::Shell(dir_, mpiexec + " --help > o.txt 2> e.txt"), 0);
  const std::string out = ReadFile(dir_ / "o.txt");
  EXPECT_EQ(LinesStartingWith(out, "usage:"), 1) << out;
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
  // Sampling first would end in std::bad_alloc (exit 3) under that limit: an input error
  // (exit 1) with the estimate says the run was refused before it.
  ExpectInputError("run " + scene, {"typo.yaml: mpm.dx = 0.0001 m and mpm.ppc = 8", "6.4e+10 particles",
                                    "GB available on the run's 1 node", "MemAvailable in /proc/meminfo",
                                    "expected a larger mpm.dx or a smaller mpm.ppc"});
  setrlimit(RLIMIT_AS, &unlimited);
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
