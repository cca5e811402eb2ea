#include "solvers/GridGalerkinProduct.hpp"

#include <algorithm>

#include "core/Error.hpp"
#include "core/Exchange.hpp"

namespace optistep {
namespace {

MPI_Comm CommOf(Mat A) { return PetscObjectComm(reinterpret_cast<PetscObject>(A)); }

/// The index of offset (x, y, z) in a box of half width w, x fastest.
int BoxIndex(int x, int y, int z, int w) { return (x + w) + (2 * w + 1) * ((y + w) + (2 * w + 1) * (z + w)); }

inline void AddWeighted(double w, const double* v, double* u) {
  for (int e = 0; e < 9; ++e) u[e] += w * v[e];
}

}  // namespace

GridGalerkinProduct::GridGalerkinProduct(const GridOperator& fine, const GridDirectory& fine_directory,
                                         const GridInfo& coarse, const GridDirectory& coarse_directory,
                                         Embedding embedding)
    : fine_(fine), embedding_(embedding) {
  const MPI_Comm comm = CommOf(fine_.matrix());
  int size = 1;
  MPI_Comm_size(comm, &size);
  h_ = EmbeddingHalfWidth(embedding_);
  reach_ = fine_.reach();
  // |c - c'| <= (|i - 2c| + |j - i| + |j - 2c'|) / 2 for any contributing i, j.
  coarse_reach_ = (2 * h_ + reach_) / 2;
  window_ = h_ + reach_;

  for (int az = -h_; az <= h_; ++az)
    for (int ay = -h_; ay <= h_; ++ay)
      for (int ax = -h_; ax <= h_; ++ax)
        left_weight_.push_back(AxisWeight(embedding_, ax) * AxisWeight(embedding_, ay) * AxisWeight(embedding_, az));
  for (int b = -coarse_reach_; b <= coarse_reach_; ++b)
    for (int t = -window_; t <= window_; ++t) {
      const double w = AxisWeight(embedding_, t - 2 * b);
      if (w != 0.0) axis_terms_.push_back({t, b, w});
    }

  // The coarse pattern: every coarse node within the coarse reach of the row's node.
  const PetscInt n_coarse = static_cast<PetscInt>(coarse.owned_nodes.size());
  const int R = coarse_reach_;
  std::vector<GridCoord> remote;
  for (const GridCoord& c : coarse.owned_nodes)
    for (int bz = -R; bz <= R; ++bz)
      for (int by = -R; by <= R; ++by)
        for (int bx = -R; bx <= R; ++bx) {
          const GridCoord node{c[0] + bx, c[1] + by, c[2] + bz};
          if (coarse_directory.LocalIndex(node) < 0) remote.push_back(node);
        }
  std::sort(remote.begin(), remote.end());
  remote.erase(std::unique(remote.begin(), remote.end()), remote.end());
  std::vector<PetscInt> remote_ids;
  std::vector<int> remote_owners;
  coarse_directory.LookUp(remote, &remote_ids, &remote_owners);
  std::vector<PetscInt> ia(1, 0), ja;
  std::vector<PetscInt> row;
  for (const GridCoord& c : coarse.owned_nodes) {
    row.clear();
    for (int bz = -R; bz <= R; ++bz)
      for (int by = -R; by <= R; ++by)
        for (int bx = -R; bx <= R; ++bx) {
          const GridCoord node{c[0] + bx, c[1] + by, c[2] + bz};
          const PetscInt local = coarse_directory.LocalIndex(node);
          const PetscInt id = local >= 0 ? coarse.first_global + local
                                         : remote_ids[std::lower_bound(remote.begin(), remote.end(), node) -
                                                      remote.begin()];
          if (id >= 0) row.push_back(id);
        }
    std::sort(row.begin(), row.end());
    ja.insert(ja.end(), row.begin(), row.end());
    ia.push_back(static_cast<PetscInt>(ja.size()));
  }
  OPTISTEP_PETSC(MatCreate(comm, coarse_matrix_.out()));
  OPTISTEP_PETSC(MatSetSizes(coarse_matrix_, 3 * n_coarse, 3 * n_coarse, 3 * coarse.n_global, 3 * coarse.n_global));
  OPTISTEP_PETSC(MatSetBlockSize(coarse_matrix_, 3));
  OPTISTEP_PETSC(MatSetType(coarse_matrix_, MATBAIJ));
  OPTISTEP_PETSC(MatSeqBAIJSetPreallocationCSR(coarse_matrix_, 3, ia.data(), ja.data(), nullptr));
  OPTISTEP_PETSC(MatMPIBAIJSetPreallocationCSR(coarse_matrix_, 3, ia.data(), ja.data(), nullptr));
  OPTISTEP_PETSC(MatSetOption(coarse_matrix_, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  OPTISTEP_PETSC(MatSetOption(coarse_matrix_, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  OPTISTEP_PETSC(MatSetOption(coarse_matrix_, MAT_SYMMETRIC, PETSC_TRUE));
  OPTISTEP_PETSC(MatSetOption(coarse_matrix_, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));

  // The fine rows around each owned coarse node: this rank's, or ghost rows from their
  // owners.
  const GridInfo& fine_level = fine_.level();
  const std::size_t n_offsets = left_weight_.size();
  source_.assign(static_cast<std::size_t>(n_coarse) * n_offsets, -1);
  std::vector<std::pair<std::size_t, GridCoord>> pending;  // (position in source_, fine node)
  for (PetscInt k = 0; k < n_coarse; ++k) {
    const GridCoord& c = coarse.owned_nodes[k];
    std::size_t a = 0;
    for (int az = -h_; az <= h_; ++az)
      for (int ay = -h_; ay <= h_; ++ay)
        for (int ax = -h_; ax <= h_; ++ax, ++a) {
          const GridCoord i{2 * c[0] + ax, 2 * c[1] + ay, 2 * c[2] + az};
          const PetscInt local = fine_directory.LocalIndex(i);
          if (local >= 0) source_[k * n_offsets + a] = local;
          else pending.emplace_back(k * n_offsets + a, i);
        }
  }
  std::vector<GridCoord> wanted;
  for (const auto& [position, i] : pending) wanted.push_back(i);
  std::sort(wanted.begin(), wanted.end());
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
  std::vector<PetscInt> wanted_ids;
  std::vector<int> wanted_owners;
  fine_directory.LookUp(wanted, &wanted_ids, &wanted_owners);
  std::vector<PetscInt> ghost_of(wanted.size(), -1);
  std::vector<std::vector<std::int64_t>> requests(size);
  std::vector<std::vector<PetscInt>> requested(size);  // ghost rows, per owner
  for (std::size_t q = 0; q < wanted.size(); ++q) {
    if (wanted_ids[q] < 0) continue;
    ghost_of[q] = static_cast<PetscInt>(ghost_rank_.size());
    ghost_rank_.push_back(wanted_owners[q]);
    requests[wanted_owners[q]].push_back(wanted_ids[q]);
    requested[wanted_owners[q]].push_back(ghost_of[q]);
  }
  for (const auto& [position, i] : pending) {
    const PetscInt g = ghost_of[std::lower_bound(wanted.begin(), wanted.end(), i) - wanted.begin()];
    if (g >= 0) source_[position] = -2 - g;
  }

  // Owners answer with each row's entry offsets (j - i), the order its values will come in.
  const auto asked = AllToAll(comm, requests);
  send_rows_.assign(size, {});
  std::vector<std::vector<std::int64_t>> patterns(size);
  GridOperator::Blocks A = fine_.Get();
  for (int r = 0; r < size; ++r)
    for (const std::int64_t id : asked[r]) {
      const PetscInt row = static_cast<PetscInt>(id) - fine_level.first_global;
      send_rows_[r].push_back(row);
      const GridCoord& i = fine_level.owned_nodes[row];
      std::vector<std::int64_t>& out = patterns[r];
      out.push_back((A.d_i[row + 1] - A.d_i[row]) + (A.o_i ? A.o_i[row + 1] - A.o_i[row] : 0));
      for (PetscInt e = A.d_i[row]; e < A.d_i[row + 1]; ++e)
        for (int d = 0; d < 3; ++d) out.push_back(fine_level.owned_nodes[A.d_j[e]][d] - i[d]);
      if (A.o_i)
        for (PetscInt e = A.o_i[row]; e < A.o_i[row + 1]; ++e)
          for (int d = 0; d < 3; ++d) out.push_back(fine_.ghost_nodes()[A.o_j[e]][d] - i[d]);
    }
  fine_.Restore(&A);
  const auto answered = AllToAll(comm, patterns);
  ghost_offset_.assign(ghost_rank_.size(), 0);
  entry_start_.assign(ghost_rank_.size() + 1, 0);
  std::vector<std::vector<std::int8_t>> offsets(ghost_rank_.size());
  for (int r = 0; r < size; ++r) {
    std::size_t k = 0, values = 0;
    for (const PetscInt g : requested[r]) {
      const std::int64_t count = answered[r][k++];
      ghost_offset_[g] = values;
      values += 9 * static_cast<std::size_t>(count);
      for (std::int64_t e = 0; e < 3 * count; ++e) offsets[g].push_back(static_cast<std::int8_t>(answered[r][k++]));
    }
  }
  for (std::size_t g = 0; g < offsets.size(); ++g) {
    entry_start_[g + 1] = entry_start_[g] + offsets[g].size() / 3;
    entry_offset_.insert(entry_offset_.end(), offsets[g].begin(), offsets[g].end());
  }
}

GridGalerkinProduct::~GridGalerkinProduct() = default;

void GridGalerkinProduct::Compute(const GridOperator& coarse) {
  const MPI_Comm comm = CommOf(fine_.matrix());
  int size = 1;
  MPI_Comm_size(comm, &size);
  const GridInfo& fine_level = fine_.level();
  const std::vector<GridCoord>& fine_ghosts = fine_.ghost_nodes();
  GridOperator::Blocks A = fine_.Get();

  // Ghost rows, from their owners.
  std::vector<std::vector<double>> out(size);
  for (int r = 0; r < size; ++r)
    for (const PetscInt row : send_rows_[r]) {
      out[r].insert(out[r].end(), A.d_a + 9 * A.d_i[row], A.d_a + 9 * A.d_i[row + 1]);
      if (A.o_i) out[r].insert(out[r].end(), A.o_a + 9 * A.o_i[row], A.o_a + 9 * A.o_i[row + 1]);
    }
  const auto in = AllToAll(comm, out);
  out.clear();

  const int W = 2 * window_ + 1, C = 2 * coarse_reach_ + 1;
  std::vector<double> U(9 * static_cast<std::size_t>(W) * W * W), V1(9 * static_cast<std::size_t>(W) * W * C),
      V2(9 * static_cast<std::size_t>(W) * C * C), B(9 * static_cast<std::size_t>(C) * C * C);
  const std::size_t n_offsets = left_weight_.size();
  GridOperator::Blocks Ac = coarse.Get();
  const GridInfo& coarse_level = coarse.level();
  for (PetscInt k = 0; k < Ac.n; ++k) {
    // U_t = sum_a w(a) A[i][j], t = j - 2c, over the fine rows i = 2c + a.
    std::fill(U.begin(), U.end(), 0.0);
    std::size_t a = 0;
    for (int az = -h_; az <= h_; ++az)
      for (int ay = -h_; ay <= h_; ++ay)
        for (int ax = -h_; ax <= h_; ++ax, ++a) {
          const PetscInt source = source_[k * n_offsets + a];
          if (source == -1) continue;
          const double w = left_weight_[a];
          if (source >= 0) {
            const GridCoord& i = fine_level.owned_nodes[source];
            const auto add = [&](const GridCoord& j, const double* block) {
              AddWeighted(w, block, &U[9 * BoxIndex(ax + j[0] - i[0], ay + j[1] - i[1], az + j[2] - i[2], window_)]);
            };
            for (PetscInt e = A.d_i[source]; e < A.d_i[source + 1]; ++e)
              add(fine_level.owned_nodes[A.d_j[e]], A.d_a + 9 * e);
            if (A.o_i)
              for (PetscInt e = A.o_i[source]; e < A.o_i[source + 1]; ++e) add(fine_ghosts[A.o_j[e]], A.o_a + 9 * e);
          } else {
            const PetscInt g = -2 - source;
            const double* values = in[ghost_rank_[g]].data() + ghost_offset_[g];
            for (std::size_t e = entry_start_[g]; e < entry_start_[g + 1]; ++e) {
              const std::int8_t* o = &entry_offset_[3 * e];
              AddWeighted(w, values + 9 * (e - entry_start_[g]), &U[9 * BoxIndex(ax + o[0], ay + o[1], az + o[2], window_)]);
            }
          }
        }
    // A_c[c][c + b] = sum_t U_t w(t - 2b), one axis at a time (x, then y, then z).
    std::fill(V1.begin(), V1.end(), 0.0);
    for (int tz = 0; tz < W; ++tz)
      for (int ty = 0; ty < W; ++ty)
        for (const AxisTerm& term : axis_terms_)
          AddWeighted(term.w, &U[9 * ((tz * W + ty) * W + term.t + window_)],
                      &V1[9 * ((tz * W + ty) * C + term.b + coarse_reach_)]);
    std::fill(V2.begin(), V2.end(), 0.0);
    for (int tz = 0; tz < W; ++tz)
      for (const AxisTerm& term : axis_terms_)
        for (int bx = 0; bx < C; ++bx)
          AddWeighted(term.w, &V1[9 * ((tz * W + term.t + window_) * C + bx)],
                      &V2[9 * ((tz * C + term.b + coarse_reach_) * C + bx)]);
    std::fill(B.begin(), B.end(), 0.0);
    for (const AxisTerm& term : axis_terms_)
      for (int by = 0; by < C; ++by)
        for (int bx = 0; bx < C; ++bx)
          AddWeighted(term.w, &V2[9 * (((term.t + window_) * C + by) * C + bx)],
                      &B[9 * (((term.b + coarse_reach_) * C + by) * C + bx)]);
    // Into the coarse row's blocks.
    const GridCoord& c = coarse_level.owned_nodes[k];
    const auto put = [&](const GridCoord& j, double* block) {
      const double* value = &B[9 * BoxIndex(j[0] - c[0], j[1] - c[1], j[2] - c[2], coarse_reach_)];
      std::copy(value, value + 9, block);
    };
    for (PetscInt e = Ac.d_i[k]; e < Ac.d_i[k + 1]; ++e) put(coarse_level.owned_nodes[Ac.d_j[e]], Ac.d_a + 9 * e);
    if (Ac.o_i)
      for (PetscInt e = Ac.o_i[k]; e < Ac.o_i[k + 1]; ++e) put(coarse.ghost_nodes()[Ac.o_j[e]], Ac.o_a + 9 * e);
  }
  coarse.Restore(&Ac);
  fine_.Restore(&A);
  // Drops what PETSc cached from the old values (inverse diagonals) and marks the change.
  OPTISTEP_PETSC(MatAssemblyBegin(coarse_matrix_, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(coarse_matrix_, MAT_FINAL_ASSEMBLY));
}

}  // namespace optistep
