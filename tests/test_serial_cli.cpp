// The optistep executable end to end: check, partition, --help (printed once however many
// ranks) and a short run work and write what docs/user/ says; options set but never used
// are reported once. Bad input of every kind is the table of test_serial_bad_input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "TestScenes.hpp"
#include "TestUtil.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;

using test::LinesStartingWith;
using test::Optistep;
using test::Outcome;
using test::ReadFile;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::SharedTempDir("cli");
    test::WriteBoxMesh((dir_ / "box").string(), 2, 2, 2, Vec3(1, 1, 1));
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// test::BoxScene with `replace` for `find` (when given), written to dir_/name.
  std::string Variant(const std::string& name, const std::string& find = "",
                      const std::string& replace = "") const {
    std::ofstream(dir_ / name) << test::BoxScene(find, replace);
    return name;
  }

  bool AnyXdmf() const {
    if (!fs::exists(dir_ / "out")) return false;
    for (const auto& entry : fs::directory_iterator(dir_ / "out"))
      if (entry.path().extension() == ".xdmf") return true;
    return false;
  }

  fs::path dir_;
};

TEST_F(Cli, AnOptionSetButNeverUsedIsReportedOnce) {
  Outcome o = Optistep("run " + Variant("ok.yaml") + " -newton_pc_typo jacobi", dir_);
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
}

TEST_F(Cli, HelpIsPrintedOnceOnManyRanks) {
  // Before MPI starts every rank reads the command line; only the first one speaks.
  const std::string mpiexec = test::Mpiexec(2) + " " + OPTISTEP_EXECUTABLE;
  EXPECT_EQ(test::Shell(dir_, mpiexec + " --help > o.txt 2> e.txt"), 0);
  const std::string out = ReadFile(dir_ / "o.txt");
  EXPECT_EQ(LinesStartingWith(out, "usage:"), 1) << out;
}

TEST_F(Cli, HelpCheckAndPartition) {
  Outcome o = Optistep("--help", dir_);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(o.out.find("optistep run SCENE.yaml"), std::string::npos);
  o = Optistep("check " + Variant("ok.yaml"), dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("48 tets"), std::string::npos) << o.out;
  EXPECT_FALSE(AnyXdmf());
  // A name is one path component of letters, digits, '_', '-' and '.' (not first).
  o = Optistep("check " + Variant("named.yaml", "time:", "name: bar_v2.1-x\ntime:"), dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  o = Optistep("partition " + Variant("ok.yaml") + " --ranks 3", dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("edge cut"), std::string::npos) << o.out;
}

TEST_F(Cli, KeysPrintsTheSceneSchemaOnce) {
  // Every map of the scene is a section; a key's row gives type, default, allowed values.
  Outcome o = Optistep("keys", dir_);
  EXPECT_EQ(o.exit_code, 0) << o.err;
  for (const char* section : {"## Top level", "## `time`", "## `bodies[].material`",
                              "## `collision_objects[]`", "## `solver`", "## `chains[]`"})
    EXPECT_EQ(LinesStartingWith(o.out, section), 1) << section;
  EXPECT_NE(o.out.find("| `nu` | number | required | [0, 0.5) | Poisson's ratio (-) |"),
            std::string::npos) << o.out;
  EXPECT_NE(o.out.find("| `max_dt_halvings` | integer | 8 | [0, 30] |"), std::string::npos);
  EXPECT_NE(o.out.find("| `model` | choice | potential (FEM: backward_euler, quasi_static); after_solve "
                       "otherwise | after_solve, potential |"),
            std::string::npos);
  EXPECT_EQ(Optistep("keys --format markdown", dir_).out, o.out);
  const std::string mpiexec = test::Mpiexec(2) + " " + OPTISTEP_EXECUTABLE;
  EXPECT_EQ(test::Shell(dir_, mpiexec + " keys > o.txt 2> e.txt"), 0);
  EXPECT_EQ(ReadFile(dir_ / "o.txt"), o.out);
  // keys takes no scene and no run options; --format belongs to keys.
  o = Optistep("keys " + Variant("ok.yaml"), dir_);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("keys: unexpected argument 'ok.yaml'"), std::string::npos) << o.err;
  o = Optistep("keys --format html", dir_);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("--format 'html': expected markdown"), std::string::npos) << o.err;
  o = Optistep("check " + Variant("ok.yaml") + " --format markdown", dir_);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("check: --format is an option of keys"), std::string::npos) << o.err;
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
