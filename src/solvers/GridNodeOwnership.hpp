#pragma once
// The nodes of a coarse grid level: which rank owns each and their PETSc numbering, agreed
// by the ranks whose fine nodes take weight from them. Shared by the grid levels of HOT's
// node embedding (solvers/NodeEmbedding.hpp) and the first grid of a tet mesh
// (solvers/TetGridEmbedding.hpp).
//
// A rendezvous: each coarse node has a home rank (a hash of its coordinates), which
// collects every rank's claim on it and answers with the owner, the rank with the largest
// claim (the lowest such rank on a tie). The owners then number their nodes contiguously
// (PETSc ownership) in the order the caller gives, and answer the other ranks' questions
// for the global numbers of the nodes they reference. Everything depends on the fine level
// and the rank count only, never on the order messages arrive in.
#include <petscsys.h>

#include <array>
#include <cstddef>
#include <vector>

#include "solvers/IncrementalPotential.hpp"

namespace optistep {

using GridCoord = std::array<int, 3>;

/// Order by (z, y, x): the order a grid's nodes are laid out in.
bool ZyxLess(const GridCoord& a, const GridCoord& b);
/// Index of c in the (z, y, x)-sorted list, or -1.
std::ptrdiff_t FindGridNode(const std::vector<GridCoord>& sorted, const GridCoord& c);

/// Collective on comm. referenced: the coarse nodes this rank's fine nodes take weight
/// from, sorted by (z, y, x) without repeats; claim[n] (same length, >= 0, dimensionless):
/// this rank's claim on referenced[n]. Returns the owner of every referenced node: the rank
/// with the largest claim on it, the lowest such rank on a tie.
std::vector<int> ElectOwners(MPI_Comm comm, const std::vector<GridCoord>& referenced,
                             const std::vector<double>& claim);

/// Collective on comm. owner: ElectOwners' answer; numbering: the indices into referenced
/// of the nodes this rank owns (every one exactly once), in the order they are numbered.
/// Fills coarse->owned_nodes, first_global and n_global (not dx) and returns the global
/// node index of every referenced node.
std::vector<PetscInt> NumberCoarseNodes(MPI_Comm comm, const std::vector<GridCoord>& referenced,
                                        const std::vector<int>& owner,
                                        const std::vector<std::size_t>& numbering, GridInfo* coarse);

}  // namespace optistep
