#pragma once
// The Galerkin coarse operator A_c = P^T A_f P (HOT, Wang et al. 2020, eq. 6) of two levels
// of the grid multigrid, formed by the fixed stencil of the node embedding
// (solvers/NodeEmbedding.hpp) instead of a general sparse triple product: with P_ic =
// w(i - 2c) (w the product of the axes' AxisWeight),
//   A_c[c][c'] = sum_i sum_j w(i - 2c) A_f[i][j] w(j - 2c'),
// computed per owned coarse row c as
//   U_t = sum_a w(a) A_f[i][j]           over the fine rows i = 2c + a around c, t = j - 2c,
//   A_c[c][c + b] = sum_t U_t w(t - 2b)  one axis after the other (w is a product),
// on a window of 3x3 blocks around 2c. Every sum runs in an order fixed by the offsets a
// and t alone (a window position takes at most one term per fine row), so a coarse row
// depends on the fine rows' values and not on the rank count, the numbering or the order
// in which messages arrive. Fine rows of other ranks come as ghost rows from their owners.
//
// The coarse pattern is fixed by the grid: every coarse node within the coarse reach of the
// row node (2 for the linear embedding of a 5^3 stencil, 3 for the quadratic one), so there
// is no symbolic product: the constructor makes the coarse matrix and the plan of ghost
// rows once per hierarchy, Compute the values for every new fine operator.
#include <petscmat.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/PetscHandles.hpp"
#include "solvers/GridOperator.hpp"
#include "solvers/NodeEmbedding.hpp"

namespace optistep {

class GridGalerkinProduct {
 public:
  /// Collective on the fine operator's communicator. fine: level m (kept by reference; its
  /// values may change between Computes, its pattern not); coarse and coarse_directory:
  /// level m + 1 (Coarsening::coarse, its GridDirectory); embedding: the one P was made with.
  GridGalerkinProduct(const GridOperator& fine, const GridDirectory& fine_directory, const GridInfo& coarse,
                      const GridDirectory& coarse_directory, Embedding embedding);
  ~GridGalerkinProduct();
  GridGalerkinProduct(const GridGalerkinProduct&) = delete;
  GridGalerkinProduct& operator=(const GridGalerkinProduct&) = delete;

  /// The coarse operator: BAIJ of block size 3, rows the coarse level's owned nodes, zero
  /// until Compute. Owned by this object (a caller that keeps it takes a reference).
  Mat coarse_matrix() const { return coarse_matrix_; }
  /// Collective: the values of the coarse matrix from the fine operator's current values;
  /// coarse is the GridOperator of coarse_matrix(). Assembles the coarse matrix.
  void Compute(const GridOperator& coarse);

 private:
  const GridOperator& fine_;
  Embedding embedding_;
  int h_ = 1;         // the embedding's half width
  int reach_ = 2;     // the fine operator's reach
  int coarse_reach_ = 2;
  int window_ = 3;    // half width of the window U: h + reach
  OwnedMat coarse_matrix_;
  /// Per owned coarse row and fine offset a (in (a_z, a_y, a_x) order): the fine row's
  /// local index (>= 0), its ghost row g as -2 - g, or -1 when there is no such fine node.
  std::vector<PetscInt> source_;
  std::vector<double> left_weight_;  // w(a), same order
  /// Ghost rows: the rank sending each, the offset of its values in that rank's message
  /// (doubles), its entries' offsets o = j - i (3 per entry, from entry_start_).
  std::vector<int> ghost_rank_;
  std::vector<std::size_t> ghost_offset_;
  std::vector<std::size_t> entry_start_;
  std::vector<std::int8_t> entry_offset_;
  /// Per rank: the owned fine rows this rank sends it, in its order.
  std::vector<std::vector<PetscInt>> send_rows_;
  /// One axis of the right contraction: window position t, coarse offset b, w(t - 2b),
  /// sorted by (b, t).
  struct AxisTerm {
    int t, b;
    double w;
  };
  std::vector<AxisTerm> axis_terms_;
};

}  // namespace optistep
