#include "solvers/NodeEmbedding.hpp"

#include <algorithm>
#include <map>

#include "core/Error.hpp"
#include "core/Exchange.hpp"

namespace optistep {
namespace {

int FloorDiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// The rank that keeps the directory entry of a block (splitmix64 of its coordinates):
/// spreads the rendezvous over the ranks whatever the grid's shape.
int HomeRank(const GridCoord& block, int size) {
  std::uint64_t h = 0;
  for (int d = 0; d < 3; ++d) {
    h += static_cast<std::uint64_t>(static_cast<std::uint32_t>(block[d])) + 0x9e3779b97f4a7c15ULL;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
    h ^= h >> 31;
  }
  return static_cast<int>(h % static_cast<std::uint64_t>(size));
}

void Append(std::vector<std::int64_t>* to, const GridCoord& c) { to->insert(to->end(), {c[0], c[1], c[2]}); }
GridCoord At(const std::vector<std::int64_t>& from, std::size_t k) {
  return {static_cast<int>(from[k]), static_cast<int>(from[k + 1]), static_cast<int>(from[k + 2])};
}

/// The coarse indices along one axis that fine index i takes weight from, with the weights.
struct AxisParents {
  int n = 0;
  int index[3];
  double weight[3];
};

AxisParents Parents(int i, Embedding embedding) {
  AxisParents a;
  const int h = EmbeddingHalfWidth(embedding);
  for (int c = FloorDiv(i - h, 2) ; 2 * c <= i + h; ++c) {
    const double w = AxisWeight(embedding, i - 2 * c);
    if (w == 0.0) continue;
    a.index[a.n] = c;
    a.weight[a.n++] = w;
  }
  return a;
}

}  // namespace

const char* EmbeddingName(Embedding embedding) {
  return embedding == Embedding::kLinear ? "linear" : "quadratic";
}

bool ParseEmbedding(const std::string& name, Embedding* embedding) {
  if (name == "linear") *embedding = Embedding::kLinear;
  else if (name == "quadratic") *embedding = Embedding::kQuadratic;
  else return false;
  return true;
}

double AxisWeight(Embedding embedding, int d) {
  if (d == 1 || d == -1) return 0.5;
  if (embedding == Embedding::kLinear) return d == 0 ? 1.0 : 0.0;
  return d == 0 ? 0.75 : (d == 2 || d == -2) ? 0.125 : 0.0;
}

int EmbeddingHalfWidth(Embedding embedding) { return embedding == Embedding::kLinear ? 1 : 2; }

GridCoord BlockOf(const GridCoord& node) {
  return {FloorDiv(node[0], kGridBlockWidth), FloorDiv(node[1], kGridBlockWidth), FloorDiv(node[2], kGridBlockWidth)};
}

int ColorOf(const GridCoord& node) {
  const GridCoord b = BlockOf(node);
  return (b[0] & 1) | ((b[1] & 1) << 1) | ((b[2] & 1) << 2);
}

std::uint64_t BlockMajorKey(const GridCoord& node) {
  // Blocks packed in 19 bits per axis (biased), then the 6 bits of the node in its block.
  constexpr int kBias = 1 << 18;
  const GridCoord b = BlockOf(node);
  std::uint64_t key = 0;
  for (int d = 2; d >= 0; --d) key = (key << 19) | static_cast<std::uint64_t>(b[d] + kBias);
  const int within = (node[0] - kGridBlockWidth * b[0]) + kGridBlockWidth * (node[1] - kGridBlockWidth * b[1]) +
                     kGridBlockWidth * kGridBlockWidth * (node[2] - kGridBlockWidth * b[2]);
  return (key << 6) | static_cast<std::uint64_t>(within);
}

std::uint64_t NodeIndex::Key(const GridCoord& node) {
  constexpr std::int64_t kBias = 1 << 20;
  std::uint64_t key = 0;
  for (int d = 2; d >= 0; --d) key = (key << 21) | static_cast<std::uint64_t>(node[d] + kBias);
  return key;
}

NodeIndex::NodeIndex(const std::vector<GridCoord>& nodes) {
  index_.reserve(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) index_.emplace(Key(nodes[n]), static_cast<PetscInt>(n));
}

GridDirectory::GridDirectory(MPI_Comm comm, const GridInfo& level)
    : comm_(comm), first_global_(level.first_global), local_(level.owned_nodes) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  std::vector<GridCoord> blocks;
  blocks.reserve(level.owned_nodes.size() / 16 + 1);
  for (const GridCoord& x : level.owned_nodes) blocks.push_back(BlockOf(x));
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  std::vector<std::vector<std::int64_t>> publish(size_);
  for (const GridCoord& b : blocks) Append(&publish[HomeRank(b, size_)], b);
  const auto received = AllToAll(comm_, publish);
  int one_rank = 1;
  for (int r = 0; r < size_; ++r)  // ascending r: each block's owners in rank order
    for (std::size_t k = 0; k < received[r].size(); k += 3) {
      std::vector<int>& owners = owners_at_home_[NodeIndex::Key(At(received[r], k))];
      owners.push_back(r);
      if (owners.size() > 1) one_rank = 0;
    }
  MPI_Allreduce(MPI_IN_PLACE, &one_rank, 1, MPI_INT, MPI_MIN, comm_);
  blocks_on_one_rank_ = one_rank != 0;
}

void GridDirectory::LookUp(const std::vector<GridCoord>& nodes, std::vector<PetscInt>* ids,
                           std::vector<int>* owners) const {
  ids->assign(nodes.size(), -1);
  owners->assign(nodes.size(), -1);
  // Nodes of this rank are answered here; the others' blocks are asked of their homes.
  std::vector<std::size_t> remote;
  std::vector<GridCoord> blocks;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    const PetscInt k = local_.Find(nodes[n]);
    if (k >= 0) {
      (*ids)[n] = first_global_ + k;
      (*owners)[n] = rank_;
    } else {
      remote.push_back(n);
      blocks.push_back(BlockOf(nodes[n]));
    }
  }
  std::vector<GridCoord> unique_blocks = blocks;
  std::sort(unique_blocks.begin(), unique_blocks.end());
  unique_blocks.erase(std::unique(unique_blocks.begin(), unique_blocks.end()), unique_blocks.end());
  std::vector<std::vector<std::int64_t>> questions(size_);
  for (const GridCoord& b : unique_blocks) Append(&questions[HomeRank(b, size_)], b);
  const auto asked = AllToAll(comm_, questions);
  std::vector<std::vector<std::int64_t>> answers(size_);
  for (int r = 0; r < size_; ++r)
    for (std::size_t k = 0; k < asked[r].size(); k += 3) {
      const auto it = owners_at_home_.find(NodeIndex::Key(At(asked[r], k)));
      if (it == owners_at_home_.end()) {
        answers[r].push_back(0);
        continue;
      }
      answers[r].push_back(static_cast<std::int64_t>(it->second.size()));
      answers[r].insert(answers[r].end(), it->second.begin(), it->second.end());
    }
  const auto answered = AllToAll(comm_, answers);
  std::map<GridCoord, std::vector<int>> block_owners;
  {
    std::vector<std::size_t> next(size_, 0);
    for (const GridCoord& b : unique_blocks) {
      const int home = HomeRank(b, size_);
      std::size_t& k = next[home];
      const int count = static_cast<int>(answered[home][k++]);
      std::vector<int>& list = block_owners[b];
      for (int j = 0; j < count; ++j) list.push_back(static_cast<int>(answered[home][k++]));
    }
  }
  // Each remote node is asked of every other rank owning nodes of its block.
  std::vector<std::vector<std::int64_t>> node_questions(size_);
  std::vector<std::vector<std::size_t>> asked_nodes(size_);
  for (std::size_t q = 0; q < remote.size(); ++q)
    for (const int r : block_owners[blocks[q]]) {
      if (r == rank_) continue;
      Append(&node_questions[r], nodes[remote[q]]);
      asked_nodes[r].push_back(remote[q]);
    }
  const auto node_asked = AllToAll(comm_, node_questions);
  std::vector<std::vector<std::int64_t>> node_answers(size_);
  for (int r = 0; r < size_; ++r)
    for (std::size_t k = 0; k < node_asked[r].size(); k += 3) {
      const PetscInt local = local_.Find(At(node_asked[r], k));
      node_answers[r].push_back(local >= 0 ? first_global_ + local : -1);
    }
  const auto node_answered = AllToAll(comm_, node_answers);
  for (int r = 0; r < size_; ++r)
    for (std::size_t k = 0; k < asked_nodes[r].size(); ++k)
      if (node_answered[r][k] >= 0) {
        (*ids)[asked_nodes[r][k]] = static_cast<PetscInt>(node_answered[r][k]);
        (*owners)[asked_nodes[r][k]] = r;
      }
}

GridInfo DistributeGridNodes(MPI_Comm comm, const std::vector<GridCoord>& nodes, double dx) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  GridInfo level;
  level.dx = dx;
  std::map<GridCoord, std::int64_t> claims;  // block -> this rank's nodes in it
  for (const GridCoord& c : nodes) ++claims[BlockOf(c)];

  // Rendezvous at each block's home: (block, nodes) in, the owner out: the rank with the
  // most nodes there, the lowest among equals.
  std::vector<std::vector<std::int64_t>> to_home(size);
  for (const auto& [b, count] : claims) {
    auto& to = to_home[HomeRank(b, size)];
    Append(&to, b);
    to.push_back(count);
  }
  const auto at_home = AllToAll(comm, to_home);
  std::map<GridCoord, std::pair<std::int64_t, int>> best;  // block -> (nodes, rank)
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < at_home[r].size(); k += 4) {
      const auto [it, fresh] = best.emplace(At(at_home[r], k), std::make_pair(at_home[r][k + 3], r));
      if (!fresh && at_home[r][k + 3] > it->second.first) it->second = {at_home[r][k + 3], r};
    }
  std::vector<std::vector<std::int64_t>> owners_out(size);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < at_home[r].size(); k += 4) owners_out[r].push_back(best.at(At(at_home[r], k)).second);
  best.clear();
  const auto owners_in = AllToAll(comm, owners_out);
  std::map<GridCoord, int> block_owner;
  {
    std::vector<std::size_t> next(size, 0);
    for (const auto& [b, count] : claims) {
      const int home = HomeRank(b, size);
      block_owner[b] = static_cast<int>(owners_in[home][next[home]++]);
    }
  }

  // The nodes go to their blocks' owners, which number them by block.
  std::vector<std::vector<std::int64_t>> sent(size);
  for (const GridCoord& c : nodes) {
    const int owner = block_owner.at(BlockOf(c));
    if (owner == rank) level.owned_nodes.push_back(c);
    else Append(&sent[owner], c);
  }
  const auto received = AllToAll(comm, sent);
  for (int r = 0; r < size; ++r)
    for (std::size_t k = 0; k < received[r].size(); k += 3) level.owned_nodes.push_back(At(received[r], k));
  const auto block_major = [](const GridCoord& a, const GridCoord& b) { return BlockMajorKey(a) < BlockMajorKey(b); };
  std::sort(level.owned_nodes.begin(), level.owned_nodes.end(), block_major);
  level.owned_nodes.erase(std::unique(level.owned_nodes.begin(), level.owned_nodes.end()), level.owned_nodes.end());
  const PetscInt n_owned = static_cast<PetscInt>(level.owned_nodes.size());
  PetscInt first = 0;
  MPI_Exscan(&n_owned, &first, 1, MPIU_INT, MPI_SUM, comm);
  if (rank == 0) first = 0;
  MPI_Allreduce(&n_owned, &level.n_global, 1, MPIU_INT, MPI_SUM, comm);
  level.first_global = first;
  return level;
}

Coarsening Coarsen(MPI_Comm comm, const GridInfo& fine, Embedding embedding,
                   std::unique_ptr<GridDirectory>* coarse_directory) {
  Coarsening result;
  // The coarse nodes are those some fine node takes weight from.
  std::vector<GridCoord> referenced;
  for (const GridCoord& x : fine.owned_nodes) {
    const AxisParents ax = Parents(x[0], embedding), ay = Parents(x[1], embedding), az = Parents(x[2], embedding);
    for (int c = 0; c < az.n; ++c)
      for (int b = 0; b < ay.n; ++b)
        for (int a = 0; a < ax.n; ++a) referenced.push_back({ax.index[a], ay.index[b], az.index[c]});
  }
  std::sort(referenced.begin(), referenced.end());
  referenced.erase(std::unique(referenced.begin(), referenced.end()), referenced.end());
  result.coarse = DistributeGridNodes(comm, referenced, 2.0 * fine.dx);
  const GridInfo& coarse = result.coarse;
  const PetscInt n_owned = static_cast<PetscInt>(coarse.owned_nodes.size());
  const PetscInt first = coarse.first_global;
  auto directory = std::make_unique<GridDirectory>(comm, coarse);

  // Their global indices.
  std::vector<PetscInt> ids;
  std::vector<int> owners;
  directory->LookUp(referenced, &ids, &owners);
  const auto id_of = [&](const GridCoord& c) {
    return ids[std::lower_bound(referenced.begin(), referenced.end(), c) - referenced.begin()];
  };

  // P: per fine node the coarse nodes around it, with their weights.
  const PetscInt n_fine = static_cast<PetscInt>(fine.owned_nodes.size());
  std::vector<std::vector<std::pair<PetscInt, double>>> rows(n_fine);
  std::vector<PetscInt> d_nnz(n_fine, 0), o_nnz(n_fine, 0);
  for (PetscInt k = 0; k < n_fine; ++k) {
    const GridCoord& x = fine.owned_nodes[k];
    const AxisParents ax = Parents(x[0], embedding), ay = Parents(x[1], embedding), az = Parents(x[2], embedding);
    for (int c = 0; c < az.n; ++c)
      for (int b = 0; b < ay.n; ++b)
        for (int a = 0; a < ax.n; ++a) {
          const PetscInt id = id_of({ax.index[a], ay.index[b], az.index[c]});
          rows[k].emplace_back(id, ax.weight[a] * ay.weight[b] * az.weight[c]);
          (id >= first && id < first + n_owned ? d_nnz[k] : o_nnz[k])++;
        }
  }
  OwnedMat P1;
  OPTISTEP_PETSC(MatCreate(comm, P1.out()));
  OPTISTEP_PETSC(MatSetSizes(P1, n_fine, n_owned, fine.n_global, coarse.n_global));
  OPTISTEP_PETSC(MatSetType(P1, MATAIJ));
  OPTISTEP_PETSC(MatXAIJSetPreallocation(P1, 1, d_nnz.data(), o_nnz.data(), nullptr, nullptr));
  OPTISTEP_PETSC(MatSetOption(P1, MAT_NO_OFF_PROC_ENTRIES, PETSC_TRUE));
  std::vector<PetscInt> cols;
  std::vector<double> values;
  for (PetscInt k = 0; k < n_fine; ++k) {
    cols.clear();
    values.clear();
    for (const auto& [id, w] : rows[k]) {
      cols.push_back(id);
      values.push_back(w);
    }
    const PetscInt row = fine.first_global + k;
    OPTISTEP_PETSC(MatSetValues(P1, 1, &row, static_cast<PetscInt>(cols.size()), cols.data(), values.data(),
                                INSERT_VALUES));
  }
  OPTISTEP_PETSC(MatAssemblyBegin(P1, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatAssemblyEnd(P1, MAT_FINAL_ASSEMBLY));
  OPTISTEP_PETSC(MatCreateMAIJ(P1, 3, result.P.out()));
  if (coarse_directory) *coarse_directory = std::move(directory);
  return result;
}

Mat BuildProlongation(MPI_Comm comm, const GridInfo& fine, Embedding embedding, GridInfo* coarse) {
  Coarsening c = Coarsen(comm, fine, embedding);
  *coarse = std::move(c.coarse);
  return c.P.release();
}

}  // namespace optistep
