#pragma once
// From a scene's bodies to one distributed tetrahedral mesh: rank 0 reads every body's
// mesh file, places it by its transform and concatenates the bodies (original ids are
// the concatenation order); METIS then splits it over the ranks.
#include <mpi.h>

#include "core/AvailableMemory.hpp"
#include "io/SceneSections.hpp"
#include "partition/TetPartition.hpp"

namespace optistep {

/// A lower bound of the bytes a FEM run holds per tet, all ranks together, while stepping
/// with the leanest method (projected Newton with Jacobi-preconditioned CG): about half of
/// what the size ladder measures (docs/benchmarks/2026-11-28-fem-ladder.md), so that a
/// scene that fits is never refused.
inline constexpr double kRunBytesPerTet = 500.0;

/// Rank-local: reads, transforms and concatenates all bodies (each distinct mesh file once,
/// however many bodies share it). Nodes that no tet uses are dropped. With `available`, first
/// refuses (CheckFemMemory) a scene whose meshes cannot fit. Throws InputError naming the
/// body and file on any problem.
GlobalTetMesh AssembleSceneMesh(const ModelConfig& scene, const AvailableMemory* available = nullptr);

/// Rank-local: throws InputError, one line starting with the scene file and naming the tet
/// and node counts, the estimate and the memory available (and where it was read), when
/// tets * kRunBytesPerTet exceeds the memory of the run's nodes or the assembled mesh
/// (AssembledMeshBytes) that of rank 0's node.
void CheckFemMemory(const ModelConfig& scene, double tets, double nodes, const AvailableMemory& available);

/// Collective: rank 0 assembles (errors are raised on every rank) and distributes.
DistributedTetMesh LoadDistributedMesh(MPI_Comm comm, const ModelConfig& scene,
                                       PartitionQuality* quality = nullptr);

}  // namespace optistep
