#include "model/SceneMesh.hpp"

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "io/TetMesh.hpp"

#include <cstdio>
#include <map>

namespace optistep {
namespace {

/// Rank 0 reading and concatenating the bodies' mesh files (the other ranks wait in it).
const Phase kMeshReadPhase("MeshRead");

}  // namespace

GlobalTetMesh AssembleSceneMesh(const ModelConfig& scene, const AvailableMemory* available) {
  // Copies of a body share its file: each file is read (and validated) once.
  std::map<std::string, TetMeshData> meshes;
  double tets = 0.0, nodes = 0.0;
  for (const BodyConfig& body : scene.bodies) {
    auto it = meshes.find(body.mesh);
    if (it == meshes.end()) it = meshes.emplace(body.mesh, ReadTetMesh(body.mesh)).first;
    if (it->second.tets.empty())
      throw InputError(body.mesh + ": body '" + body.name + "' has no tetrahedra");
    tets += static_cast<double>(it->second.tets.size());
    nodes += static_cast<double>(it->second.nodes.size());
  }
  if (available != nullptr) CheckFemMemory(scene, tets, nodes, *available);

  GlobalTetMesh global;
  global.X.reserve(static_cast<std::size_t>(nodes));
  global.node_body.reserve(static_cast<std::size_t>(nodes));
  global.tets.reserve(static_cast<std::size_t>(tets));
  global.tet_body.reserve(static_cast<std::size_t>(tets));
  for (size_t b = 0; b < scene.bodies.size(); ++b) {
    const BodyConfig& body = scene.bodies[b];
    const TetMeshData& mesh = meshes.at(body.mesh);
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
  }
  return global;
}

void CheckFemMemory(const ModelConfig& scene, double tets, double nodes, const AvailableMemory& available) {
  const double setup_bytes = AssembledMeshBytes(tets, nodes);
  const double run_bytes = tets * kRunBytesPerTet;
  const bool run_fits = run_bytes <= available.total;
  if (run_fits && setup_bytes <= available.rank0_node) return;
  char counts[160];
  std::snprintf(counts, sizeof counts, "the bodies' meshes hold %.3g tets and %.3g nodes in all (%zu bodies)",
                tets, nodes, scene.bodies.size());
  const std::string need =
      run_fits ? "rank 0 needs " + BeyondMemory(setup_bytes, available.rank0_node, "its node", available.source) +
                     ", to assemble them"
               : "the run needs " + BeyondMemory(run_bytes, available.total, RunNodes(available), available.source);
  throw InputError(scene.path + ": " + counts + "; " + need +
                   "; expected coarser meshes (bodies[].mesh) or fewer copies (bodies[].copies.count)");
}

DistributedTetMesh LoadDistributedMesh(MPI_Comm comm, const ModelConfig& scene,
                                       PartitionQuality* quality) {
  const AvailableMemory available = QueryAvailableMemory(comm);
  GlobalTetMesh global;
  {
    ScopedPhase timed(kMeshReadPhase);
    ReadOnRankZero(comm, [&] { global = AssembleSceneMesh(scene, &available); });
  }
  return DistributeTetMesh(comm, global, quality);
}

}  // namespace optistep
