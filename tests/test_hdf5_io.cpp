// Collective HDF5 output (io/Hdf5File) and ParaView time series (io/XdmfWriter), on 1, 2
// and 4 ranks. Values are closed-form functions of the global row id, so whatever split
// wrote them, any other split must read back exactly those numbers; XDMF shapes and times
// are checked against the mesh and frames the test builds, and every dataset the .xdmf
// names is opened in its file.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <regex>
#include <sstream>

#include "TestUtil.hpp"
#include "core/Error.hpp"
#include "io/Hdf5File.hpp"
#include "io/XdmfWriter.hpp"

namespace optistep {
namespace {

namespace fs = std::filesystem;
using test::Rank;
using test::Size;

/// This rank's rows [offset, offset + count) of global_rows split in proportion to weights.
struct Rows {
  int64_t offset;
  int64_t count;
};

Rows ShareOf(int64_t global_rows, const std::vector<int64_t>& weights) {
  const int64_t total = std::accumulate(weights.begin(), weights.end(), int64_t{0});
  const int64_t before = std::accumulate(weights.begin(), weights.begin() + Rank(), int64_t{0});
  const int64_t begin = global_rows * before / total;
  return {begin, global_rows * (before + weights[Rank()]) / total - begin};
}

/// Weights 1, 2, 3, ... except rank 1, which gets no rows on 4 ranks.
std::vector<int64_t> UnevenWeights() {
  std::vector<int64_t> weights(Size());
  for (int r = 0; r < Size(); ++r) weights[r] = (r == 1 && Size() >= 4) ? 0 : r + 1;
  return weights;
}

std::vector<int64_t> EvenWeights() { return std::vector<int64_t>(Size(), 1); }

int64_t GlobalSum(int64_t local) {
  int64_t sum = 0;
  MPI_Allreduce(&local, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return sum;
}

/// This rank's rows of a global array whose entry (i, j) is entry(i, j), row-major.
template <class T, class Entry>
std::vector<T> LocalRows(Rows rows, int columns, Entry entry) {
  std::vector<T> values;
  for (int64_t i = rows.offset; i < rows.offset + rows.count; ++i)
    for (int j = 0; j < columns; ++j) values.push_back(entry(i, j));
  return values;
}

/// Entries of values that differ from entry(i, j) for the rows given; counts a size mismatch.
template <class T, class Entry>
int64_t Mismatches(const std::vector<T>& values, Rows rows, int columns, Entry entry) {
  const std::vector<T> expected = LocalRows<T>(rows, columns, entry);
  if (values.size() != expected.size()) return 1;
  int64_t wrong = 0;
  for (size_t k = 0; k < values.size(); ++k) wrong += values[k] != expected[k];
  return wrong;
}

double Smooth(int64_t i, int j) { return std::sin(1.0 + i) * 1e3 + j / 7.0; }
int64_t Wide(int64_t i, int j) { return (int64_t{1} << 40) * (j % 2 ? -1 : 1) + 1000 * i + j; }

class Hdf5IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string folder;
    if (Rank() == 0) {
      char pattern[] = "/tmp/optistep_hdf5_io_XXXXXX";
      folder = mkdtemp(pattern) ? pattern : "";
    }
    int length = static_cast<int>(folder.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    folder.resize(length);
    MPI_Bcast(folder.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
    ASSERT_FALSE(folder.empty());
    dir_ = folder;
  }
  void TearDown() override {
    MPI_Barrier(MPI_COMM_WORLD);
    if (Rank() == 0 && !HasFailure()) fs::remove_all(dir_);  // kept for inspection on failure
  }
  std::string dir_;
};

TEST_F(Hdf5IoTest, DoubleArrayReadsBackExactlyUnderAnotherSplit) {
  const int64_t n = 11;
  const Rows written = ShareOf(n, UnevenWeights());
  if (Size() == 4) {
    EXPECT_EQ(GlobalSum(written.count == 0), 1);
  }
  const std::vector<double> stress = LocalRows<double>(written, 3, Smooth);
  const std::vector<double> mass = LocalRows<double>(written, 1, Smooth);
  const std::string path = dir_ + "/arrays.h5";
  {
    Hdf5File file = Hdf5File::Create(MPI_COMM_WORLD, path);
    file.WriteArray("fields/stress",
                    DistributedArray<double>{n, written.offset, written.count, 3, stress.data()});
    file.WriteArray("mass",
                    DistributedArray<double>{n, written.offset, written.count, 1, mass.data()});
  }
  Hdf5File file = Hdf5File::Open(MPI_COMM_WORLD, path);
  EXPECT_EQ(file.Shape("fields/stress"), (std::vector<int64_t>{n, 3}));
  EXPECT_EQ(file.Shape("mass"), (std::vector<int64_t>{n}));
  const Rows read = ShareOf(n, EvenWeights());
  EXPECT_EQ(GlobalSum(Mismatches(file.ReadArray<double>("fields/stress", read.offset, read.count),
                                 read, 3, Smooth)),
            0);
  EXPECT_EQ(GlobalSum(Mismatches(file.ReadArray<double>("mass", read.offset, read.count), read, 1,
                                 Smooth)),
            0);
  // Stored doubles are not integers: asking for int64 is refused on every rank.
  EXPECT_THROW(file.ReadArray<int64_t>("mass", read.offset, read.count), std::runtime_error);
}

TEST_F(Hdf5IoTest, IntegerArraysKeepAll64BitsAndMayBeReadOverlapping) {
  const int64_t n = 9;
  const Rows written = ShareOf(n, UnevenWeights());
  const std::vector<int64_t> ids = LocalRows<int64_t>(written, 4, Wide);
  const auto small = [](int64_t i, int j) { return static_cast<int32_t>(-7 * i + j); };
  const std::vector<int32_t> flags = LocalRows<int32_t>(written, 2, small);
  const std::string path = dir_ + "/integers.h5";
  {
    Hdf5File file = Hdf5File::Create(MPI_COMM_WORLD, path);
    file.WriteArray("ids",
                    DistributedArray<int64_t>{n, written.offset, written.count, 4, ids.data()});
    file.WriteArray("flags",
                    DistributedArray<int32_t>{n, written.offset, written.count, 2, flags.data()});
    file.Close();
  }
  Hdf5File file = Hdf5File::Open(MPI_COMM_WORLD, path);
  const Rows read = ShareOf(n, EvenWeights());
  EXPECT_EQ(
      GlobalSum(Mismatches(file.ReadArray<int64_t>("ids", read.offset, read.count), read, 4, Wide)),
      0);
  const Rows all{0, n};  // every rank reads every row, as for ghosts
  EXPECT_EQ(GlobalSum(Mismatches(file.ReadArray<int32_t>("flags", 0, n), all, 2, small)), 0);
}

TEST_F(Hdf5IoTest, EmptyArrayHasItsShapeAndReadsBackEmpty) {
  const std::string path = dir_ + "/empty.h5";
  Hdf5File::Create(MPI_COMM_WORLD, path)
      .WriteArray("particles/x", DistributedArray<double>{0, 0, 0, 3, nullptr});
  Hdf5File file = Hdf5File::Open(MPI_COMM_WORLD, path);
  EXPECT_EQ(file.Shape("particles/x"), (std::vector<int64_t>{0, 3}));
  EXPECT_TRUE(file.ReadArray<double>("particles/x", 0, 0).empty());
}

TEST_F(Hdf5IoTest, WriteArrayRejectsRowsThatDoNotTileOnEveryRank) {
  const Rows rows = ShareOf(5, EvenWeights());
  const std::vector<double> values = LocalRows<double>(rows, 1, Smooth);
  Hdf5File file = Hdf5File::Create(MPI_COMM_WORLD, dir_ + "/gap.h5");
  try {
    file.WriteArray("x", DistributedArray<double>{6, rows.offset, rows.count, 1, values.data()});
    ADD_FAILURE() << "row 5 is held by no rank, yet WriteArray accepted it";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("rows from 5 are held by no rank"), std::string::npos)
        << error.what();
  }
}

TEST_F(Hdf5IoTest, AttributesRoundTripOnRootAndDataset) {
  const std::string path = dir_ + "/attributes.h5";
  const int64_t step = -(int64_t{1} << 50) + 3;
  {
    Hdf5File file = Hdf5File::Create(MPI_COMM_WORLD, path);
    const Rows rows = ShareOf(4, UnevenWeights());
    const std::vector<double> x = LocalRows<double>(rows, 1, Smooth);
    file.WriteArray("state/bodies/x",
                    DistributedArray<double>{4, rows.offset, rows.count, 1, x.data()});
    file.WriteAttribute("", "time", 0.1);
    file.WriteAttribute("", "step", int64_t{1});
    file.WriteAttribute("/", "step", step);  // replaces the first value
    file.WriteAttribute("", "material", std::string("fixed_corotated"));
    file.WriteAttribute("", "note", std::string());
    file.WriteAttribute("state/bodies/x", "units", std::string("m"));
    file.WriteAttribute("state/bodies", "count", int64_t{4});
  }
  Hdf5File file = Hdf5File::Open(MPI_COMM_WORLD, path);
  EXPECT_EQ(file.ReadAttribute<double>("", "time"), 0.1);
  EXPECT_EQ(file.ReadAttribute<int64_t>("", "step"), step);
  EXPECT_EQ(file.ReadAttribute<std::string>("", "material"), "fixed_corotated");
  EXPECT_EQ(file.ReadAttribute<std::string>("", "note"), "");
  EXPECT_EQ(file.ReadAttribute<std::string>("state/bodies/x", "units"), "m");
  EXPECT_EQ(file.ReadAttribute<int64_t>("state/bodies", "count"), 4);
  EXPECT_THROW(file.ReadAttribute<double>("", "material"), std::runtime_error);
  EXPECT_THROW(file.ReadAttribute<double>("", "absent"), std::runtime_error);
}

TEST_F(Hdf5IoTest, OpeningMissingOrForeignFileIsInputErrorNamingIt) {
  const std::string missing = dir_ + "/missing.h5";
  const std::string text = dir_ + "/notes.txt";
  if (Rank() == 0) std::ofstream(text) << "not HDF5\n";
  MPI_Barrier(MPI_COMM_WORLD);
  for (const std::string& path : {missing, text}) {
    try {
      Hdf5File::Open(MPI_COMM_WORLD, path);
      ADD_FAILURE() << "opened " << path;
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find(path), std::string::npos) << error.what();
    }
  }
}

// ---- XDMF ---------------------------------------------------------------------------

struct XdmfItem {
  std::vector<int64_t> dims;
  std::string file;     ///< relative to the .xdmf
  std::string dataset;  ///< "/positions"
};

struct XdmfGrid {
  double time = -1.0;
  std::string topology;
  int64_t cells = -1;
  std::vector<std::string> attributes;  ///< "name type center"
  std::vector<XdmfItem> items;          ///< in order: topology, geometry, attributes
};

/// The Uniform grids of a temporal collection, read with regular expressions: enough for
/// the fixed layout XdmfTimeSeries writes.
std::vector<XdmfGrid> ReadXdmf(const std::string& path) {
  std::ifstream stream(path);
  std::stringstream buffer;
  buffer << stream.rdbuf();
  const std::string text = buffer.str();
  const std::regex grid_re(R"re(<Grid Name="[^"]*" GridType="Uniform">([\s\S]*?)</Grid>)re");
  const std::regex time_re(R"re(<Time Value="([^"]*)"/>)re");
  const std::regex topology_re(R"re(<Topology TopologyType="(\w+)" NumberOfElements="(\d+)")re");
  const std::regex attribute_re(
      R"re(<Attribute Name="([^"]*)" AttributeType="(\w+)" Center="(\w+)">)re");
  const std::regex item_re(
      R"re(<DataItem Dimensions="([0-9 ]+)"[^>]*>([^<:]+):([^<]+)</DataItem>)re");
  std::vector<XdmfGrid> grids;
  for (std::sregex_iterator g(text.begin(), text.end(), grid_re), end; g != end; ++g) {
    const std::string body = (*g)[1];
    XdmfGrid grid;
    std::smatch m;
    if (std::regex_search(body, m, time_re)) grid.time = std::stod(m[1]);
    if (std::regex_search(body, m, topology_re)) {
      grid.topology = m[1];
      grid.cells = std::stoll(m[2]);
    }
    for (std::sregex_iterator a(body.begin(), body.end(), attribute_re); a != end; ++a)
      grid.attributes.push_back((*a)[1].str() + " " + (*a)[2].str() + " " + (*a)[3].str());
    for (std::sregex_iterator i(body.begin(), body.end(), item_re); i != end; ++i) {
      XdmfItem item{{}, (*i)[2], (*i)[3]};
      std::istringstream dims((*i)[1]);
      for (int64_t d; dims >> d;) item.dims.push_back(d);
      grid.items.push_back(item);
    }
    grids.push_back(grid);
  }
  return grids;
}

/// Each item's dataset exists in its file, with the dimensions the .xdmf announces.
void ExpectItemsMatchFiles(const std::string& dir, const XdmfGrid& grid) {
  for (const XdmfItem& item : grid.items) {
    Hdf5File file = Hdf5File::Open(MPI_COMM_WORLD, dir + "/" + item.file);
    EXPECT_EQ(file.Shape(item.dataset), item.dims) << item.file << ":" << item.dataset;
  }
}

TEST_F(Hdf5IoTest, TetMeshSeriesDescribesTwoFramesParaViewCanFind) {
  // Two tets sharing the face (1, 2, 3): volumes 1/6 and 1/3.
  const double X[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
  const int64_t tets[2][4] = {{0, 1, 2, 3}, {1, 2, 3, 4}};
  const double v[3] = {0.5, 0.0, -1.0};
  const Rows nodes = ShareOf(5, UnevenWeights());
  const Rows cells = ShareOf(2, EvenWeights());
  const std::vector<int64_t> local_tets =
      LocalRows<int64_t>(cells, 4, [&](int64_t e, int a) { return tets[e][a]; });

  XdmfTimeSeries series(MPI_COMM_WORLD, dir_ + "/out", "bar");
  series.SetTetMesh({2, cells.offset, cells.count, 4, local_tets.data()}, 5);
  const std::vector<double> times = {0.0, 0.01};
  for (int frame = 0; frame < 2; ++frame) {
    const double t = times[frame];
    const auto x =
        LocalRows<double>(nodes, 3, [&](int64_t i, int d) { return X[i][d] + t * v[d]; });
    const auto velocity = LocalRows<double>(nodes, 3, [&](int64_t, int d) { return v[d]; });
    const auto volume =
        LocalRows<double>(cells, 1, [](int64_t e, int) { return e ? 1.0 / 3 : 1.0 / 6; });
    const auto F =
        LocalRows<double>(cells, 9, [](int64_t, int k) { return k % 4 == 0 ? 1.0 : 0.0; });
    series.WriteFrame(frame, t, {5, nodes.offset, nodes.count, 3, x.data()},
                      {{"velocity", false, {5, nodes.offset, nodes.count, 3, velocity.data()}},
                       {"volume", true, {2, cells.offset, cells.count, 1, volume.data()}},
                       {"F", true, {2, cells.offset, cells.count, 9, F.data()}}});
  }

  EXPECT_TRUE(fs::exists(series.XdmfPath()));
  EXPECT_FALSE(fs::exists(series.XdmfPath() + ".tmp"));
  const std::vector<XdmfGrid> grids = ReadXdmf(series.XdmfPath());
  ASSERT_EQ(grids.size(), 2u);
  for (int frame = 0; frame < 2; ++frame) {
    const XdmfGrid& grid = grids[frame];
    EXPECT_EQ(grid.time, times[frame]);
    EXPECT_EQ(grid.topology, "Tetrahedron");
    EXPECT_EQ(grid.cells, 2);
    EXPECT_EQ(grid.attributes, (std::vector<std::string>{"velocity Vector Node",
                                                         "volume Scalar Cell", "F Tensor Cell"}));
    const std::string frame_file = "frames/bar_00000" + std::to_string(frame) + ".h5";
    ASSERT_EQ(grid.items.size(), 5u);
    EXPECT_EQ(grid.items[0].file, "bar_mesh.h5");
    EXPECT_EQ(grid.items[0].dims, (std::vector<int64_t>{2, 4}));
    EXPECT_EQ(grid.items[1].file, frame_file);
    EXPECT_EQ(grid.items[1].dims, (std::vector<int64_t>{5, 3}));
    EXPECT_EQ(grid.items[4].dims, (std::vector<int64_t>{2, 9}));
    ExpectItemsMatchFiles(dir_ + "/out", grid);
  }
  Hdf5File mesh = Hdf5File::Open(MPI_COMM_WORLD, dir_ + "/out/bar_mesh.h5");
  EXPECT_EQ(mesh.ReadArray<int64_t>("tets", 0, 2), (std::vector<int64_t>{0, 1, 2, 3, 1, 2, 3, 4}));
  Hdf5File last = Hdf5File::Open(MPI_COMM_WORLD, series.FramePath(1));
  EXPECT_EQ(last.ReadAttribute<double>("", "time"), 0.01);
}

TEST_F(Hdf5IoTest, PointCloudSeriesFollowsChangingCountsAcrossARestart) {
  const auto write_cloud = [](XdmfTimeSeries& series, int frame, double time, int64_t n) {
    const Rows rows = ShareOf(n, UnevenWeights());
    const auto x = LocalRows<double>(rows, 3, [](int64_t p, int d) { return 0.1 * p * (d + 1); });
    const auto mass = LocalRows<double>(rows, 1, [](int64_t p, int) { return 1.0 + p; });
    series.WriteFrame(frame, time, {n, rows.offset, rows.count, 3, x.data()},
                      {{"mass", false, {n, rows.offset, rows.count, 1, mass.data()}}});
  };
  const std::string out = dir_ + "/mpm";
  const auto expect_clouds = [&](const std::vector<int64_t>& counts) {
    const std::vector<XdmfGrid> grids = ReadXdmf(out + "/snow.xdmf");
    ASSERT_EQ(grids.size(), counts.size());
    for (size_t frame = 0; frame < counts.size(); ++frame) {
      EXPECT_EQ(grids[frame].time, 0.5 * frame);
      EXPECT_EQ(grids[frame].topology, "Polyvertex");
      EXPECT_EQ(grids[frame].cells, counts[frame]);
      ASSERT_EQ(grids[frame].items.size(), 3u);
      EXPECT_EQ(grids[frame].items[1].dims, (std::vector<int64_t>{counts[frame], 3}));
      EXPECT_EQ(grids[frame].attributes, std::vector<std::string>{"mass Scalar Node"});
      ExpectItemsMatchFiles(out, grids[frame]);
    }
  };
  {
    XdmfTimeSeries series(MPI_COMM_WORLD, out, "snow");
    write_cloud(series, 0, 0.0, 7);
    write_cloud(series, 1, 0.5, 3);
  }
  expect_clouds({7, 3});

  // A restarted run re-seeds frame 0 from its file, then overwrites frame 1.
  XdmfTimeSeries restarted(MPI_COMM_WORLD, out, "snow");
  Hdf5File frame0 = Hdf5File::Open(MPI_COMM_WORLD, restarted.FramePath(0));
  const int64_t points = frame0.Shape("positions")[0];
  restarted.AddExistingFrame(0, frame0.ReadAttribute<double>("", "time"), points, points);
  frame0.Close();
  write_cloud(restarted, 1, 0.5, 4);
  expect_clouds({7, 4});
}

}  // namespace
}  // namespace optistep
