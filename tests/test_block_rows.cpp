// solvers/BlockRows, the Hessian row layout FEM and MPM share, on 1, 2 and 4 ranks: a ring
// of 8 nodes (node i coupled with i - 1, i and i + 1 modulo 8), the ranks owning equal
// contiguous parts, and "elements" on the ring's 8 edges that sum symmetric 6x6 matrices
// into the rows their rank owns. What is checked comes from PETSc:
//  - the preallocation is exact: right after it, the storage PETSc allocated (MatGetInfo
//    on the diagonal and off-diagonal parts) is the hand-counted number of blocks per rank,
//    for AIJ and for SBAIJ's upper triangle;
//  - the assembled matrix equals a dense reference summed by the same loop, entry for
//    entry, with no allocation during assembly, and a second Insert of the same buffers
//    gives the same matrix (the values are written, not added);
//  - SamePattern tells its own matrix from one of another layout.
#include <gtest/gtest.h>
#include <mpi.h>
#include <petscmat.h>

#include <algorithm>
#include <array>
#include <vector>

#include "core/Error.hpp"
#include "core/PetscHandles.hpp"
#include "solvers/BlockRows.hpp"

namespace optistep {
namespace {

constexpr PetscInt kNodes = 8;

struct Ranks {
  int rank = 0, size = 1;
  Ranks() {
    MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
    MPI_Comm_size(PETSC_COMM_WORLD, &size);
  }
  PetscInt rows() const { return kNodes / size; }
  PetscInt first() const { return rank * rows(); }
};

/// The ring's layout for this rank: row i has columns i - 1, i, i + 1 (mod 8), sorted.
/// drop_wrap: leave the wrap-around couplings (0, 7) and (7, 0) out.
BlockRows RingLayout(const Ranks& r, bool drop_wrap = false) {
  BlockRows rows;
  rows.Reset(r.first());
  for (PetscInt i = r.first(); i < r.first() + r.rows(); ++i) {
    std::vector<PetscInt> cols = {(i + kNodes - 1) % kNodes, i, (i + 1) % kNodes};
    std::sort(cols.begin(), cols.end());
    for (PetscInt c : cols)
      if (!(drop_wrap && ((i == 0 && c == kNodes - 1) || (i == kNodes - 1 && c == 0)))) rows.AddColumn(c);
    rows.EndRow();
  }
  return rows;
}

/// Edge e = (e, e + 1 mod 8)'s symmetric 6x6 matrix, entry (p, q), p, q in [0, 6).
double EdgeEntry(PetscInt e, int p, int q) {
  const int lo = p < q ? p : q, hi = p < q ? q : p;
  return 1.0 / (1.0 + e + 0.5 * lo + 0.25 * hi) + (p == q ? 3.0 : 0.0);
}

/// Sums every edge's matrix into the blocks of the rows this rank owns (slot lookup by
/// column), and, when dense is not null, into the dense 24 x 24 reference, in the same
/// order (edges in turn).
void SumEdges(const Ranks& r, BlockRows* rows, std::vector<double>* dense) {
  rows->Zero();
  const PetscInt n = 3 * kNodes;
  for (PetscInt e = 0; e < kNodes; ++e) {
    const std::array<PetscInt, 2> node = {e, (e + 1) % kNodes};
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        for (int d = 0; d < 3; ++d)
          for (int t = 0; t < 3; ++t) {
            const double v = EdgeEntry(e, 3 * a + d, 3 * b + t);
            if (dense) (*dense)[(3 * node[a] + d) * n + 3 * node[b] + t] += v;
            const PetscInt k = node[a] - r.first();
            if (k < 0 || k >= r.rows()) continue;
            for (PetscInt s = rows->row_start()[k]; s < rows->row_start()[k + 1]; ++s)
              if (rows->column(s) == node[b]) rows->block(s)[d + 3 * t] += v;  // column-major
          }
  }
}

/// Blocks PETSc allocated, on this rank: the diagonal and off-diagonal parts.
std::array<PetscInt, 2> AllocatedBlocks(Mat H, int size) {
  Mat parts[2] = {H, nullptr};
  if (size > 1) {
    PetscBool sbaij = PETSC_FALSE;
    OPTISTEP_PETSC(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(H), MATMPISBAIJ, &sbaij));
    if (sbaij) {
      // MPISBAIJ has no accessor for its parts: the local total, reported as diagonal.
      MatInfo info;
      OPTISTEP_PETSC(MatGetInfo(H, MAT_LOCAL, &info));
      return {static_cast<PetscInt>(info.nz_allocated) / 9, -1};
    }
    const PetscInt* garray = nullptr;
    OPTISTEP_PETSC(MatMPIAIJGetSeqAIJ(H, &parts[0], &parts[1], &garray));
  }
  std::array<PetscInt, 2> blocks = {0, 0};
  for (int p = 0; p < 2; ++p) {
    if (!parts[p]) continue;
    MatInfo info;
    OPTISTEP_PETSC(MatGetInfo(parts[p], MAT_LOCAL, &info));
    blocks[p] = static_cast<PetscInt>(info.nz_allocated) / 9;
  }
  return blocks;
}

TEST(BlockRows, LayoutOfTheRing) {
  const Ranks r;
  const BlockRows rows = RingLayout(r);
  EXPECT_TRUE(rows.laid_out());
  ASSERT_EQ(rows.rows(), r.rows());
  EXPECT_EQ(rows.first_row(), r.first());
  EXPECT_EQ(rows.row_start().back(), 3 * r.rows());
  // Row 0's columns are 0, 1, 7 in that order (sorted, the wrap last).
  if (r.rank == 0) {
    EXPECT_EQ(rows.column(0), 0);
    EXPECT_EQ(rows.column(1), 1);
    EXPECT_EQ(rows.column(2), 7);
  }
  BlockRows none;
  EXPECT_FALSE(none.laid_out());
  none.Reset(0);
  EXPECT_TRUE(none.laid_out());
  EXPECT_EQ(none.rows(), 0);
}

TEST(BlockRows, PreallocationIsExactForAij) {
  const Ranks r;
  if (r.size != 1 && r.size != 2 && r.size != 4) GTEST_SKIP() << "hand counts for 1, 2 and 4 ranks";
  const BlockRows rows = RingLayout(r);
  OwnedMat H(rows.NewMatrix(PETSC_COMM_WORLD, MATAIJ));
  // Hand-counted blocks (diagonal part, off-diagonal part) of each rank's rows:
  //  1 rank:  every row 3 columns of its own -> (24, 0);
  //  2 ranks: rows 0-3: row 0 {0, 1 | 7}, rows 1-2 {3 | }, row 3 {2, 3 | 4} -> (10, 2), and
  //           rows 4-7 alike -> (10, 2);
  //  4 ranks: rows 2r, 2r + 1: each row has one neighbour on another rank -> (4, 2).
  const std::array<PetscInt, 2> expected = r.size == 1 ? std::array<PetscInt, 2>{24, 0}
                                           : r.size == 2 ? std::array<PetscInt, 2>{10, 2}
                                                         : std::array<PetscInt, 2>{4, 2};
  EXPECT_EQ(AllocatedBlocks(H, r.size), expected);
}

TEST(BlockRows, PreallocationIsExactForSbaijUpperTriangle) {
  const Ranks r;
  if (r.size != 1 && r.size != 2 && r.size != 4) GTEST_SKIP() << "hand counts for 1, 2 and 4 ranks";
  const BlockRows rows = RingLayout(r);
  OwnedMat H(rows.NewMatrix(PETSC_COMM_WORLD, MATSBAIJ));
  // Columns on or above the diagonal: row 0 {0, 1, 7} 3, rows 1-6 {i, i + 1} 2, row 7 {7} 1.
  const PetscInt per_rank[3][4] = {{16, 0, 0, 0}, {9, 7, 0, 0}, {5, 4, 4, 3}};
  const int which = r.size == 1 ? 0 : r.size == 2 ? 1 : 2;
  EXPECT_EQ(AllocatedBlocks(H, r.size)[0], per_rank[which][r.rank]);
}

TEST(BlockRows, AssembledMatrixEqualsDenseReference) {
  const Ranks r;
  if (kNodes % r.size != 0) GTEST_SKIP() << "8 nodes in equal parts";
  for (MatType type : {MATAIJ, MATBAIJ}) {
    SCOPED_TRACE(type);
    BlockRows rows = RingLayout(r);
    OwnedMat H(rows.NewMatrix(PETSC_COMM_WORLD, type));
    const PetscInt n = 3 * kNodes;
    std::vector<double> dense(static_cast<std::size_t>(n * n), 0.0);
    SumEdges(r, &rows, &dense);
    // Twice: INSERT_VALUES writes, so the second pass changes nothing.
    for (int pass = 0; pass < 2; ++pass) {
      rows.Insert(H);
      MatInfo info;
      OPTISTEP_PETSC(MatGetInfo(H, MAT_LOCAL, &info));
      EXPECT_EQ(info.mallocs, 0.0);
      for (PetscInt row = 3 * r.first(); row < 3 * (r.first() + r.rows()); ++row) {
        std::vector<double> got(static_cast<std::size_t>(n), 0.0);
        PetscInt count = 0;
        const PetscInt* cols = nullptr;
        const PetscScalar* values = nullptr;
        OPTISTEP_PETSC(MatGetRow(H, row, &count, &cols, &values));
        EXPECT_EQ(count, 9);  // three blocks of three columns
        for (PetscInt j = 0; j < count; ++j) got[cols[j]] = values[j];
        OPTISTEP_PETSC(MatRestoreRow(H, row, &count, &cols, &values));
        for (PetscInt c = 0; c < n; ++c) EXPECT_EQ(got[c], dense[row * n + c]) << "row " << row << " column " << c;
      }
    }
    EXPECT_TRUE(rows.SamePattern(H));
  }
}

TEST(BlockRows, SamePatternTellsLayoutsApart) {
  const Ranks r;
  if (kNodes % r.size != 0) GTEST_SKIP() << "8 nodes in equal parts";
  BlockRows ring = RingLayout(r), chain = RingLayout(r, true);
  OwnedMat H(ring.NewMatrix(PETSC_COMM_WORLD, MATBAIJ));
  SumEdges(r, &ring, nullptr);
  ring.Insert(H);
  EXPECT_TRUE(ring.SamePattern(H));
  // The chain differs on the ranks owning node 0 or node 7 only.
  const bool owns_an_end = r.first() == 0 || r.first() + r.rows() == kNodes;
  EXPECT_EQ(chain.SamePattern(H), !owns_an_end);
}

}  // namespace
}  // namespace optistep
