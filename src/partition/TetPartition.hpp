#pragma once
// Distribution of a tetrahedral mesh over MPI ranks (METIS_PartMeshDual).
//
// Ownership model ("owner computes"):
//  - every node is owned by exactly one rank; nodes are renumbered so that rank r owns
//    the contiguous PETSc range [node_begin, node_end) (block size 3 per node);
//  - a rank keeps every tet that touches one of its owned nodes (its "local" tets), so
//    it can assemble the full gradient and Hessian rows of its owned nodes without any
//    off-rank contribution: assembly never sends values, and the summation order is
//    fixed, which keeps runs bitwise reproducible for a given rank count;
//  - each tet is "counted" (contributes its energy, is written to output) on exactly
//    one rank: the rank METIS assigned it to when that rank keeps it, otherwise the
//    owner of its first node.
// Ghost nodes are the non-owned nodes of local tets.
#include <mpi.h>
#include <petscsys.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/Types.hpp"

namespace optistep {

/// The whole mesh, as assembled on rank 0 from all bodies (ids are "original" ids:
/// the concatenation of the bodies' mesh files, independent of the rank count).
struct GlobalTetMesh {
  std::vector<Vec3> X;                      ///< reference positions, m
  std::vector<std::array<int, 4>> tets;     ///< original node ids
  std::vector<int> node_body;               ///< body index per node
  std::vector<int> tet_body;                ///< body index per tet
};

/// One rank's share of the mesh. Local node index l in [0, n_local): owned nodes first
/// (l < n_owned, global id node_begin + l), then ghost nodes sorted by global id.
struct DistributedTetMesh {
  MPI_Comm comm = MPI_COMM_NULL;
  PetscInt n_global_nodes = 0;
  PetscInt n_global_tets = 0;
  PetscInt node_begin = 0;  ///< first owned global node id (PETSc numbering)
  PetscInt node_end = 0;
  PetscInt n_owned = 0;
  PetscInt n_local = 0;
  std::vector<PetscInt> local_to_global;    ///< n_local, PETSc numbering
  std::vector<PetscInt> node_original_id;   ///< n_local
  std::vector<Vec3> X;                      ///< n_local reference positions, m
  std::vector<int> node_body;               ///< n_local
  std::vector<std::array<int, 4>> tets;     ///< local tets, local node indices
  std::vector<int> tet_body;
  std::vector<PetscInt> tet_original_id;
  std::vector<char> tet_counted;            ///< 1 where this rank counts the tet
  PetscInt n_counted_tets = 0;

  PetscInt n_ghost() const { return n_local - n_owned; }
};

/// Partition statistics reported by `optistep partition`.
struct PartitionQuality {
  int ranks = 1;
  std::int64_t edge_cut = 0;                 ///< METIS objective: dual-graph edges cut
  std::vector<std::int64_t> owned_nodes;     ///< per rank
  std::vector<std::int64_t> counted_tets;    ///< per rank
  std::vector<std::int64_t> ghost_nodes;     ///< per rank
  double node_imbalance = 1.0;               ///< max / mean owned nodes
  double tet_imbalance = 1.0;                ///< max / mean counted tets
  double ghost_ratio = 0.0;                  ///< total ghosts / total owned
};

/// Per-rank node ownership and tet assignment computed by METIS on rank 0.
struct TetPartitionPlan {
  std::vector<int> node_owner;  ///< original node id -> rank
  std::vector<int> tet_part;    ///< original tet id -> rank METIS chose
  std::int64_t edge_cut = 0;
};

/// Splits the mesh into `ranks` parts with METIS_PartMeshDual (face adjacency,
/// ncommon = 3). Deterministic (fixed METIS seed). Rank-local (runs on rank 0).
TetPartitionPlan PlanTetPartition(const GlobalTetMesh& mesh, int ranks);

/// Collective. Rank 0 passes the assembled mesh (other ranks pass an empty one); rank 0
/// partitions it and sends each rank its share. Returns this rank's part and, on rank 0,
/// fills `quality` if non-null.
DistributedTetMesh DistributeTetMesh(MPI_Comm comm, const GlobalTetMesh& mesh,
                                     PartitionQuality* quality = nullptr);

/// Rank-local: what DistributeTetMesh would produce, for all `ranks` parts, evaluated
/// without communication (used by `optistep partition --ranks N`).
PartitionQuality EvaluatePartition(const GlobalTetMesh& mesh, int ranks);

}  // namespace optistep
