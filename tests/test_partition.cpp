// Distribution of a tet mesh (partition/TetPartition): every tet counted exactly once,
// every node owned exactly once with a contiguous PETSc range, ghosts consistent with
// their owners, global ids round-trip through the natural ordering. On 1, 2 and 4 ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "TestScenes.hpp"
#include "TestUtil.hpp"
#include "model/SceneMesh.hpp"
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

}  // namespace
}  // namespace optistep
