#include "mpm/LocalGrid.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/Error.hpp"

namespace optistep::mpm {

namespace {

constexpr int kKeyBits = 21;
constexpr std::uint64_t kKeyMask = (std::uint64_t{1} << kKeyBits) - 1;

/// floor(n / 4) for negative n too.
int BlockCoordinate(int n) {
  return n >= 0 ? n / LocalGrid::kBlockWidth
                : -((-n + LocalGrid::kBlockWidth - 1) / LocalGrid::kBlockWidth);
}

Eigen::Vector3i BlockOf(const Eigen::Vector3i& node) {
  return Eigen::Vector3i(BlockCoordinate(node.x()), BlockCoordinate(node.y()),
                         BlockCoordinate(node.z()));
}

int LocalOffset(const Eigen::Vector3i& in_block) {
  return in_block.x() +
         LocalGrid::kBlockWidth * (in_block.y() + LocalGrid::kBlockWidth * in_block.z());
}

}  // namespace

LocalGrid::LocalGrid(double dx) : dx_(dx) {
  if (!(dx > 0.0) || !std::isfinite(dx)) {
    std::ostringstream message;
    message.precision(17);
    message << "MPM grid: dx = " << dx << " m, expected a positive finite grid spacing";
    throw InputError(message.str());
  }
}

void LocalGrid::Clear() {
  finalized_ = false;
  slot_of_block_.clear();
  block_of_slot_.clear();
  m.clear();
  mv.clear();
  v.clear();
}

std::uint64_t LocalGrid::BlockKey(const Eigen::Vector3i& block) {
  std::uint64_t key = 0;
  for (int d = 2; d >= 0; --d) {
    if (block(d) < -kMaxBlockCoordinate || block(d) >= kMaxBlockCoordinate)
      throw std::out_of_range("MPM grid: block coordinate " + std::to_string(block(d)) +
                              " on axis " + std::to_string(d) + " is outside [-2^20, 2^20)");
    key = (key << kKeyBits) | static_cast<std::uint64_t>(block(d) + kMaxBlockCoordinate);
  }
  return key;
}

void LocalGrid::Touch(const Stencil& s) {
  if (finalized_) throw std::logic_error("LocalGrid::Touch after Finalize (call Clear first)");
  const Eigen::Vector3i lo = BlockOf(s.base);
  const Eigen::Vector3i hi = BlockOf(s.base + Eigen::Vector3i::Constant(2));
  for (int bz = lo.z(); bz <= hi.z(); ++bz)
    for (int by = lo.y(); by <= hi.y(); ++by)
      for (int bx = lo.x(); bx <= hi.x(); ++bx)
        slot_of_block_.emplace(BlockKey(Eigen::Vector3i(bx, by, bz)), -1);
}

void LocalGrid::Finalize() {
  std::vector<std::uint64_t> keys;
  keys.reserve(slot_of_block_.size());
  for (const auto& entry : slot_of_block_) keys.push_back(entry.first);
  std::sort(keys.begin(), keys.end());
  block_of_slot_.resize(keys.size());
  for (std::size_t slot = 0; slot < keys.size(); ++slot) {
    slot_of_block_[keys[slot]] = static_cast<int>(slot);
    for (int d = 0; d < 3; ++d)
      block_of_slot_[slot](d) =
          static_cast<int>((keys[slot] >> (kKeyBits * d)) & kKeyMask) - kMaxBlockCoordinate;
  }
  m.assign(NodeCount(), 0.0);
  mv.assign(3 * NodeCount(), 0.0);
  v.assign(3 * NodeCount(), 0.0);
  finalized_ = true;
}

int LocalGrid::SlotOf(const Eigen::Vector3i& block) const {
  const auto it = slot_of_block_.find(BlockKey(block));
  return it == slot_of_block_.end() ? -1 : it->second;
}

int LocalGrid::Index(const Eigen::Vector3i& node) const {
  const Eigen::Vector3i block = BlockOf(node);
  const int slot = SlotOf(block);
  if (slot < 0) return -1;
  return kNodesPerBlock * slot + LocalOffset(node - kBlockWidth * block);
}

Eigen::Vector3i LocalGrid::Node(int index) const {
  const int slot = index / kNodesPerBlock;
  const int local = index % kNodesPerBlock;
  const Eigen::Vector3i in_block(local % kBlockWidth, (local / kBlockWidth) % kBlockWidth,
                                 local / (kBlockWidth * kBlockWidth));
  return kBlockWidth * block_of_slot_[slot] + in_block;
}

void LocalGrid::StencilNodes(const Stencil& s, std::array<int, kStencilNodes>* nodes) const {
  // Per axis d and offset a: which of the (at most two) blocks along d holds base_d + a,
  // and the node's coordinate inside it.
  const Eigen::Vector3i first_block = BlockOf(s.base);
  int block_step[3][3], in_block[3][3];
  for (int d = 0; d < 3; ++d)
    for (int a = 0; a < 3; ++a) {
      const int n = s.base(d) + a;
      const int b = BlockCoordinate(n);
      block_step[d][a] = b - first_block(d);
      in_block[d][a] = n - kBlockWidth * b;
    }
  int first_node[2][2][2];  // 64 * slot of block first_block + (sx, sy, sz)
  for (int sz = 0; sz <= block_step[2][2]; ++sz)
    for (int sy = 0; sy <= block_step[1][2]; ++sy)
      for (int sx = 0; sx <= block_step[0][2]; ++sx) {
        const int slot = SlotOf(first_block + Eigen::Vector3i(sx, sy, sz));
        if (slot < 0)
          throw std::logic_error("LocalGrid::StencilNodes: a block of the stencil at node (" +
                                 std::to_string(s.base.x()) + ", " + std::to_string(s.base.y()) +
                                 ", " + std::to_string(s.base.z()) + ") was not touched");
        first_node[sx][sy][sz] = kNodesPerBlock * slot;
      }
  ForEachStencilNode([&](int n, int a, int b, int c) {
    (*nodes)[n] = first_node[block_step[0][a]][block_step[1][b]][block_step[2][c]] +
                  LocalOffset(Eigen::Vector3i(in_block[0][a], in_block[1][b], in_block[2][c]));
  });
}

}  // namespace optistep::mpm
