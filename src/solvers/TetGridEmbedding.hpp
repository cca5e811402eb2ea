#pragma once
// The first coarse level of the embedded-grid multigrid of a tet mesh (Xian, Tong, Liu
// 2019, ACM TOG 38(6) 162): a regular grid of spacing h over each body in its rest
// configuration; a node at rest position X in the cell c = floor((X - o_b) / h) of its
// body's grid (o_b: the body's lowest corner) takes the trilinear weights of the cell's 8
// corners (exact zeros left out), so P reproduces affine fields exactly at the nodes. Held
// (Dirichlet) nodes take no weight. Bodies' grids are set apart so that no level below
// merges two bodies. The grid is split over the ranks by HOT's blocks of 4 x 4 x 4 nodes
// (DistributeGridNodes, solvers/NodeEmbedding.hpp): a block goes to the rank whose free
// nodes reference the most of its nodes; the result depends on the mesh, its partition and
// h only. More: docs/methods/multigrid.md.
#include <petscmat.h>

#include "solvers/IncrementalPotential.hpp"

namespace optistep {

/// Collective on comm. From the owned tet nodes at rest (IncrementalPotential::Nodes()) and
/// the grid spacing h (m, > 0) makes the first grid level in *grid (integer coordinates of
/// its owned nodes in PETSc order, dx = h, first_global, n_global: the form
/// BuildProlongation coarsens further) and returns the prolongation P: an MPIAIJ matrix of
/// block sizes 3 and 3, 3 n_nodes x 3 n_grid, rows in the layout of u, columns in the
/// grid's; entries the trilinear weights (dimensionless) on the diagonal of each 3x3 block,
/// no other entries stored. levels_below: how many grid levels will be made below this
/// one, which sets the gap between bodies' grids (-1: as many as a grid can shrink). A rank without nodes owns no grid node
/// and must call all the same.
Mat BuildTetGridProlongation(MPI_Comm comm, const RestNodes& nodes, double h, int levels_below,
                             GridInfo* grid);

/// The mean node spacing of the mesh, (volume / nodes)^(1/3) (m): for a mesh of cubes
/// split into tets, the cubes' edge.
double MeanNodeSpacing(const RestNodes& nodes);

}  // namespace optistep
