#include "mpm/ParticleCheckpoint.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/DistributedArray.hpp"
#include "core/Error.hpp"
#include "core/Exchange.hpp"

namespace optistep::mpm {
namespace {

using RowMajor3 = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;
/// A particle record in flight: Particles::Pack's layout, then its rank and local index.
constexpr int kRecord = Particles::kPackedDoubles + 2;

/// Collective: sends each record (kRecord doubles) to dest[k]; returns what this rank
/// received, in sending-rank order.
std::vector<double> SendRecords(MPI_Comm comm, const std::vector<double>& records,
                                const std::vector<int>& dest) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  std::vector<std::vector<double>> send(size);
  for (std::size_t k = 0; k < dest.size(); ++k)
    send[dest[k]].insert(send[dest[k]].end(), records.begin() + kRecord * k,
                         records.begin() + kRecord * (k + 1));
  std::vector<double> received;
  for (const auto& from : AllToAll(comm, send)) received.insert(received.end(), from.begin(), from.end());
  return received;
}

}  // namespace

void SaveParticles(CheckpointWriter& out, const MpmDomain& domain, std::int64_t n_particles) {
  const MPI_Comm comm = domain.comm();
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // Every particle goes to the rank that writes its id's row, with where it lives.
  const Particles& p = domain.particles();
  const std::size_t n = domain.n_owned();
  std::vector<double> records(kRecord * n);
  std::vector<int> dest(n);
  for (std::size_t k = 0; k < n; ++k) {
    double* r = records.data() + kRecord * k;
    p.Pack(k, r);
    r[kRecord - 2] = rank;
    r[kRecord - 1] = static_cast<double>(k);
    dest[k] = EvenRowsRank(n_particles, size, p.id[k]);
  }
  const std::vector<double> received = SendRecords(comm, records, dest);
  const RowRange rows = EvenRows(comm, n_particles);
  const std::size_t m = static_cast<std::size_t>(rows.count);
  std::vector<double> x(3 * m), v(3 * m), C(9 * m), F(9 * m), Jp(m), strain(m), mass(m), V0(m);
  std::vector<int32_t> material(m), owner(m, -1);
  std::vector<int64_t> local_index(m);
  Particles one;
  for (std::size_t k = 0; k < received.size() / kRecord; ++k) {
    const double* r = received.data() + kRecord * k;
    one.Resize(0);
    one.AppendPacked(r);
    const Particle q = one.Get(0);
    const std::size_t row = static_cast<std::size_t>(q.id - rows.offset);
    if (q.id < rows.offset || row >= m || owner[row] != -1)
      throw std::logic_error("MpmSimulation::SaveState: particle ids are not 0..N-1, once each");
    Eigen::Map<Vec3>(x.data() + 3 * row) = q.x;
    Eigen::Map<Vec3>(v.data() + 3 * row) = q.v;
    Eigen::Map<RowMajor3>(C.data() + 9 * row) = q.C;
    Eigen::Map<RowMajor3>(F.data() + 9 * row) = q.F;
    Jp[row] = q.plastic.Jp;
    strain[row] = q.plastic.plastic_strain;
    mass[row] = q.mass;
    V0[row] = q.V0;
    material[row] = q.material;
    owner[row] = static_cast<int32_t>(r[kRecord - 2]);
    local_index[row] = static_cast<int64_t>(r[kRecord - 1]);
  }
  if (received.size() != kRecord * m)
    throw std::logic_error("MpmSimulation::SaveState: particle ids are not 0..N-1, once each");
  auto rows_of = [&](auto& values, int columns) {
    using T = typename std::decay_t<decltype(values)>::value_type;
    return DistributedArray<T>{n_particles, rows.offset, rows.count, columns, values.data()};
  };
  out.Write("/mpm/particles/x", rows_of(x, 3));
  out.Write("/mpm/particles/v", rows_of(v, 3));
  out.Write("/mpm/particles/C", rows_of(C, 9));
  out.Write("/mpm/particles/F", rows_of(F, 9));
  out.Write("/mpm/particles/Jp", rows_of(Jp, 1));
  out.Write("/mpm/particles/plastic_strain", rows_of(strain, 1));
  out.Write("/mpm/particles/mass", rows_of(mass, 1));
  out.Write("/mpm/particles/V0", rows_of(V0, 1));
  out.Write("/mpm/particles/material", rows_of(material, 1));
  out.Write("/mpm/particles/rank", rows_of(owner, 1));
  out.Write("/mpm/particles/local_index", rows_of(local_index, 1));

  // The block map is the same on every rank; each writes its even share of the rows.
  std::vector<Eigen::Vector3i> blocks;
  std::vector<int> owners;
  domain.ExportBlockOwners(&blocks, &owners);
  const int64_t n_blocks = static_cast<int64_t>(blocks.size());
  const RowRange block_rows = EvenRows(comm, n_blocks);
  std::vector<int64_t> coordinates;
  std::vector<int32_t> block_owner;
  for (int64_t b = block_rows.offset; b < block_rows.offset + block_rows.count; ++b) {
    for (int d = 0; d < 3; ++d) coordinates.push_back(blocks[b][d]);
    block_owner.push_back(owners[b]);
  }
  out.Write("/mpm/blocks", DistributedArray<int64_t>{n_blocks, block_rows.offset,
                                                     block_rows.count, 3, coordinates.data()});
  out.Write("/mpm/block_owner", DistributedArray<int32_t>{n_blocks, block_rows.offset,
                                                          block_rows.count, 1, block_owner.data()});
}

bool LoadParticles(const CheckpointReader& in, const ModelConfig& scene, MpmDomain& domain,
                   std::int64_t n_particles) {
  const MPI_Comm comm = domain.comm();
  const int64_t n = n_particles;
  const std::pair<const char*, int> fields[] = {
      {"x", 3}, {"v", 3}, {"C", 9}, {"F", 9}, {"Jp", 1}, {"plastic_strain", 1}, {"mass", 1},
      {"V0", 1}, {"material", 1}, {"rank", 1}, {"local_index", 1}};
  for (const auto& [name, columns] : fields) {
    const std::vector<int64_t> expected =
        columns == 1 ? std::vector<int64_t>{n} : std::vector<int64_t>{n, columns};
    if (in.Shape(std::string("/mpm/particles/") + name) != expected)
      throw InputError(in.path() + ": /mpm/particles/" + name + " does not hold " +
                       std::to_string(columns) + " value(s) for each of the " + std::to_string(n) +
                       " particles that " + scene.path + " samples");
  }
  // Read everything before anything changes.
  const RowRange rows = EvenRows(comm, n);
  auto read = [&](const char* name) { return in.Read<double>(std::string("/mpm/particles/") + name, rows); };
  const std::vector<double> x = read("x"), v = read("v"), C = read("C"), F = read("F"),
                            Jp = read("Jp"), strain = read("plastic_strain"), mass = read("mass"),
                            V0 = read("V0");
  const std::vector<int32_t> material = in.Read<int32_t>("/mpm/particles/material", rows);
  const std::vector<int32_t> owner = in.Read<int32_t>("/mpm/particles/rank", rows);
  const std::vector<int64_t> local_index = in.Read<int64_t>("/mpm/particles/local_index", rows);
  const std::vector<int64_t> block_shape = in.Shape("/mpm/blocks");
  const RowRange all_blocks{0, block_shape.empty() ? 0 : block_shape[0]};
  const std::vector<int64_t> coordinates = in.Read<int64_t>("/mpm/blocks", all_blocks);
  const std::vector<int32_t> block_owner = in.Read<int32_t>("/mpm/block_owner", all_blocks);

  std::string problem;
  for (const int32_t m : material)
    if (m < 0 || m >= static_cast<int32_t>(scene.bodies.size()))
      problem = in.path() + ": particle material " + std::to_string(m) + " is not a body of " +
                scene.path;
  ThrowIfAnyRank(comm, problem);

  int size = 1;
  MPI_Comm_size(comm, &size);
  Particles slice;
  for (int64_t k = 0; k < rows.count; ++k) {
    Particle q;
    q.id = rows.offset + k;
    q.x = Eigen::Map<const Vec3>(&x[3 * k]);
    q.v = Eigen::Map<const Vec3>(&v[3 * k]);
    q.C = Eigen::Map<const RowMajor3>(&C[9 * k]);
    q.F = Eigen::Map<const RowMajor3>(&F[9 * k]);
    q.plastic.Jp = Jp[k];
    q.plastic.plastic_strain = strain[k];
    q.mass = mass[k];
    q.V0 = V0[k];
    q.material = material[k];
    slice.Append(q);
  }
  bool partition_kept = false;
  if (in.header().ranks != size) {
    domain.Distribute(std::move(slice));  // METIS for this rank count
  } else {
    // The same rank count: every particle back to its rank, at its local index. The scene
    // text may have changed (--allow-scene-change, e.g. more frames): the layout is kept
    // whenever it fits the grid, so an extended run goes on bitwise.
    std::vector<double> records(kRecord * slice.size());
    std::vector<int> dest(slice.size());
    for (std::size_t k = 0; k < slice.size(); ++k) {
      double* r = records.data() + kRecord * k;
      slice.Pack(k, r);
      r[kRecord - 1] = static_cast<double>(local_index[k]);
      dest[k] = std::clamp(owner[k], 0, size - 1);
    }
    const std::vector<double> received = SendRecords(comm, records, dest);
    const std::size_t mine = received.size() / kRecord;
    std::vector<const double*> at(mine, nullptr);
    for (std::size_t k = 0; k < mine; ++k) {
      const double* r = received.data() + kRecord * k;
      const double index = r[kRecord - 1];
      if (index >= 0 && index < static_cast<double>(mine)) at[static_cast<std::size_t>(index)] = r;
    }
    const bool complete = std::count(at.begin(), at.end(), nullptr) == 0;
    const std::string damage = MessageOfAnyRank(
        comm, complete ? "" : "the particles' rank and local_index are not a layout");
    if (!damage.empty()) throw CheckpointDamaged(in.path() + ": " + damage);
    Particles owned;
    for (const double* r : at) owned.AppendPacked(r);
    std::vector<Eigen::Vector3i> blocks(block_owner.size());
    for (std::size_t b = 0; b < blocks.size(); ++b)
      for (int d = 0; d < 3; ++d) blocks[b][d] = static_cast<int>(coordinates[3 * b + d]);
    partition_kept = domain.Restore(std::move(owned), blocks,
                                      std::vector<int>(block_owner.begin(), block_owner.end()));
  }
  return partition_kept;
}

}  // namespace optistep::mpm
