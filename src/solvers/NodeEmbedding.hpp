#pragma once
// Prolongation between two levels of an MPM grid by node embedding (HOT, Wang, Li, Fang,
// Zhang, Gao, Tang, Kaufman, Jiang 2020, Sec. 4): level m + 1 has spacing 2 dx_m, and a fine
// node is the weighted sum of the coarse nodes around it, per axis linear (HOT eq. 5, the
// default: fine 2c copies coarse c, fine 2c + 1 takes 1/2 from c and c + 1) or quadratic
// (HOT's ablation), in 3D the product of the axes' weights times the 3x3 identity. Both
// reproduce linear fields exactly. The grid is sparse: a coarse node exists when a fine node
// takes a non-zero weight from it.
// Contract: a coarse node is owned by the rank owning the fine node that copies it, else by
// the lowest rank whose fine nodes take weight from it (agreed by a rendezvous); each rank
// numbers its coarse nodes contiguously, deterministically for a fine level and rank count.
// The weights, ownership and numbering: docs/methods/hot.md.
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
