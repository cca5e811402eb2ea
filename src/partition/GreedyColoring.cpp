#include "partition/GreedyColoring.hpp"

#include <algorithm>

namespace optistep {

std::vector<int> GreedyColors(const std::vector<std::int64_t>& flat, int per_item,
                              std::int64_t n_nodes, int* n_colors) {
  const size_t n_items = flat.size() / per_item;
  std::vector<int> color(n_items, -1);
  std::vector<std::vector<int>> node_colors(static_cast<size_t>(n_nodes));
  int count = 0;
  for (size_t t = 0; t < n_items; ++t) {
    const auto taken = [&](int candidate) {
      for (int a = 0; a < per_item; ++a) {
        const auto& at = node_colors[flat[per_item * t + a]];
        if (std::find(at.begin(), at.end(), candidate) != at.end()) return true;
      }
      return false;
    };
    int c = 0;
    while (taken(c)) ++c;
    color[t] = c;
    for (int a = 0; a < per_item; ++a) node_colors[flat[per_item * t + a]].push_back(c);
    count = std::max(count, c + 1);
  }
  *n_colors = count;
  return color;
}

}  // namespace optistep
