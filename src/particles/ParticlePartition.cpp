#include "particles/ParticlePartition.hpp"

#include <metis.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "partition/GreedyColoring.hpp"

namespace optistep {

std::vector<int> PlanParticlePartition(std::int64_t n_particles,
                                       const std::vector<std::int64_t>& pairs, int ranks) {
  std::vector<int> owner(static_cast<size_t>(n_particles), 0);
  if (ranks <= 1 || n_particles == 0) return owner;
  // The particle graph in CSR form: each constraint an edge both ways (repeats merged).
  std::vector<std::vector<idx_t>> adjacent(static_cast<size_t>(n_particles));
  for (size_t k = 0; k + 1 < pairs.size(); k += 2) {
    adjacent[pairs[k]].push_back(static_cast<idx_t>(pairs[k + 1]));
    adjacent[pairs[k + 1]].push_back(static_cast<idx_t>(pairs[k]));
  }
  std::vector<idx_t> xadj(1, 0), adjncy;
  for (auto& list : adjacent) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    adjncy.insert(adjncy.end(), list.begin(), list.end());
    xadj.push_back(static_cast<idx_t>(adjncy.size()));
  }
  idx_t nvtxs = static_cast<idx_t>(n_particles), ncon = 1, nparts = ranks, objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = 1;  // fixed seed: the same partition on every run
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(static_cast<size_t>(n_particles), 0);
  if (adjncy.empty()) {  // no edge at all: METIS wants one; deal particles out in blocks
    for (std::int64_t p = 0; p < n_particles; ++p) owner[p] = static_cast<int>(p * ranks / n_particles);
    return owner;
  }
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, xadj.data(), adjncy.data(), nullptr,
                                         nullptr, nullptr, &nparts, nullptr, nullptr, options,
                                         &objval, part.data());
  if (status != METIS_OK)
    throw std::runtime_error("METIS_PartGraphKway failed with status " + std::to_string(status) +
                             " for " + std::to_string(ranks) + " parts");
  for (std::int64_t p = 0; p < n_particles; ++p) owner[p] = static_cast<int>(part[p]);
  return owner;
}

ParticleShare DistributeParticles(MPI_Comm comm, std::int64_t n_particles,
                                  const std::vector<std::int64_t>& pairs, int* n_colors) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const size_t n_constraints = pairs.size() / 2;
  std::vector<int> owner(static_cast<size_t>(n_particles), 0), color(n_constraints, 0);
  int colors = 0;
  if (rank == 0) {
    owner = PlanParticlePartition(n_particles, pairs, size);
    color = GreedyColors(pairs, 2, n_particles, &colors);
  }
  MPI_Bcast(owner.data(), static_cast<int>(owner.size()), MPI_INT, 0, comm);
  MPI_Bcast(color.data(), static_cast<int>(color.size()), MPI_INT, 0, comm);
  MPI_Bcast(&colors, 1, MPI_INT, 0, comm);
  *n_colors = colors;

  ParticleShare share;
  for (std::int64_t p = 0; p < n_particles; ++p)
    if (owner[p] == rank) share.owned.push_back(p);
  std::vector<std::pair<int, std::int64_t>> kept;  // (color, constraint id)
  for (size_t k = 0; k < n_constraints; ++k) {
    const std::int64_t i = pairs[2 * k], j = pairs[2 * k + 1];
    if (owner[i] != rank && owner[j] != rank) continue;
    kept.emplace_back(color[k], static_cast<std::int64_t>(k));
    for (std::int64_t end : {i, j})
      if (owner[end] != rank) share.ghosts.push_back(end);
  }
  std::sort(kept.begin(), kept.end());
  std::sort(share.ghosts.begin(), share.ghosts.end());
  share.ghosts.erase(std::unique(share.ghosts.begin(), share.ghosts.end()), share.ghosts.end());
  share.color_begin.assign(colors + 1, 0);
  for (const auto& [c, k] : kept) {
    share.constraints.push_back(k);
    share.counted.push_back(owner[pairs[2 * k]] == rank ? 1 : 0);
    ++share.color_begin[c + 1];
  }
  for (int c = 0; c < colors; ++c) share.color_begin[c + 1] += share.color_begin[c];

  // Halo lists: particle p is a ghost on rank r when a constraint joins it to a particle r
  // owns; its position changes in color c when a constraint of color c ends at it.
  std::vector<std::pair<std::int64_t, int>> ghost_on;  // (particle, rank holding it as a ghost)
  for (size_t k = 0; k < n_constraints; ++k) {
    const std::int64_t i = pairs[2 * k], j = pairs[2 * k + 1];
    if (owner[i] == owner[j]) continue;
    ghost_on.emplace_back(i, owner[j]);
    ghost_on.emplace_back(j, owner[i]);
  }
  std::sort(ghost_on.begin(), ghost_on.end());
  ghost_on.erase(std::unique(ghost_on.begin(), ghost_on.end()), ghost_on.end());
  std::vector<std::vector<int>> particle_colors(static_cast<size_t>(n_particles));
  for (size_t k = 0; k < n_constraints; ++k)
    for (int a = 0; a < 2; ++a) particle_colors[pairs[2 * k + a]].push_back(color[k]);
  share.send.assign(colors, std::vector<std::vector<std::int64_t>>(size));
  share.recv.assign(colors, std::vector<std::vector<std::int64_t>>(size));
  for (const auto& [p, r] : ghost_on) {
    if (owner[p] != rank && r != rank) continue;
    auto& at = particle_colors[p];
    std::sort(at.begin(), at.end());
    at.erase(std::unique(at.begin(), at.end()), at.end());
    for (int c : at) {
      if (owner[p] == rank) share.send[c][r].push_back(p);
      if (r == rank) share.recv[c][owner[p]].push_back(p);
    }
  }
  return share;
}

}  // namespace optistep
