#pragma once
// HOT's smoother (Wang et al. 2020, Sec. 5.3, Alg. 2; its reference code's gs_smooth and
// mark_colors): symmetric block Gauss-Seidel on a grid level's operator
// (solvers/GridOperator.hpp) in a multicolored order. The nodes are grouped into 8 colours
// by the parity of their 4 x 4 x 4 block on each axis (NodeEmbedding's ColorOf); a forward
// sweep relaxes colour 0, then 1, ..., 7, block by block, each block's nodes in (k, j, i)
// order, every node's 3x3 diagonal block solved exactly (x_i = D_i^-1 (b_i - sum_{j != i}
// A_ij x_j)); the backward sweep runs the same order reversed. Two blocks of one colour are
// at least 5 nodes apart, so while the operator's reach is at most 4 (the 5^3 and 7^3
// stencils of the linear and quadratic hierarchies) nodes of one colour in different blocks
// do not couple: the sweep is Gauss-Seidel in one global order fixed by the coordinates
// alone, whichever rank holds which block, provided each block lies on one rank (every
// level of solvers/NodeEmbedding.hpp). In parallel each rank relaxes its rows of a colour
// and then sends the new values of that colour's ghost nodes (one scatter per colour).
// So the smoother is the same operator on any number of ranks (to round-off: the row sums
// run in the matrix's storage order), symmetric (forward then backward), and convergent for
// a symmetric positive definite operator, which keeps the V-cycle symmetric positive
// definite.
//
// As a PETSc preconditioner it is a PCSHELL (Attach) with the fast Richardson path, so
// PETSc's Richardson smoother (PCMG's level KSP) sweeps the iterate in place.
#include <petscksp.h>

#include <array>
#include <vector>

#include "core/PetscHandles.hpp"
#include "solvers/GridOperator.hpp"

namespace optistep {

class ColoredGaussSeidel {
 public:
  /// Collective: the colours and their ghost scatters for op (kept by reference).
  explicit ColoredGaussSeidel(const GridOperator& op);
  ~ColoredGaussSeidel();
  ColoredGaussSeidel(const ColoredGaussSeidel&) = delete;
  ColoredGaussSeidel& operator=(const ColoredGaussSeidel&) = delete;

  /// Makes pc, a PCSHELL on op's matrix, this smoother (set up, apply, Richardson, view).
  void Attach(PC pc);
  /// Rank-local: inverts the 3x3 diagonal blocks of the operator's current values.
  void SetUp();
  /// Collective: `sweeps` symmetric sweeps (forward, then backward) on A x = b, starting
  /// from x = 0 when zero_guess, else from x. b and x: vectors of the level's layout.
  void Sweep(Vec b, Vec x, bool zero_guess, int sweeps);
  /// Whether the sweep is the same on any rank count: every block on one rank and the
  /// operator's reach at most 4 (the same on every rank).
  bool RankCountIndependent() const { return independent_; }

 private:
  void Relax(int color, bool forward, const GridOperator::Blocks& A, const PetscScalar* b, PetscScalar* x,
             const PetscScalar* ghost) const;

  const GridOperator& op_;
  std::array<std::vector<PetscInt>, 8> rows_;  // owned rows of each colour, in sweep order
  std::array<OwnedVecScatter, 8> scatters_;     // each colour's ghost values
  OwnedVec ghost_;
  std::vector<double> inverse_diagonal_;  // 9 per row, column-major
  bool independent_ = false;
};

}  // namespace optistep
