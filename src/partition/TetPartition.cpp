#include "partition/TetPartition.hpp"

#include <metis.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/Phases.hpp"

namespace optistep {
namespace {

constexpr int kTagHeader = 701;
constexpr int kTagData = 702;

/// Rank 0: METIS and each rank's share (owned nodes, ghosts, tets, new numbering).
const Phase kPartitionPhase("Partition");
/// Packing, sending and unpacking the shares (rank 0 sends, the others wait and receive).
const Phase kDistributePhase("Distribute");

/// Everything rank 0 decides about one rank's share, in original ids.
struct RankShare {
  std::vector<int> owned;           // original node ids, ascending
  std::vector<int> ghosts;          // original node ids, ascending by new global id
  std::vector<int> tets;            // original tet ids, ascending
  std::vector<char> counted;        // per entry of tets
};

/// Node -> incident tets (CSR), for ownership fix-ups.
void BuildNodeToTet(const GlobalTetMesh& mesh, std::vector<int>* offsets, std::vector<int>* ids) {
  const int n_nodes = static_cast<int>(mesh.X.size());
  offsets->assign(n_nodes + 1, 0);
  for (const auto& t : mesh.tets)
    for (int a = 0; a < 4; ++a) ++(*offsets)[t[a] + 1];
  std::partial_sum(offsets->begin(), offsets->end(), offsets->begin());
  ids->assign(offsets->back(), 0);
  std::vector<int> fill(offsets->begin(), offsets->end() - 1);
  for (int e = 0; e < static_cast<int>(mesh.tets.size()); ++e)
    for (int a = 0; a < 4; ++a) (*ids)[fill[mesh.tets[e][a]]++] = e;
}

std::vector<RankShare> ComputeShares(const GlobalTetMesh& mesh, const TetPartitionPlan& plan,
                                     int ranks, std::vector<PetscInt>* new_id) {
  const int n_nodes = static_cast<int>(mesh.X.size());
  std::vector<RankShare> shares(ranks);
  for (int n = 0; n < n_nodes; ++n) shares[plan.node_owner[n]].owned.push_back(n);
  new_id->assign(n_nodes, -1);
  PetscInt next = 0;
  for (int r = 0; r < ranks; ++r)
    for (int n : shares[r].owned) (*new_id)[n] = next++;

  std::vector<int> touching;
  for (int e = 0; e < static_cast<int>(mesh.tets.size()); ++e) {
    touching.clear();
    for (int a = 0; a < 4; ++a) touching.push_back(plan.node_owner[mesh.tets[e][a]]);
    std::sort(touching.begin(), touching.end());
    touching.erase(std::unique(touching.begin(), touching.end()), touching.end());
    const bool metis_rank_keeps =
        std::binary_search(touching.begin(), touching.end(), plan.tet_part[e]);
    const int counter = metis_rank_keeps ? plan.tet_part[e] : plan.node_owner[mesh.tets[e][0]];
    for (int r : touching) {
      shares[r].tets.push_back(e);
      shares[r].counted.push_back(r == counter ? 1 : 0);
    }
  }
  for (int r = 0; r < ranks; ++r) {
    auto& ghosts = shares[r].ghosts;
    for (int e : shares[r].tets)
      for (int a = 0; a < 4; ++a) {
        const int n = mesh.tets[e][a];
        if (plan.node_owner[n] != r) ghosts.push_back(n);
      }
    std::sort(ghosts.begin(), ghosts.end(),
              [&](int a, int b) { return (*new_id)[a] < (*new_id)[b]; });
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  }
  return shares;
}

PartitionQuality Quality(const std::vector<RankShare>& shares, std::int64_t edge_cut) {
  PartitionQuality q;
  q.ranks = static_cast<int>(shares.size());
  q.edge_cut = edge_cut;
  std::int64_t total_owned = 0, total_ghost = 0, total_tets = 0;
  std::int64_t max_owned = 0, max_tets = 0;
  for (const auto& s : shares) {
    const std::int64_t counted = std::count(s.counted.begin(), s.counted.end(), 1);
    q.owned_nodes.push_back(static_cast<std::int64_t>(s.owned.size()));
    q.counted_tets.push_back(counted);
    q.ghost_nodes.push_back(static_cast<std::int64_t>(s.ghosts.size()));
    total_owned += s.owned.size();
    total_ghost += s.ghosts.size();
    total_tets += counted;
    max_owned = std::max<std::int64_t>(max_owned, s.owned.size());
    max_tets = std::max(max_tets, counted);
  }
  const double mean_owned = static_cast<double>(total_owned) / q.ranks;
  const double mean_tets = static_cast<double>(total_tets) / q.ranks;
  q.node_imbalance = mean_owned > 0 ? max_owned / mean_owned : 1.0;
  q.tet_imbalance = mean_tets > 0 ? max_tets / mean_tets : 1.0;
  q.ghost_ratio = total_owned > 0 ? static_cast<double>(total_ghost) / total_owned : 0.0;
  return q;
}

/// Flat message for one rank: integers and reals, in the order UnpackShare reads them.
struct ShareMessage {
  std::vector<PetscInt> ints;
  std::vector<double> reals;
};

ShareMessage PackShare(const GlobalTetMesh& mesh, const RankShare& s,
                       const std::vector<PetscInt>& new_id, PetscInt node_begin) {
  ShareMessage m;
  const PetscInt n_owned = static_cast<PetscInt>(s.owned.size());
  const PetscInt n_local = n_owned + static_cast<PetscInt>(s.ghosts.size());
  const PetscInt n_tets = static_cast<PetscInt>(s.tets.size());
  m.ints = {static_cast<PetscInt>(mesh.X.size()), static_cast<PetscInt>(mesh.tets.size()),
            node_begin, n_owned, n_local, n_tets};
  std::vector<int> local_nodes(s.owned);
  local_nodes.insert(local_nodes.end(), s.ghosts.begin(), s.ghosts.end());
  // Original id -> local index, through a sorted lookup of the local set.
  std::vector<std::pair<int, int>> lookup;
  lookup.reserve(local_nodes.size());
  for (int l = 0; l < static_cast<int>(local_nodes.size()); ++l)
    lookup.emplace_back(local_nodes[l], l);
  std::sort(lookup.begin(), lookup.end());
  auto local_of = [&](int original) {
    auto it = std::lower_bound(lookup.begin(), lookup.end(), std::make_pair(original, -1));
    return it->second;
  };
  for (int n : local_nodes) {
    m.ints.push_back(new_id[n]);
    m.ints.push_back(n);
    m.ints.push_back(mesh.node_body[n]);
    for (int d = 0; d < 3; ++d) m.reals.push_back(mesh.X[n][d]);
  }
  for (size_t k = 0; k < s.tets.size(); ++k) {
    const int e = s.tets[k];
    for (int a = 0; a < 4; ++a) m.ints.push_back(local_of(mesh.tets[e][a]));
    m.ints.push_back(mesh.tet_body[e]);
    m.ints.push_back(e);
    m.ints.push_back(s.counted[k]);
  }
  return m;
}

DistributedTetMesh UnpackShare(MPI_Comm comm, const ShareMessage& m) {
  DistributedTetMesh d;
  d.comm = comm;
  size_t i = 0;
  d.n_global_nodes = m.ints[i++];
  d.n_global_tets = m.ints[i++];
  d.node_begin = m.ints[i++];
  d.n_owned = m.ints[i++];
  d.n_local = m.ints[i++];
  const PetscInt n_tets = m.ints[i++];
  d.node_end = d.node_begin + d.n_owned;
  d.local_to_global.resize(d.n_local);
  d.node_original_id.resize(d.n_local);
  d.node_body.resize(d.n_local);
  d.X.resize(d.n_local);
  for (PetscInt l = 0; l < d.n_local; ++l) {
    d.local_to_global[l] = m.ints[i++];
    d.node_original_id[l] = m.ints[i++];
    d.node_body[l] = static_cast<int>(m.ints[i++]);
    d.X[l] = Vec3(m.reals[3 * l], m.reals[3 * l + 1], m.reals[3 * l + 2]);
  }
  d.tets.resize(n_tets);
  d.tet_body.resize(n_tets);
  d.tet_original_id.resize(n_tets);
  d.tet_counted.resize(n_tets);
  for (PetscInt k = 0; k < n_tets; ++k) {
    for (int a = 0; a < 4; ++a) d.tets[k][a] = static_cast<int>(m.ints[i++]);
    d.tet_body[k] = static_cast<int>(m.ints[i++]);
    d.tet_original_id[k] = m.ints[i++];
    d.tet_counted[k] = static_cast<char>(m.ints[i++]);
    d.n_counted_tets += d.tet_counted[k];
  }
  return d;
}

}  // namespace

TetPartitionPlan PlanTetPartition(const GlobalTetMesh& mesh, int ranks) {
  const int n_nodes = static_cast<int>(mesh.X.size());
  const int n_tets = static_cast<int>(mesh.tets.size());
  TetPartitionPlan plan;
  plan.node_owner.assign(n_nodes, 0);
  plan.tet_part.assign(n_tets, 0);
  if (ranks <= 1 || n_tets == 0) return plan;

  std::vector<idx_t> eptr(n_tets + 1), eind(4 * static_cast<size_t>(n_tets));
  for (int e = 0; e < n_tets; ++e) {
    eptr[e] = 4 * e;
    for (int a = 0; a < 4; ++a) eind[4 * e + a] = mesh.tets[e][a];
  }
  eptr[n_tets] = 4 * n_tets;
  idx_t ne = n_tets, nn = n_nodes, ncommon = 3, nparts = ranks, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // fixed seed: the same partition on every run
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> epart(n_tets), npart(n_nodes);
  const int status = METIS_PartMeshDual(&ne, &nn, eptr.data(), eind.data(), nullptr, nullptr,
                                        &ncommon, &nparts, nullptr, options, &objval,
                                        epart.data(), npart.data());
  if (status != METIS_OK)
    throw std::runtime_error("METIS_PartMeshDual failed with status " + std::to_string(status) +
                             " for " + std::to_string(ranks) + " parts");
  plan.edge_cut = objval;
  for (int e = 0; e < n_tets; ++e) plan.tet_part[e] = epart[e];

  // A node is owned by the part METIS gave it if a tet of that part touches it;
  // otherwise by the part of its first tet (so every rank's owned nodes are reachable
  // from its own tets).
  std::vector<int> offsets, incident;
  BuildNodeToTet(mesh, &offsets, &incident);
  for (int n = 0; n < n_nodes; ++n) {
    int owner = npart[n];
    bool touched = false;
    for (int k = offsets[n]; k < offsets[n + 1]; ++k) touched |= (epart[incident[k]] == owner);
    if (!touched && offsets[n + 1] > offsets[n]) owner = epart[incident[offsets[n]]];
    plan.node_owner[n] = owner;
  }
  return plan;
}

PartitionQuality EvaluatePartition(const GlobalTetMesh& mesh, int ranks) {
  const TetPartitionPlan plan = PlanTetPartition(mesh, ranks);
  std::vector<PetscInt> new_id;
  return Quality(ComputeShares(mesh, plan, ranks, &new_id), plan.edge_cut);
}

DistributedTetMesh DistributeTetMesh(MPI_Comm comm, const GlobalTetMesh& mesh,
                                     PartitionQuality* quality) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  ShareMessage mine;
  std::vector<PetscInt> new_id;
  std::vector<RankShare> shares;
  if (rank == 0) {
    ScopedPhase timed(kPartitionPhase);
    const TetPartitionPlan plan = PlanTetPartition(mesh, size);
    shares = ComputeShares(mesh, plan, size, &new_id);
    if (quality) *quality = Quality(shares, plan.edge_cut);
  }
  ScopedPhase timed(kDistributePhase);
  if (rank == 0) {
    std::vector<PetscInt> node_begin(size + 1, 0);
    for (int r = 0; r < size; ++r)
      node_begin[r + 1] = node_begin[r] + static_cast<PetscInt>(shares[r].owned.size());
    for (int r = size - 1; r >= 0; --r) {
      ShareMessage m = PackShare(mesh, shares[r], new_id, node_begin[r]);
      if (r == 0) {
        mine = std::move(m);
        break;
      }
      long long counts[2] = {static_cast<long long>(m.ints.size()),
                             static_cast<long long>(m.reals.size())};
      MPI_Send(counts, 2, MPI_LONG_LONG, r, kTagHeader, comm);
      MPI_Send(m.ints.data(), static_cast<int>(m.ints.size()), MPIU_INT, r, kTagData, comm);
      MPI_Send(m.reals.data(), static_cast<int>(m.reals.size()), MPI_DOUBLE, r, kTagData, comm);
    }
  } else {
    long long counts[2] = {0, 0};
    MPI_Recv(counts, 2, MPI_LONG_LONG, 0, kTagHeader, comm, MPI_STATUS_IGNORE);
    mine.ints.resize(counts[0]);
    mine.reals.resize(counts[1]);
    MPI_Recv(mine.ints.data(), static_cast<int>(counts[0]), MPIU_INT, 0, kTagData, comm,
             MPI_STATUS_IGNORE);
    MPI_Recv(mine.reals.data(), static_cast<int>(counts[1]), MPI_DOUBLE, 0, kTagData, comm,
             MPI_STATUS_IGNORE);
  }
  // Rank 0's plan is not needed to unpack: freed first, so its peak memory stays that of
  // the shares or of the mesh, not both.
  std::vector<RankShare>().swap(shares);
  std::vector<PetscInt>().swap(new_id);
  return UnpackShare(comm, mine);
}

}  // namespace optistep
