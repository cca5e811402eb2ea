#include "app/MpmSimulation.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/Error.hpp"
#include "core/Exchange.hpp"
#include "core/Phases.hpp"
#include "integrators/IntegratorFactory.hpp"
#include "io/SurfaceMesh.hpp"
#include "io/TetMesh.hpp"
#include "model/InitialConditions.hpp"
#include "mpm/MpmLoads.hpp"
#include "mpm/Sampling.hpp"
#include "mpm/Shapes.hpp"
#include "mpm/SurfaceMesh.hpp"
#include "partition/NaturalOrdering.hpp"

namespace optistep {
namespace {

using mpm::Particles;

/// The body's source solid in its own frame (m).
std::unique_ptr<mpm::Shape> BodyShape(const BodyConfig& body) {
  const std::string where = "bodies '" + body.name + "'";
  switch (body.source) {
    case BodyConfig::Source::kMesh:
      return std::make_unique<mpm::TetMeshShape>(ReadTetMesh(body.mesh), body.mesh);
    case BodyConfig::Source::kSurface:
      return std::make_unique<mpm::ClosedSurface>(ReadSurfaceMesh(body.surface), body.surface);
    case BodyConfig::Source::kShape: {
      const ShapeConfig& s = body.shape;
      switch (s.kind) {
        case ShapeConfig::Kind::kBox: return std::make_unique<mpm::Box>(s.box_min, s.box_max, where);
        case ShapeConfig::Kind::kSphere: return std::make_unique<mpm::Sphere>(s.center, s.radius, where);
        case ShapeConfig::Kind::kCylinder:
          return std::make_unique<mpm::Cylinder>(s.center, s.axis, s.radius, s.half_length, where);
        case ShapeConfig::Kind::kTorus:
          return std::make_unique<mpm::Torus>(s.center, s.axis, s.major_radius, s.minor_radius, where);
      }
    }
  }
  throw InputError(where + ": no particle source");
}

/// The world box of a shape (its own frame) under a transform: the box of its box's
/// transformed corners.
mpm::Aabb WorldBounds(const mpm::Shape& shape, const TransformConfig& T) {
  const mpm::Aabb local = shape.Bounds();
  mpm::Aabb world{Vec3::Constant(INFINITY), Vec3::Constant(-INFINITY)};
  for (int corner = 0; corner < 8; ++corner) {
    Vec3 c;
    for (int d = 0; d < 3; ++d) c[d] = (corner >> d) & 1 ? local.hi[d] : local.lo[d];
    const Vec3 y = T.Apply(c);
    world.lo = world.lo.cwiseMin(y);
    world.hi = world.hi.cwiseMax(y);
  }
  return world;
}

/// The rest boundary of a body (m, world frame, outward corner order; mpm::BoundaryTriangles):
/// a box's 12 triangles, a surface's triangles (turned outward when they enclose a negative
/// volume), a tet mesh's faces held by one tet; empty for the other shapes.
mpm::BoundaryTriangles BodyBoundary(const BodyConfig& body, const mpm::Shape& shape) {
  mpm::BoundaryTriangles T;
  std::vector<Vec3> nodes;
  std::vector<std::array<int, 3>> triangles;
  if (body.source == BodyConfig::Source::kShape && body.shape.kind == ShapeConfig::Kind::kBox) {
    const Vec3& lo = body.shape.box_min;
    const Vec3& hi = body.shape.box_max;
    for (int c = 0; c < 8; ++c) nodes.push_back(Vec3(c & 1 ? hi.x() : lo.x(), c & 2 ? hi.y() : lo.y(), c & 4 ? hi.z() : lo.z()));
    // Two triangles per face, counter-clockwise seen from outside (corner bits x, y, z).
    for (const std::array<int, 4>& q : {std::array<int, 4>{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                        {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}}) {
      triangles.push_back({q[0], q[1], q[2]});
      triangles.push_back({q[0], q[2], q[3]});
    }
  } else if (body.source == BodyConfig::Source::kSurface) {
    const TriangleSurface& surface = dynamic_cast<const mpm::ClosedSurface&>(shape).Surface();
    nodes = surface.vertices;
    triangles = surface.triangles;
    double signed_volume = 0.0;
    for (const auto& t : triangles) signed_volume += nodes[t[0]].dot(nodes[t[1]].cross(nodes[t[2]]));
    if (signed_volume < 0.0)
      for (auto& t : triangles) std::swap(t[1], t[2]);
  } else if (body.source == BodyConfig::Source::kMesh) {
    const TetMeshData mesh = ReadTetMesh(body.mesh);
    nodes = mesh.nodes;
    std::map<std::array<int, 3>, int> holders;
    auto key = [](std::array<int, 3> f) {
      std::sort(f.begin(), f.end());
      return f;
    };
    for (const auto& t : mesh.tets)
      for (int o = 0; o < 4; ++o) ++holders[key({t[(o + 1) % 4], t[(o + 2) % 4], t[(o + 3) % 4]})];
    for (const auto& t : mesh.tets)
      for (int o = 0; o < 4; ++o) {
        std::array<int, 3> f{t[(o + 1) % 4], t[(o + 2) % 4], t[(o + 3) % 4]};
        if (holders[key(f)] != 1) continue;
        if ((nodes[f[1]] - nodes[f[0]]).cross(nodes[f[2]] - nodes[f[0]]).dot(nodes[t[o]] - nodes[f[0]]) > 0.0)
          std::swap(f[1], f[2]);
        triangles.push_back(f);
      }
  }
  for (Vec3& x : nodes) x = body.transform.Apply(x);
  const bool mirrored = body.transform.scale.prod() < 0.0;
  for (const auto& t : triangles)
    T.push_back(mirrored ? std::array<Vec3, 3>{nodes[t[0]], nodes[t[2]], nodes[t[1]]}
                         : std::array<Vec3, 3>{nodes[t[0]], nodes[t[1]], nodes[t[2]]});
  return T;
}

/// Rank 0: samples every body in world space (the inverse transform maps a candidate to
/// the body frame). Particle ids are 0..N-1 in body order, then sampling order. First,
/// before any particle is allocated, refuses (InputError) a scene whose estimated memory
/// (mpm/MemoryEstimate.hpp, on `ranks` ranks, into *estimate) exceeds what is available.
/// With tractions or pressures, also their particle forces (mpm::TractionParticleForces,
/// from the sampled rest positions) into *forces.
Particles SampleScene(const SceneConfig& scene, const AvailableMemory& available, int ranks,
                      mpm::MemoryEstimate* estimate, std::vector<mpm::ParticleForce>* forces) {
  std::vector<std::unique_ptr<mpm::Shape>> shapes;
  std::vector<mpm::BodyExtent> extents;
  for (const BodyConfig& body : scene.bodies) {
    shapes.push_back(BodyShape(body));
    extents.push_back({shapes.back()->Volume() * body.transform.scale.prod(),
                       WorldBounds(*shapes.back(), body.transform)});
  }
  const double dx = scene.mpm.dx;
  *estimate = mpm::EstimateMemory(extents, dx, scene.mpm.ppc, scene.mpm.matrix_free, ranks);
  mpm::CheckMemory(*estimate, available, scene.path, dx, scene.mpm.ppc);

  Particles all;
  const double V0 = mpm::ParticleVolume(dx, scene.mpm.ppc);
  const bool tractions = mpm::HasTractionLoads(scene);
  std::vector<mpm::BoundaryTriangles> boundary;
  std::vector<std::vector<Vec3>> rest;
  std::vector<std::vector<std::int64_t>> rest_id;
  for (std::size_t b = 0; b < scene.bodies.size(); ++b) {
    const BodyConfig& body = scene.bodies[b];
    const mpm::Shape& shape = *shapes[b];
    const TransformConfig& T = body.transform;
    const Eigen::AngleAxisd rotation(T.rotate_angle_deg * M_PI / 180.0, T.rotate_axis);
    const Mat3 R_inv = rotation.toRotationMatrix().transpose();
    auto inside = [&](const Vec3& y) {
      const Vec3 x = (R_inv * (y - T.translate)).cwiseQuotient(T.scale);
      return shape.Inside(x);
    };
    const std::uint64_t seed = static_cast<std::uint64_t>(scene.mpm.seed) * 1000003u + b;
    const mpm::SampledParticles sampled = mpm::SampleInside(
        inside, extents[b].bounds, dx, scene.mpm.ppc, seed, "bodies[" + std::to_string(b) + "]");
    if (sampled.x.empty())
      throw InputError(scene.path + ": bodies[" + std::to_string(b) + "] ('" + body.name +
                       "'): holds no particle (smaller than a cell of dx = " + std::to_string(dx) +
                       " m?)");
    // Initial conditions (model/InitialConditions.hpp): the prestrain maps the sampled
    // (rest) positions and sets F_p = A; velocities and APIC's C_p = dv/dx at the
    // prestrained positions. The rest center of mass is the mean sampled position.
    if (tractions) {
      boundary.push_back(BodyBoundary(body, shape));
      rest.push_back(sampled.x);
      rest_id.emplace_back(sampled.x.size());
      for (std::size_t k = 0; k < sampled.x.size(); ++k) rest_id.back()[k] = static_cast<std::int64_t>(all.size() + k);
    }
    const InitialConditionsConfig& ic = body.initial_conditions;
    Vec3 center = Vec3::Zero();
    for (const Vec3& x : sampled.x) center += x;
    center /= static_cast<double>(sampled.x.size());
    const InitialVelocity velocity(body, center);
    const bool field = ic.has_angular_velocity || !ic.velocity_expression.empty();
    for (const Vec3& X : sampled.x) {
      mpm::Particle q;
      q.x = PrestrainedPosition(ic, center, X);
      q.v = velocity(q.x);
      if (field) q.C = velocity.Gradient(q.x, 1e-3 * dx);
      if (ic.has_prestrain) q.F = ic.prestrain;
      q.mass = body.material.density * V0;
      q.V0 = V0;
      q.id = static_cast<std::int64_t>(all.size());
      q.material = static_cast<int>(b);
      all.Append(q);
    }
  }
  if (tractions)
    *forces = mpm::TractionParticleForces(scene, boundary, rest, rest_id, dx / std::cbrt(scene.mpm.ppc));
  return all;
}

}  // namespace

MpmSimulation::MpmSimulation(MPI_Comm comm, const SceneConfig& scene)
    : Simulation(comm, scene), model_(scene_) {
  ScopedPhase phase(kSetupPhase);
  available_memory_ = QueryAvailableMemory(comm_);
  int size = 1;
  MPI_Comm_size(comm_, &size);
  Particles all;
  std::vector<mpm::ParticleForce>& forces = model_.particle_forces;
  ReadOnRankZero(comm_, [&] { all = SampleScene(scene_, available_memory_, size, &memory_estimate_, &forces); });
  MPI_Bcast(&memory_estimate_, sizeof memory_estimate_, MPI_BYTE, 0, comm_);
  unsigned long long n_forces = forces.size();
  MPI_Bcast(&n_forces, 1, MPI_UNSIGNED_LONG_LONG, 0, comm_);
  forces.resize(n_forces);
  MPI_Bcast(forces.data(), static_cast<int>(n_forces * sizeof(mpm::ParticleForce)), MPI_BYTE, 0, comm_);
  domain_ = std::make_unique<mpm::MpmDomain>(comm_, scene_.mpm.dx, scene_.mpm.repartition_threshold);
  domain_->Distribute(std::move(all));
  n_particles_ = domain_->GlobalParticleCount();
  mpm::CheckPointLoads(scene_, *domain_);
  SetIntegrator(CreateMpmIntegrator(scene_, *domain_, model_));
}

MpmSimulation::~MpmSimulation() {
  // The integrator refers to domain_ and model_: it goes first.
  integrator_.reset();
}

void MpmSimulation::WriteFrame() {
  ScopedPhase phase(kOutputPhase);
  const Particles& p = domain_->particles();
  const std::size_t n = domain_->n_owned();
  std::vector<PetscInt> ids(n);
  for (std::size_t k = 0; k < n; ++k) ids[k] = static_cast<PetscInt>(p.id[k]);
  NaturalOrdering vectors(comm_, ids, n_particles_, 3), scalars(comm_, ids, n_particles_, 1);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::vector<double> x(3 * n), v(3 * n), J(n), strain(n), material(n), owner(n, rank);
  for (std::size_t k = 0; k < n; ++k) {
    for (int d = 0; d < 3; ++d) {
      x[3 * k + d] = p.x[k][d];
      v[3 * k + d] = p.v[k][d];
    }
    J[k] = p.F[k].determinant() * p.plastic[k].Jp;
    strain[k] = p.plastic[k].plastic_strain;
    material[k] = p.material[k];
  }
  // Each ToNatural result lives until that ordering's next call: copy before reusing it.
  auto copy = [](const DistributedArray<double>& a, std::vector<double>* keep) {
    keep->assign(a.data, a.data + a.local_rows * a.columns);
    DistributedArray<double> view = a;
    view.data = keep->data();
    return view;
  };
  std::vector<std::vector<double>> keep(6);
  const auto positions = copy(vectors.ToNatural(x.data()), &keep[0]);
  std::vector<XdmfTimeSeries::Field> fields;
  fields.push_back({"velocity", false, copy(vectors.ToNatural(v.data()), &keep[1])});
  fields.push_back({"J", false, copy(scalars.ToNatural(J.data()), &keep[2])});
  fields.push_back({"plastic_strain", false, copy(scalars.ToNatural(strain.data()), &keep[3])});
  fields.push_back({"material", false, copy(scalars.ToNatural(material.data()), &keep[4])});
  fields.push_back({"rank", false, copy(scalars.ToNatural(owner.data()), &keep[5])});
  frames_->WriteFrame(frame_, time(), positions, fields);
}

void MpmSimulation::GatherParticles(std::vector<double>* x, std::vector<double>* v,
                                    std::vector<double>* mass) const {
  const Particles& p = domain_->particles();
  std::vector<double> mine;
  for (std::size_t k = 0; k < domain_->n_owned(); ++k) {
    mine.push_back(static_cast<double>(p.id[k]));
    for (int d = 0; d < 3; ++d) mine.push_back(p.x[k][d]);
    for (int d = 0; d < 3; ++d) mine.push_back(p.v[k][d]);
    mine.push_back(p.mass[k]);
  }
  const std::vector<double> all = AllGatherLists(comm_, mine);
  const std::size_t n = all.size() / 8;
  x->assign(3 * n, 0.0);
  v->assign(3 * n, 0.0);
  if (mass) mass->assign(n, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t id = static_cast<std::size_t>(all[8 * k]);
    for (int d = 0; d < 3; ++d) {
      (*x)[3 * id + d] = all[8 * k + 1 + d];
      (*v)[3 * id + d] = all[8 * k + 4 + d];
    }
    if (mass) (*mass)[id] = all[8 * k + 7];
  }
}

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

void MpmSimulation::SaveState(CheckpointWriter& out) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  // Every particle goes to the rank that writes its id's row, with where it lives.
  const Particles& p = domain_->particles();
  const std::size_t n = domain_->n_owned();
  std::vector<double> records(kRecord * n);
  std::vector<int> dest(n);
  for (std::size_t k = 0; k < n; ++k) {
    double* r = records.data() + kRecord * k;
    p.Pack(k, r);
    r[kRecord - 2] = rank;
    r[kRecord - 1] = static_cast<double>(k);
    dest[k] = EvenRowsRank(n_particles_, size, p.id[k]);
  }
  const std::vector<double> received = SendRecords(comm_, records, dest);
  const RowRange rows = EvenRows(comm_, n_particles_);
  const std::size_t m = static_cast<std::size_t>(rows.count);
  std::vector<double> x(3 * m), v(3 * m), C(9 * m), F(9 * m), Jp(m), strain(m), mass(m), V0(m);
  std::vector<int32_t> material(m), owner(m, -1);
  std::vector<int64_t> local_index(m);
  Particles one;
  for (std::size_t k = 0; k < received.size() / kRecord; ++k) {
    const double* r = received.data() + kRecord * k;
    one.Resize(0);
    one.AppendPacked(r);
    const mpm::Particle q = one.Get(0);
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
    return DistributedArray<T>{n_particles_, rows.offset, rows.count, columns, values.data()};
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
  domain_->ExportBlockOwners(&blocks, &owners);
  const int64_t n_blocks = static_cast<int64_t>(blocks.size());
  const RowRange block_rows = EvenRows(comm_, n_blocks);
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

bool MpmSimulation::LoadState(const CheckpointReader& in) {
  const int64_t n = n_particles_;
  const std::pair<const char*, int> fields[] = {
      {"x", 3}, {"v", 3}, {"C", 9}, {"F", 9}, {"Jp", 1}, {"plastic_strain", 1}, {"mass", 1},
      {"V0", 1}, {"material", 1}, {"rank", 1}, {"local_index", 1}};
  for (const auto& [name, columns] : fields) {
    const std::vector<int64_t> expected =
        columns == 1 ? std::vector<int64_t>{n} : std::vector<int64_t>{n, columns};
    if (in.Shape(std::string("/mpm/particles/") + name) != expected)
      throw InputError(in.path() + ": /mpm/particles/" + name + " does not hold " +
                       std::to_string(columns) + " value(s) for each of the " + std::to_string(n) +
                       " particles that " + scene_.path + " samples");
  }
  // Read everything before anything changes.
  const RowRange rows = EvenRows(comm_, n);
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
    if (m < 0 || m >= static_cast<int32_t>(scene_.bodies.size()))
      problem = in.path() + ": particle material " + std::to_string(m) + " is not a body of " +
                scene_.path;
  ThrowIfAnyRank(comm_, problem);

  int size = 1;
  MPI_Comm_size(comm_, &size);
  Particles slice;
  for (int64_t k = 0; k < rows.count; ++k) {
    mpm::Particle q;
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
    domain_->Distribute(std::move(slice));  // METIS for this rank count
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
    const std::vector<double> received = SendRecords(comm_, records, dest);
    const std::size_t mine = received.size() / kRecord;
    std::vector<const double*> at(mine, nullptr);
    for (std::size_t k = 0; k < mine; ++k) {
      const double* r = received.data() + kRecord * k;
      const double index = r[kRecord - 1];
      if (index >= 0 && index < static_cast<double>(mine)) at[static_cast<std::size_t>(index)] = r;
    }
    const bool complete = std::count(at.begin(), at.end(), nullptr) == 0;
    const std::string damage = MessageOfAnyRank(
        comm_, complete ? "" : "the particles' rank and local_index are not a layout");
    if (!damage.empty()) throw CheckpointDamaged(in.path() + ": " + damage);
    Particles owned;
    for (const double* r : at) owned.AppendPacked(r);
    std::vector<Eigen::Vector3i> blocks(block_owner.size());
    for (std::size_t b = 0; b < blocks.size(); ++b)
      for (int d = 0; d < 3; ++d) blocks[b][d] = static_cast<int>(coordinates[3 * b + d]);
    partition_kept = domain_->Restore(std::move(owned), blocks,
                                      std::vector<int>(block_owner.begin(), block_owner.end()));
  }
  integrator_->SetClock(in.header().time, static_cast<long>(in.header().step));
  return partition_kept;
}

}  // namespace optistep
