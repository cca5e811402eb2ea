#include "app/MpmSimulation.hpp"

#include <cmath>
#include <utility>

#include "core/Error.hpp"
#include "core/Exchange.hpp"
#include "core/Phases.hpp"
#include "integrators/IntegratorFactory.hpp"
#include "mpm/BodySampling.hpp"
#include "mpm/MpmLoads.hpp"
#include "mpm/ParticleCheckpoint.hpp"
#include "partition/NaturalOrdering.hpp"

namespace optistep {

using mpm::Particles;

MpmSimulation::MpmSimulation(MPI_Comm comm, const SceneConfig& scene)
    : Simulation(comm, scene), model_(scene_) {
  ScopedPhase phase(kSetupPhase);
  available_memory_ = QueryAvailableMemory(comm_);
  int size = 1;
  MPI_Comm_size(comm_, &size);
  Particles all;
  std::vector<mpm::ParticleForce>& forces = model_.particle_forces;
  ReadOnRankZero(comm_, [&] { all = mpm::SampleBodies(scene_, scene_.mpm, available_memory_, size, &memory_estimate_, &forces); });
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
  InstallStateCheck([this] { return CheckState(); });
}

std::string MpmSimulation::CheckState() const {
  const Particles& p = domain_->particles();
  const std::size_t n = domain_->n_owned();
  std::vector<double> J(n);
  std::vector<long long> ids(n);
  std::vector<char> finite(n);
  for (std::size_t k = 0; k < n; ++k) {
    J[k] = p.F[k].determinant() * p.plastic[k].Jp;
    ids[k] = static_cast<long long>(p.id[k]);
    finite[k] = p.x[k].allFinite() && p.v[k].allFinite() && p.F[k].allFinite() && p.C[k].allFinite() &&
                std::isfinite(p.plastic[k].plastic_strain);
  }
  return JudgeState(J, ids, finite, "particle", "a non-finite position, velocity, F, C or plastic strain");
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

void MpmSimulation::SaveState(CheckpointWriter& out) { mpm::SaveParticles(out, *domain_, n_particles_); }

bool MpmSimulation::LoadState(const CheckpointReader& in) {
  const bool partition_kept = mpm::LoadParticles(in, scene_, *domain_, n_particles_);
  integrator_->SetClock(in.header().time, static_cast<long>(in.header().step));
  return partition_kept;
}

}  // namespace optistep
