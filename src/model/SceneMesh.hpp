#pragma once
// From a scene's bodies to one distributed tetrahedral mesh: rank 0 reads every body's
// mesh file, places it by its transform and concatenates the bodies (original ids are
// the concatenation order); METIS then splits it over the ranks.
#include <mpi.h>

#include "io/SceneConfig.hpp"
#include "partition/TetPartition.hpp"

namespace optistep {

/// Rank-local: reads, transforms and concatenates all bodies. Nodes that no tet uses are
/// dropped. Throws InputError naming the body and file on any problem.
GlobalTetMesh AssembleSceneMesh(const SceneConfig& scene);

/// Collective: rank 0 assembles (errors are raised on every rank) and distributes.
DistributedTetMesh LoadDistributedMesh(MPI_Comm comm, const SceneConfig& scene,
                                       PartitionQuality* quality = nullptr);

}  // namespace optistep
