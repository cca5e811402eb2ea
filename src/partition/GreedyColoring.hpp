#pragma once
// Greedy graph coloring of items that share nodes (constraints at particles, tets at mesh
// nodes): the order in which Gauss-Seidel passes can run color by color with no two updates
// of a color touching the same node (particles/ParticlePartition.hpp, integrators/FemXpbd.hpp).
#include <cstdint>
#include <vector>

namespace optistep {

/// Greedy coloring in item order: item k (its nodes flat[per_item k .. per_item (k+1)),
/// ids in [0, n_nodes)) gets the smallest color none of the earlier items at one of its
/// nodes has. Rank-local; the result depends only on the input. Returns the color per item
/// (0-based); *n_colors the number of colors.
std::vector<int> GreedyColors(const std::vector<std::int64_t>& flat, int per_item,
                              std::int64_t n_nodes, int* n_colors);

}  // namespace optistep
