#include "app/ParticleSimulation.hpp"

#include <string>

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "integrators/IntegratorFactory.hpp"

namespace optistep {

ParticleSimulation::ParticleSimulation(MPI_Comm comm, const SceneConfig& scene)
    : Simulation(comm, scene) {
  ScopedPhase phase(kSetupPhase);
  std::unique_ptr<Integrator> integrator = CreateParticleIntegrator(scene_);
  chains_ = static_cast<ChainXpbd*>(integrator.get());
  SetIntegrator(std::move(integrator));
}

template <class T>
DistributedArray<T> ParticleSimulation::RankZeroRows(const std::vector<T>& values,
                                                     int columns) const {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  const int64_t rows = static_cast<int64_t>(values.size()) / columns;
  return DistributedArray<T>{rows, 0, rank == 0 ? rows : 0, columns, values.data()};
}

void ParticleSimulation::StartFrames() {
  std::vector<int64_t> segments;
  for (const auto& c : chains_->segments()) {
    segments.push_back(c.i);
    segments.push_back(c.j);
  }
  frames_->SetPolylineMesh(RankZeroRows(segments, 2), particle_count());
}

void ParticleSimulation::WriteFrame() {
  ScopedPhase phase(kOutputPhase);
  const XpbdParticles& p = chains_->particles();
  std::vector<double> x, v, force, strain;
  for (size_t k = 0; k < p.x().size(); ++k)
    for (int d = 0; d < 3; ++d) {
      x.push_back(p.x()[k][d]);
      v.push_back(p.v()[k][d]);
    }
  for (size_t k = 0; k < p.constraints().size(); ++k) {
    const auto& c = p.constraints()[k];
    force.push_back(chains_->steps() > 0 ? p.Force(static_cast<int>(k)) : 0.0);
    strain.push_back((p.x()[c.i] - p.x()[c.j]).norm() / c.rest - 1.0);
  }
  frames_->WriteFrame(frame_, time(), RankZeroRows(x, 3),
                      {{"velocity", false, RankZeroRows(v, 3)},
                       {"force", true, RankZeroRows(force, 1)},
                       {"strain", true, RankZeroRows(strain, 1)}});
}

void ParticleSimulation::SaveState(CheckpointWriter& out) {
  const XpbdParticles& p = chains_->particles();
  for (const auto& [name, field] : {std::pair<const char*, const std::vector<Vec3>*>{"/particles/x", &p.x()},
                                    {"/particles/v", &p.v()}}) {
    std::vector<double> values;
    for (const Vec3& a : *field)
      for (int d = 0; d < 3; ++d) values.push_back(a[d]);
    out.Write(name, RankZeroRows(values, 3));
  }
  out.WriteAttribute("frame_step", int64_t{controller_->frame_step()});
}

bool ParticleSimulation::LoadState(const CheckpointReader& in) {
  const int64_t n = particle_count();
  for (const char* name : {"/particles/x", "/particles/v"})
    if (in.Shape(name) != std::vector<int64_t>{n, 3})
      throw InputError(in.path() + ": " + name + " does not hold 3 values for each of the " +
                       std::to_string(n) + " particles of " + scene_.path);
  const std::vector<double> x = in.Read<double>("/particles/x", RowRange{0, n});
  const std::vector<double> v = in.Read<double>("/particles/v", RowRange{0, n});
  const int64_t frame_step = in.Attribute<int64_t>("frame_step");
  if (frame_step < 0 || frame_step >= controller_->StepsPerFrame())
    throw InputError(in.path() + ": frame_step " + std::to_string(frame_step) +
                     " is not a step of the " + std::to_string(controller_->StepsPerFrame()) +
                     " steps per frame of " + scene_.path);
  XpbdParticles& p = chains_->particles();
  for (int64_t k = 0; k < n; ++k) {
    p.x()[k] = Vec3(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
    p.v()[k] = Vec3(v[3 * k], v[3 * k + 1], v[3 * k + 2]);
  }
  chains_->SetClock(in.header().time, static_cast<long>(in.header().step));
  controller_->set_frame_step(static_cast<int>(frame_step));
  return true;  // every rank holds every particle, whatever the rank count
}

}  // namespace optistep
