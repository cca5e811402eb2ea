#pragma once
// The rank-local sparse MPM grid: nodes exist only in the blocks of 4 x 4 x 4 nodes that
// some particle stencil touches (block (bx, by, bz) holds the nodes (i, j, k) with
// floor(i / 4) = bx, floor(j / 4) = by, floor(k / 4) = bz): block-sparse storage in the
// spirit of SPGrid (Setaluri, Aanjaneya, Bauer, Sifakis 2014), on which HOT's grid lives.
// Blocks are also the unit that partition/ distributes across ranks.
//
// Node numbering, fixed by Finalize and independent of the order of the Touch calls:
// blocks are sorted by (bz, by, bx) lexicographically (a plain row-major key, not Morton);
// block slot s holds the local nodes [64 s, 64 s + 64), node (i, j, k) at
// 64 s + (i - 4 bx) + 4 (j - 4 by) + 16 (k - 4 bz).
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/Types.hpp"
#include "mpm/BSpline.hpp"

namespace optistep::mpm {

class LocalGrid {
 public:
  static constexpr int kBlockWidth = 4;
  static constexpr int kNodesPerBlock = kBlockWidth * kBlockWidth * kBlockWidth;
  /// Node indices i, j, k must lie in [-2^22, 2^22) (block coordinates in [-2^20, 2^20)).
  static constexpr int kMaxBlockCoordinate = 1 << 20;

  /// An empty grid of spacing dx (m). Throws InputError unless 0 < dx < inf.
  explicit LocalGrid(double dx);

  double dx() const { return dx_; }

  /// Forgets all blocks and node data; the grid is then open for Touch.
  void Clear();
  /// Adds the (up to 8) blocks holding the 27 nodes of s. Only between Clear and Finalize
  /// (std::logic_error otherwise); std::out_of_range beyond kMaxBlockCoordinate.
  void Touch(const Stencil& s);
  /// Numbers the nodes of the touched blocks (see the file comment) and sizes m, mv and
  /// v to NodeCount(), zero-filled.
  void Finalize();

  int BlockCount() const { return static_cast<int>(block_of_slot_.size()); }
  int NodeCount() const { return kNodesPerBlock * BlockCount(); }
  /// Local index of node (i, j, k), or -1 if its block was not touched. After Finalize.
  int Index(const Eigen::Vector3i& node) const;
  /// Node (i, j, k) of a local index in [0, NodeCount()).
  Eigen::Vector3i Node(int index) const;
  /// The local indices of the 27 nodes of s, in the order n = a + 3 b + 9 c (with at most
  /// 8 hash look-ups). Throws std::logic_error if a block of s was not touched.
  void StencilNodes(const Stencil& s, std::array<int, kStencilNodes>* nodes) const;

  /// Node data, set by the transfers (mpm/Transfers.hpp):
  std::vector<double> m;   ///< m_i (kg), one per node
  std::vector<double> mv;  ///< momentum m_i v_i (kg m/s), 3 per node (block size 3)
  std::vector<double> v;   ///< velocity v_i (m/s), 3 per node (block size 3)

 private:
  /// (bz, by, bx) packed in 21 bits each, biased by kMaxBlockCoordinate, so that the
  /// integer order of keys is the (bz, by, bx) order.
  static std::uint64_t BlockKey(const Eigen::Vector3i& block);
  int SlotOf(const Eigen::Vector3i& block) const;

  double dx_;
  bool finalized_ = false;
  std::unordered_map<std::uint64_t, int> slot_of_block_;  // -1 until Finalize
  std::vector<Eigen::Vector3i> block_of_slot_;
};

}  // namespace optistep::mpm
