#pragma once
// The first coarse level of the embedded-grid multigrid of a tet mesh: Galerkin multigrid
// whose coarse levels are regular grids over the body, after Xian, Tong, Liu 2019, "A
// Scalable Galerkin Multigrid Method for Real-time Simulation of Deformable Objects", ACM
// TOG 38(6), Article 162 (the Galerkin projection A_c = P^T A P from an embedding of the
// mesh in a grid). Below this level the grid levels are HOT's (solvers/NodeEmbedding.hpp).
//
// The grid: spacing h, one grid per body, laid over the body in its rest configuration
// (the mesh's reference positions, so that P is fixed for the run). A tet node at rest
// position X lies in the cell c = floor((X - o_b) / h) of its body's grid (o_b: the lowest
// corner of the body's bounding box); with t = (X - o_b) / h - c in [0, 1)^3 it takes the
// trilinear weights prod_d (1 - t_d or t_d) from the cell's 8 corners (weights that are
// exactly 0 are left out). So P reproduces affine fields exactly at the nodes, up to
// round-off. A grid node exists where some node takes weight from it. Bodies get grids of
// their own, set apart along x far enough that no level of the hierarchy below merges
// nodes of two bodies. Rows of Dirichlet nodes are zero: the coarse levels never move a
// held node (its row of the Hessian is decoupled, the smoother solves it).
//
// Distribution: a grid node is owned by the rank whose owned tet nodes take the most weight
// from it (the sum of their weights), the lowest such rank on a tie
// (solvers/GridNodeOwnership.hpp); each rank numbers its grid nodes by (z, y, x). The
// result depends on the mesh, its partition and h only.
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
