#include "integrators/ChainXpbd.hpp"

#include <string>
#include <utility>

#include "core/Exchange.hpp"
#include "particles/ParticleModel.hpp"
#include "particles/ParticlePartition.hpp"

namespace optistep {

ChainXpbd::ChainXpbd(MPI_Comm comm, const IntegratorConfig& scene)
    : Xpbd(scene.xpbd), comm_(comm), n_chains_(scene.chains.size()), n_cloths_(scene.cloths.size()) {
  ParticleModel model = BuildParticleModel(scene, scene.path);
  const std::vector<Vec3>& x = model.x;
  const std::vector<Vec3>& v = model.v;
  const std::vector<double>& w = model.inverse_mass;
  const std::vector<XpbdParticles::Constraint>& constraints = model.constraints;
  global_ = constraints;
  triangles_ = std::move(model.triangles);
  n_particles_ = static_cast<std::int64_t>(x.size());

  // This rank's share (particles/ParticlePartition.hpp): owned particles, then ghosts; the
  // constraints at owned particles by (color, id), renumbered locally.
  std::vector<std::int64_t> pairs;
  for (const auto& c : constraints) {
    pairs.push_back(c.i);
    pairs.push_back(c.j);
  }
  const ParticleShare share =
      DistributeParticles(comm_, static_cast<std::int64_t>(x.size()), pairs, &n_colors_);
  owned_per_rank_ = AllGatherLists(comm_, std::vector<std::int64_t>{static_cast<std::int64_t>(share.owned.size())});
  local_ids_ = share.owned;
  local_ids_.insert(local_ids_.end(), share.ghosts.begin(), share.ghosts.end());
  std::vector<int> local_of(x.size(), -1);
  std::vector<Vec3> x_local, v_local;
  std::vector<double> w_local;
  for (size_t l = 0; l < local_ids_.size(); ++l) {
    local_of[local_ids_[l]] = static_cast<int>(l);
    x_local.push_back(x[local_ids_[l]]);
    v_local.push_back(v[local_ids_[l]]);
    w_local.push_back(w[local_ids_[l]]);
  }
  std::vector<XpbdParticles::Constraint> local_constraints;
  for (std::int64_t k : share.constraints) {
    XpbdParticles::Constraint c = constraints[k];
    c.i = local_of[c.i];
    c.j = local_of[c.j];
    local_constraints.push_back(c);
  }
  local_constraint_ids_ = share.constraints;
  int size = 1;
  MPI_Comm_size(comm_, &size);
  send_.assign(n_colors_, std::vector<std::vector<int>>(size));
  recv_.assign(n_colors_, std::vector<std::vector<int>>(size));
  for (int c = 0; c < n_colors_; ++c)
    for (int r = 0; r < size; ++r) {
      for (std::int64_t p : share.send[c][r]) send_[c][r].push_back(local_of[p]);
      for (std::int64_t p : share.recv[c][r]) recv_[c][r].push_back(local_of[p]);
    }
  send_buffer_.resize(size);
  recv_buffer_.resize(size);
  particles_ = std::make_unique<XpbdParticles>(x_local, w_local, local_constraints, scene.gravity,
                                               scene.damping.stiffness_beta);
  particles_->v() = v_local;
  particles_->Distribute(share.owned.size(), share.counted, share.color_begin,
                         [this](int color) { Halo(color); });
  // Collision objects: contacts with friction, as FemXpbd's (Secs. 4.2-4.4).
  for (const CollisionObjectConfig& config : scene.collision_objects) objects_.emplace_back(config);
  std::vector<XpbdParticles::Obstacle> obstacles;
  for (const CollisionObject& object : objects_)
    obstacles.push_back({[&object](const Vec3& p, Vec3* n) { return object.SignedDistance(p, n); },
                         object.friction()});
  particles_->SetObstacles(std::move(obstacles), scene.xpbd.max_depenetration_speed);
}

void ChainXpbd::Halo(int color) {
  const int size = static_cast<int>(send_[color].size());
  if (size == 1) return;
  halo_exchanges_ += 1.0;
  constexpr int kTag = 1401;
  std::vector<MPI_Request> requests;
  std::vector<Vec3>& x = particles_->x();
  for (int r = 0; r < size; ++r) {
    if (recv_[color][r].empty()) continue;
    recv_buffer_[r].resize(3 * recv_[color][r].size());
    requests.emplace_back();
    MPI_Irecv(recv_buffer_[r].data(), static_cast<int>(recv_buffer_[r].size()), MPI_DOUBLE, r, kTag,
              comm_, &requests.back());
  }
  for (int r = 0; r < size; ++r) {
    if (send_[color][r].empty()) continue;
    std::vector<double>& buffer = send_buffer_[r];
    buffer.clear();
    for (int l : send_[color][r])
      for (int d = 0; d < 3; ++d) buffer.push_back(x[l][d]);
    requests.emplace_back();
    MPI_Isend(buffer.data(), static_cast<int>(buffer.size()), MPI_DOUBLE, r, kTag, comm_,
              &requests.back());
  }
  MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (int r = 0; r < size; ++r)
    for (size_t k = 0; k < recv_[color][r].size(); ++k)
      x[recv_[color][r][k]] = Vec3(recv_buffer_[r][3 * k], recv_buffer_[r][3 * k + 1],
                                   recv_buffer_[r][3 * k + 2]);
}

std::vector<Vec3> ChainXpbd::Gather(const std::vector<Vec3>& local) const {
  std::vector<std::int64_t> ids(local_ids_.begin(), local_ids_.begin() + particles_->n_owned());
  std::vector<double> values;
  for (size_t l = 0; l < particles_->n_owned(); ++l)
    for (int d = 0; d < 3; ++d) values.push_back(local[l][d]);
  const std::vector<std::int64_t> all_ids = AllGatherLists(comm_, ids);
  const std::vector<double> all_values = AllGatherLists(comm_, values);
  std::vector<Vec3> out(static_cast<size_t>(n_particles_));
  for (size_t k = 0; k < all_ids.size(); ++k)
    out[all_ids[k]] = Vec3(all_values[3 * k], all_values[3 * k + 1], all_values[3 * k + 2]);
  return out;
}

std::vector<double> ChainXpbd::GatherForces() const {
  std::vector<std::int64_t> ids;
  std::vector<double> values;
  for (size_t k = 0; k < local_constraint_ids_.size(); ++k) {
    if (!particles_->counted(k)) continue;
    ids.push_back(local_constraint_ids_[k]);
    values.push_back(particles_->Force(static_cast<int>(k)));
  }
  const std::vector<std::int64_t> all_ids = AllGatherLists(comm_, ids);
  const std::vector<double> all_values = AllGatherLists(comm_, values);
  std::vector<double> out(global_.size(), 0.0);
  for (size_t k = 0; k < all_ids.size(); ++k) out[all_ids[k]] = all_values[k];
  return out;
}

void ChainXpbd::SetState(const std::vector<Vec3>& x, const std::vector<Vec3>& v) {
  for (size_t l = 0; l < local_ids_.size(); ++l) {
    particles_->x()[l] = x[local_ids_[l]];
    particles_->v()[l] = v[local_ids_[l]];
  }
}

std::string ChainXpbd::Describe() const {
  int size = 1;
  MPI_Comm_size(comm_, &size);
  return DescribeSubsteps() + ", " + std::to_string(n_chains_) +
         (n_chains_ == 1 ? " chain, " : " chains, ") + std::to_string(n_cloths_) +
         (n_cloths_ == 1 ? " cloth, " : " cloths, ") + std::to_string(n_particles_) +
         " particles, " + std::to_string(global_.size()) +
         " distance constraints, Gauss-Seidel over " + std::to_string(n_colors_) +
         " constraint colors" + (size > 1 ? ", split by METIS" : "");
}

SolveReport ChainXpbd::TryStep(double dt) {
  const std::vector<Vec3> x_before = particles_->x(), v_before = particles_->v();
  const long long before = particles_->projections();
  halo_exchanges_ = 0.0;
  particles_->Step(dt, substeps_, iterations_);
  SolveReport report;
  report.iterations = substeps_ * iterations_;
  int finite = 1;
  for (size_t p = 0; p < particles_->x().size(); ++p)
    if (!particles_->x()[p].allFinite() || !particles_->v()[p].allFinite()) finite = 0;
  MPI_Allreduce(MPI_IN_PLACE, &finite, 1, MPI_INT, MPI_MIN, comm_);
  if (!finite) {
    particles_->x() = x_before;
    particles_->v() = v_before;
    report.reason = "NaN in the XPBD positions or velocities";
    return report;
  }
  t_ += dt;
  ++steps_;
  // stats.csv, collectively here (StatsValues is const and local): sums over ranks in
  // global id order, so the figures do not depend on the rank count either.
  double sums[2] = {static_cast<double>(particles_->projections() - before), 0.0};
  double max_strain = particles_->MaxStrain();
  std::vector<std::int64_t> particle_ids, constraint_ids;
  std::vector<double> motion, springs, stretch;
  for (size_t p = 0; p < particles_->n_owned(); ++p) {
    particle_ids.push_back(local_ids_[p]);
    motion.push_back(particles_->MotionEnergy(p));
  }
  for (size_t k = 0; k < local_constraint_ids_.size(); ++k) {
    if (!particles_->counted(k)) continue;
    constraint_ids.push_back(local_constraint_ids_[k]);
    springs.push_back(particles_->ElasticEnergy(k));
    stretch.push_back(particles_->StretchEnergy(k));
    if (local_constraint_ids_[k] == 0) sums[1] = particles_->Force(static_cast<int>(k));
  }
  MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, comm_);
  MPI_Allreduce(MPI_IN_PLACE, &max_strain, 1, MPI_DOUBLE, MPI_MAX, comm_);
  const auto ordered_sum = [&](const std::vector<std::int64_t>& ids, const std::vector<double>& values,
                               size_t n) {
    const std::vector<std::int64_t> all_ids = AllGatherLists(comm_, ids);
    const std::vector<double> all_values = AllGatherLists(comm_, values);
    std::vector<double> by_id(n, 0.0);
    for (size_t k = 0; k < all_ids.size(); ++k) by_id[all_ids[k]] = all_values[k];
    double sum = 0.0;
    for (double e : by_id) sum += e;
    return sum;
  };
  const double motion_energy = ordered_sum(particle_ids, motion, static_cast<size_t>(n_particles_));
  const double spring_energy = ordered_sum(constraint_ids, springs, global_.size());
  const double stretch_energy = ordered_sum(constraint_ids, stretch, global_.size());
  stats_ = {static_cast<double>(substeps_), sums[0], max_strain, sums[1],
            motion_energy + spring_energy, spring_energy, stretch_energy, halo_exchanges_};
  report.converged = true;
  report.reason = "substeps done";
  return report;
}

void ChainXpbd::KeepState() {
  x_kept_ = particles_->x();
  v_kept_ = particles_->v();
  t_kept_ = t_;
  steps_kept_ = steps_;
}

void ChainXpbd::RestoreKeptState() {
  particles_->x() = x_kept_;
  particles_->v() = v_kept_;
  t_ = t_kept_;
  steps_ = steps_kept_;
}

std::vector<std::string> ChainXpbd::StatsColumns() const {
  return {"substeps",     "projections",    "max_strain",     "force_0",
          "total_energy", "elastic_energy", "stretch_energy", "halo_exchanges"};
}

std::vector<double> ChainXpbd::StatsValues() const {
  return stats_.empty() ? std::vector<double>(StatsColumns().size(), 0.0) : stats_;
}

}  // namespace optistep
