#include "model/SceneMesh.hpp"

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "io/TetMesh.hpp"

namespace optistep {
namespace {

/// Rank 0 reading and concatenating the bodies' mesh files (the other ranks wait in it).
const Phase kMeshReadPhase("MeshRead");

}  // namespace

GlobalTetMesh AssembleSceneMesh(const SceneConfig& scene) {
  GlobalTetMesh global;
  for (size_t b = 0; b < scene.bodies.size(); ++b) {
    const BodyConfig& body = scene.bodies[b];
    const TetMeshData mesh = ReadTetMesh(body.mesh);
    std::vector<int> new_index(mesh.nodes.size(), -1);
    for (const auto& t : mesh.tets)
      for (int n : t) new_index[n] = 0;
    const int offset = static_cast<int>(global.X.size());
    int next = offset;
    for (size_t n = 0; n < mesh.nodes.size(); ++n) {
      if (new_index[n] < 0) continue;
      new_index[n] = next++;
      global.X.push_back(body.transform.Apply(mesh.nodes[n]));
      global.node_body.push_back(static_cast<int>(b));
    }
    for (const auto& t : mesh.tets) {
      global.tets.push_back({new_index[t[0]], new_index[t[1]], new_index[t[2]], new_index[t[3]]});
      global.tet_body.push_back(static_cast<int>(b));
    }
    if (mesh.tets.empty())
      throw InputError(body.mesh + ": body '" + body.name + "' has no tetrahedra");
  }
  return global;
}

DistributedTetMesh LoadDistributedMesh(MPI_Comm comm, const SceneConfig& scene,
                                       PartitionQuality* quality) {
  GlobalTetMesh global;
  {
    ScopedPhase timed(kMeshReadPhase);
    ReadOnRankZero(comm, [&] { global = AssembleSceneMesh(scene); });
  }
  return DistributeTetMesh(comm, global, quality);
}

}  // namespace optistep
