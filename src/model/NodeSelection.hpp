#pragma once
// Which nodes of a distributed tet mesh a selection holds (a box, or the end of a body
// along an axis: io/SceneSections.hpp, SelectionConfig). Dirichlet conditions and loads
// select nodes the same way.
#include <vector>

#include "io/SceneSections.hpp"
#include "partition/TetPartition.hpp"

namespace optistep {

/// Collective (the extent of an axis-end selection is reduced over all ranks). Per local
/// node l (owned and ghost, mesh.n_local), 1 where the selection holds it: its rest
/// position X_l (m, after the body transform) in the box, or within `within` of the
/// extent of the selected bodies along the axis from their min or max end.
std::vector<char> SelectNodes(const SelectionConfig& select, const DistributedTetMesh& mesh,
                              const std::vector<BodyConfig>& bodies);

}  // namespace optistep
