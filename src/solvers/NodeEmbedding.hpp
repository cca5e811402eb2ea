#pragma once
// Prolongation between two levels of an MPM grid by node embedding (HOT, Wang, Li, Fang,
// Zhang, Gao, Tang, Kaufman, Jiang 2020, Sec. 4): level m + 1 has spacing 2 dx_m, and a
// fine node is the weighted sum of the coarse nodes around it, per axis
//  - linear (HOT Sec. 4, eq. 5; the default): fine index 2c copies coarse node c, fine
//    index 2c + 1 takes 1/2 from coarse nodes c and c + 1;
//  - quadratic (HOT's ablation; its reference code's quadratic_weight_template): fine 2c
//    takes 1/8, 3/4, 1/8 from coarse c - 1, c, c + 1, fine 2c + 1 takes 1/2 from c and c + 1;
// in 3D a weight is the product of the three axes' weights (up to 8 coarse nodes per fine
// node with the linear rule, 27 with the quadratic one), times the 3x3 identity (block size
// 3). Both reproduce linear fields exactly. The grid is sparse: a coarse node exists when a
// fine node takes a non-zero weight from it.
//
// Distribution. A coarse node is owned by the rank owning the fine node that copies it
// (index 2c on every axis) when that node is an unknown of the fine level; otherwise by the
// lowest rank among those whose fine nodes take weight from it. Ranks agree on this by a
// rendezvous: each coarse node has a home rank (a hash of its coordinates), which collects
// the claims and answers with the owner. Each rank numbers its coarse nodes contiguously
// (PETSc ownership): first those copied by its fine nodes, in the fine PETSc order, then
// the rest by coordinates (z, y, x); the numbering depends on the fine level and the rank
// count only, so it is deterministic.
#include <petscmat.h>

#include <string>
#include <vector>

#include "solvers/IncrementalPotential.hpp"

namespace optistep {

enum class Embedding { kLinear, kQuadratic };

/// "linear" or "quadratic".
const char* EmbeddingName(Embedding embedding);
/// The embedding named name; false if there is none.
bool ParseEmbedding(const std::string& name, Embedding* embedding);

/// Collective on comm. From the fine level (its owned unknown nodes in PETSc order, dx,
/// first_global and n_global, as IncrementalPotential::Grid() gives them) makes the coarse
/// level in *coarse (spacing 2 dx, the same layout conventions) and returns the
/// prolongation P: an MPIAIJ matrix of block size 3, 3 n_fine x 3 n_coarse, rows in the
/// fine level's ownership (the layout of u), columns in the coarse level's; entries are
/// the embedding weights (dimensionless) times the 3x3 identity. A rank without fine nodes
/// owns no coarse node and must call all the same.
Mat BuildProlongation(MPI_Comm comm, const GridInfo& fine, Embedding embedding, GridInfo* coarse);

}  // namespace optistep
