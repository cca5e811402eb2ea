#include "app/ParticleSimulation.hpp"

#include <string>

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "integrators/IntegratorFactory.hpp"

namespace optistep {
namespace {

/// 3 values per entry, flat.
std::vector<double> Flat(const std::vector<Vec3>& a) {
  std::vector<double> out;
  out.reserve(3 * a.size());
  for (const Vec3& p : a)
    for (int d = 0; d < 3; ++d) out.push_back(p[d]);
  return out;
}

}  // namespace

ParticleSimulation::ParticleSimulation(MPI_Comm comm, const SceneConfig& scene)
    : Simulation(comm, scene) {
  ScopedPhase phase(kSetupPhase);
  std::unique_ptr<Integrator> integrator = CreateParticleIntegrator(comm, scene_);
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
  std::vector<int64_t> segments, triangles;
  for (const auto& c : chains_->segments()) {
    segments.push_back(c.i);
    segments.push_back(c.j);
  }
  for (const auto& t : chains_->triangles()) triangles.insert(triangles.end(), t.begin(), t.end());
  const DistributedArray<int64_t> surface = RankZeroRows(triangles, 3);
  frames_->SetPolylineMesh(RankZeroRows(segments, 2), particle_count(),
                           triangles.empty() ? nullptr : &surface);
}

void ParticleSimulation::WriteFrame() {
  ScopedPhase phase(kOutputPhase);
  const XpbdParticles& p = chains_->particles();
  const std::vector<Vec3> x = chains_->Gather(p.x()), v = chains_->Gather(p.v());
  std::vector<double> force = chains_->GatherForces();
  if (chains_->steps() == 0) force.assign(force.size(), 0.0);  // no substep yet
  std::vector<double> strain;
  for (const auto& c : chains_->segments()) strain.push_back((x[c.i] - x[c.j]).norm() / c.rest - 1.0);
  const std::vector<double> x_flat = Flat(x), v_flat = Flat(v);
  frames_->WriteFrame(frame_, time(), RankZeroRows(x_flat, 3),
                      {{"velocity", false, RankZeroRows(v_flat, 3)},
                       {"force", true, RankZeroRows(force, 1)},
                       {"strain", true, RankZeroRows(strain, 1)}});
}

void ParticleSimulation::SaveState(CheckpointWriter& out) {
  const XpbdParticles& p = chains_->particles();
  const std::vector<double> x = Flat(chains_->Gather(p.x())), v = Flat(chains_->Gather(p.v()));
  out.Write("/particles/x", RankZeroRows(x, 3));
  out.Write("/particles/v", RankZeroRows(v, 3));
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
  std::vector<Vec3> xs(static_cast<size_t>(n)), vs(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    xs[k] = Vec3(x[3 * k], x[3 * k + 1], x[3 * k + 2]);
    vs[k] = Vec3(v[3 * k], v[3 * k + 1], v[3 * k + 2]);
  }
  chains_->SetState(xs, vs);
  chains_->SetClock(in.header().time, static_cast<long>(in.header().step));
  controller_->set_frame_step(static_cast<int>(frame_step));
  return true;  // the checkpoint holds every particle in scene order: any rank count resumes
}

}  // namespace optistep
