// Distribution of a tet mesh (partition/TetPartition): every tet counted exactly once,
// every node owned exactly once with a contiguous PETSc range, ghosts consistent with
// their owners, global ids round-trip through the natural ordering. Distribution of grid
// blocks (partition/BlockPartition): owners of new blocks worked by hand, which maps fit
// which items (a restart's check), a METIS split of a row of equal blocks, and the order
// in which migrated records (partition/Migration) arrive. On 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "model/SceneMesh.hpp"
#include "partition/BlockPartition.hpp"
#include "partition/Migration.hpp"
#include "partition/NaturalOrdering.hpp"

namespace optistep {
namespace {

DistributedTetMesh LoadBox(GlobalTetMesh* global_on_all) {
  const std::string dir = test::SharedTempDir("partition");
  test::WriteBoxMesh(dir + "/box", 6, 3, 4, Vec3(3.0, 1.5, 2.0));
  const SceneConfig scene = test::MakeScene(dir + "/box.yaml", R"(
time: {frame_rate: 10, frames: 1}
bodies:
  - mesh: box.node
    material: {E: 1.0e5, nu: 0.3, density: 1000}
)");
  *global_on_all = AssembleSceneMesh(scene);
  return LoadDistributedMesh(PETSC_COMM_WORLD, scene);
}

std::vector<PetscInt> AllGather(const std::vector<PetscInt>& mine) {
  const int size = test::Size();
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(size), displs(size, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<PetscInt> all(displs.back() + counts.back());
  MPI_Allgatherv(mine.data(), n, MPIU_INT, all.data(), counts.data(), displs.data(), MPIU_INT,
                 MPI_COMM_WORLD);
  return all;
}

TEST(Partition, EveryTetCountedOnceAndEveryNodeOwnedOnce) {
  GlobalTetMesh global;
  const DistributedTetMesh mesh = LoadBox(&global);
  EXPECT_EQ(mesh.n_global_nodes, static_cast<PetscInt>(global.X.size()));
  EXPECT_EQ(mesh.n_global_tets, static_cast<PetscInt>(global.tets.size()));

  std::vector<PetscInt> counted, owned;
  for (size_t e = 0; e < mesh.tets.size(); ++e)
    if (mesh.tet_counted[e]) counted.push_back(mesh.tet_original_id[e]);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) owned.push_back(mesh.node_original_id[l]);
  std::vector<PetscInt> all_counted = AllGather(counted), all_owned = AllGather(owned);
  std::sort(all_counted.begin(), all_counted.end());
  std::sort(all_owned.begin(), all_owned.end());
  std::vector<PetscInt> expect_tets(global.tets.size()), expect_nodes(global.X.size());
  std::iota(expect_tets.begin(), expect_tets.end(), 0);
  std::iota(expect_nodes.begin(), expect_nodes.end(), 0);
  EXPECT_EQ(all_counted, expect_tets);
  EXPECT_EQ(all_owned, expect_nodes);

  // Contiguous ownership: rank r owns [node_begin, node_end) and the ranges tile [0, N).
  const std::vector<PetscInt> begins = AllGather({mesh.node_begin});
  const std::vector<PetscInt> ends = AllGather({mesh.node_end});
  EXPECT_EQ(begins.front(), 0);
  EXPECT_EQ(ends.back(), mesh.n_global_nodes);
  for (size_t r = 1; r < begins.size(); ++r) EXPECT_EQ(begins[r], ends[r - 1]);
  for (PetscInt l = 0; l < mesh.n_owned; ++l) EXPECT_EQ(mesh.local_to_global[l], mesh.node_begin + l);
  // With more than one rank, METIS gives every rank a share.
  if (test::Size() > 1) EXPECT_GT(mesh.n_owned, 0);
}

TEST(Partition, LocalTetsReferenceConsistentNodesAndGhosts) {
  GlobalTetMesh global;
  const DistributedTetMesh mesh = LoadBox(&global);
  // Every local tet is the global tet of that id, node for node, and touches an owned node.
  for (size_t e = 0; e < mesh.tets.size(); ++e) {
    const auto& g = global.tets[mesh.tet_original_id[e]];
    bool touches_owned = false;
    for (int a = 0; a < 4; ++a) {
      EXPECT_EQ(mesh.node_original_id[mesh.tets[e][a]], g[a]);
      touches_owned |= mesh.tets[e][a] < mesh.n_owned;
    }
    EXPECT_TRUE(touches_owned);
  }
  // Ghost coordinates equal the global ones, and a ghost's PETSc id maps back to the same
  // original id on its owner (checked through the gathered owner tables).
  const std::vector<PetscInt> petsc_ids = AllGather(std::vector<PetscInt>(
      mesh.local_to_global.begin(), mesh.local_to_global.begin() + mesh.n_owned));
  const std::vector<PetscInt> original_ids = AllGather(std::vector<PetscInt>(
      mesh.node_original_id.begin(), mesh.node_original_id.begin() + mesh.n_owned));
  std::vector<PetscInt> original_of(mesh.n_global_nodes, -1);
  for (size_t i = 0; i < petsc_ids.size(); ++i) original_of[petsc_ids[i]] = original_ids[i];
  for (PetscInt l = 0; l < mesh.n_local; ++l) {
    EXPECT_EQ(original_of[mesh.local_to_global[l]], mesh.node_original_id[l]);
    EXPECT_EQ(mesh.X[l], global.X[mesh.node_original_id[l]]);
    if (l >= mesh.n_owned) {
      EXPECT_TRUE(mesh.local_to_global[l] < mesh.node_begin || mesh.local_to_global[l] >= mesh.node_end);
      if (l > mesh.n_owned) EXPECT_LT(mesh.local_to_global[l - 1], mesh.local_to_global[l]);
    }
  }
}

TEST(Partition, NaturalOrderingRoundTripsOriginalIds) {
  GlobalTetMesh global;
  const DistributedTetMesh mesh = LoadBox(&global);
  std::vector<PetscInt> ids(mesh.node_original_id.begin(), mesh.node_original_id.begin() + mesh.n_owned);
  NaturalOrdering order(PETSC_COMM_WORLD, ids, mesh.n_global_nodes, 3);
  std::vector<double> values;
  for (PetscInt l = 0; l < mesh.n_owned; ++l)
    for (int d = 0; d < 3; ++d) values.push_back(3.0 * mesh.node_original_id[l] + d);
  const DistributedArray<double> natural = order.ToNatural(values.data());
  for (int64_t r = 0; r < natural.local_rows; ++r)
    for (int d = 0; d < 3; ++d)
      EXPECT_EQ(natural.data[3 * r + d], 3.0 * (natural.row_offset + r) + d);
}

TEST(Partition, QualityReportIsConsistentWithTheDistribution) {
  GlobalTetMesh global;
  const DistributedTetMesh mesh = LoadBox(&global);
  const PartitionQuality q = EvaluatePartition(global, test::Size());
  const int rank = test::Rank();
  EXPECT_EQ(q.owned_nodes[rank], mesh.n_owned);
  EXPECT_EQ(q.counted_tets[rank], mesh.n_counted_tets);
  EXPECT_EQ(q.ghost_nodes[rank], mesh.n_ghost());
  if (test::Size() == 1) {
    EXPECT_EQ(q.edge_cut, 0);
    EXPECT_DOUBLE_EQ(q.ghost_ratio, 0.0);
  } else {
    EXPECT_GT(q.edge_cut, 0);
    EXPECT_LT(q.node_imbalance, 1.2);  // METIS's default ufactor allows 3% on tets
  }
}

TEST(BlockPartition, NewBlocksGoToTheLowestRankTouchingThemAndKnownOnesKeepTheirOwner) {
  const int rank = test::Rank(), size = test::Size();
  BlockPartition blocks(MPI_COMM_WORLD);
  // Rank r touches the blocks (r, 0, 0) and (r + 1, 0, 0), twice; the last rank also
  // (-1, -2, -3). Block (k, 0, 0) is touched by ranks k - 1 and k.
  std::vector<Eigen::Vector3i> touched = {{rank + 1, 0, 0}, {rank, 0, 0}, {rank, 0, 0}};
  if (rank == size - 1) touched.emplace_back(-1, -2, -3);
  blocks.Update(touched);
  for (int k = 0; k <= size; ++k) EXPECT_EQ(blocks.Owner({k, 0, 0}), std::max(k - 1, 0)) << k;
  EXPECT_EQ(blocks.Owner({-1, -2, -3}), size - 1);
  EXPECT_THROW(blocks.Owner({0, 1, 0}), std::logic_error);

  // Now only the last rank touches the row: its blocks keep their owners, (-1, -2, -3)
  // is dropped, and (0, 5, 0) is new.
  touched.clear();
  if (rank == size - 1) {
    for (int k = 0; k <= size; ++k) touched.emplace_back(k, 0, 0);
    touched.emplace_back(0, 5, 0);
  }
  blocks.Update(touched);
  for (int k = 0; k <= size; ++k) EXPECT_EQ(blocks.Owner({k, 0, 0}), std::max(k - 1, 0)) << k;
  EXPECT_EQ(blocks.Owner({0, 5, 0}), size - 1);
  EXPECT_THROW(blocks.Owner({-1, -2, -3}), std::logic_error);

  // Export lists the blocks in (bz, by, bx) order; Assign restores the same map.
  std::vector<Eigen::Vector3i> exported;
  std::vector<int> owners;
  blocks.Export(&exported, &owners);
  ASSERT_EQ(exported.size(), static_cast<std::size_t>(size + 2));
  for (int k = 0; k <= size; ++k) EXPECT_EQ(exported[k], Eigen::Vector3i(k, 0, 0));
  EXPECT_EQ(exported.back(), Eigen::Vector3i(0, 5, 0));
  BlockPartition restored(MPI_COMM_WORLD);
  restored.Assign(exported, owners);
  for (std::size_t b = 0; b < exported.size(); ++b) EXPECT_EQ(restored.Owner(exported[b]), owners[b]);
}

TEST(BlockPartition, AMapFitsTheItemsItWasMadeForAndNoOthers) {
  const int rank = test::Rank(), size = test::Size();
  // As in the test above: rank r touches (r, 0, 0) and (r + 1, 0, 0), and its items live
  // in (r + 1, 0, 0), which rank r owns (rank 0 also owns (0, 0, 0)).
  const std::vector<Eigen::Vector3i> touched = {{rank, 0, 0}, {rank + 1, 0, 0}};
  const std::vector<Eigen::Vector3i> home(3, Eigen::Vector3i(rank + 1, 0, 0));
  BlockPartition blocks(MPI_COMM_WORLD);
  blocks.Update(touched);
  EXPECT_TRUE(blocks.Fits(touched, home));
  // One block more or less than the stencils touch (another dx, say): no fit.
  std::vector<Eigen::Vector3i> more = touched;
  if (rank == size - 1) more.emplace_back(0, 7, 0);
  EXPECT_FALSE(blocks.Fits(more, home));
  std::vector<Eigen::Vector3i> fewer = touched;
  if (rank == size - 1) fewer.pop_back();
  EXPECT_FALSE(blocks.Fits(fewer, home));
  // An item in a block of another rank (with one rank, in no block of the map): no fit.
  std::vector<Eigen::Vector3i> elsewhere = home;
  if (rank == 0) elsewhere.emplace_back(size == 1 ? 5 : 2, 0, 0);
  EXPECT_FALSE(blocks.Fits(touched, elsewhere));
}

TEST(BlockPartition, RepartitionSplitsARowOfEqualBlocksEvenly) {
  const int rank = test::Rank(), size = test::Size();
  // Rank 0 touches a row of 8 blocks per rank and holds 10 items in each: all on rank 0,
  // an imbalance of `size`, until METIS splits the row into runs of 8 blocks.
  const int n = 8 * size;
  std::vector<Eigen::Vector3i> touched, home;
  if (rank == 0)
    for (int k = 0; k < n; ++k) {
      touched.emplace_back(k, 0, 0);
      home.insert(home.end(), 10, Eigen::Vector3i(k, 0, 0));
    }
  BlockPartition blocks(MPI_COMM_WORLD);
  blocks.Update(touched);
  EXPECT_DOUBLE_EQ(blocks.ProjectedImbalance(home), size);
  blocks.Repartition(home);
  std::vector<int> per_rank(size, 0);
  for (int k = 0; k < n; ++k) ++per_rank[blocks.Owner({k, 0, 0})];
  for (int r = 0; r < size; ++r) EXPECT_EQ(per_rank[r], 8) << "rank " << r;
  EXPECT_DOUBLE_EQ(blocks.ProjectedImbalance(home), 1.0);
  EXPECT_DOUBLE_EQ(LoadImbalance({3, 1}), 1.5);
  EXPECT_DOUBLE_EQ(LoadImbalance({0, 0}), 1.0);
}

/// Records of two doubles (an id and the rank that made it), for MigrateRecords.
struct IdRecords {
  static constexpr int kPackedDoubles = 2;
  std::vector<double> values;
  std::size_t size() const { return values.size() / 2; }
  void Pack(std::size_t p, double* out) const { std::copy_n(&values[2 * p], 2, out); }
  void AppendPacked(const double* in) { values.insert(values.end(), in, in + 2); }
  void EraseIf(const std::vector<char>& erase) {
    std::vector<double> kept;
    for (std::size_t p = 0; p < size(); ++p)
      if (!erase[p]) kept.insert(kept.end(), &values[2 * p], &values[2 * p] + 2);
    values.swap(kept);
  }
};

TEST(Migration, RecordsArriveAfterTheStayingOnesBySendingRankInTheSendersOrder) {
  const int rank = test::Rank(), size = test::Size();
  // Rank r makes the records 100 r + k, k = 0 .. 3 size - 1, record k going to rank
  // size - 1 - k % size.
  auto destination_of = [size](int k) { return size - 1 - k % size; };
  IdRecords records;
  std::vector<int> destination;
  for (int k = 0; k < 3 * size; ++k) {
    records.AppendPacked(std::array<double, 2>{100.0 * rank + k, 1.0 * rank}.data());
    destination.push_back(destination_of(k));
  }
  const long long moved = MigrateRecords(MPI_COMM_WORLD, destination, &records);
  EXPECT_EQ(moved, 3LL * size * (size - 1));
  // The records that stay, in their order, then the arrivals by sending rank.
  std::vector<double> expected;
  auto add_from = [&](int r) {
    for (int k = 0; k < 3 * size; ++k)
      if (destination_of(k) == rank) expected.insert(expected.end(), {100.0 * r + k, 1.0 * r});
  };
  add_from(rank);
  for (int r = 0; r < size; ++r)
    if (r != rank) add_from(r);
  EXPECT_EQ(records.values, expected);
}

}  // namespace
}  // namespace optistep
