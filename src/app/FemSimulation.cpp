#include "app/FemSimulation.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "model/SceneMesh.hpp"
#include "solvers/NewtonMinimizer.hpp"

namespace optistep {

FemSimulation::FemSimulation(MPI_Comm comm, const SceneConfig& scene)
    : Simulation(comm, scene) {
  ScopedPhase phase(Phase::kSetup);
  DistributedTetMesh mesh = LoadDistributedMesh(comm_, scene_, &quality_);
  model_ = std::make_unique<FemModel>(scene_, std::move(mesh));
  if (scene_.solver.method != "newton")
    throw InputError(scene_.path + ": solver.method: '" + scene_.solver.method +
                     "' is not available for FEM scenes (available: newton)");
  minimizer_ = std::make_unique<NewtonMinimizer>(comm_, scene_.solver);
  integrator_ = std::make_unique<BackwardEulerIntegrator>(*model_, *minimizer_);
  const DistributedTetMesh& m = model_->mesh();
  node_order_ = std::make_unique<NaturalOrdering>(
      comm_, std::vector<PetscInt>(m.node_original_id.begin(), m.node_original_id.begin() + m.n_owned),
      m.n_global_nodes, 3);
  std::vector<PetscInt> counted_ids;
  for (size_t e = 0; e < m.tets.size(); ++e)
    if (m.tet_counted[e]) counted_ids.push_back(m.tet_original_id[e]);
  tet_order_ = std::make_unique<NaturalOrdering>(comm_, counted_ids, m.n_global_tets, 1);
}

FemSimulation::~FemSimulation() = default;

void FemSimulation::StartFrames() {
  // Topology in original node ids, natural tet order.
  const DistributedTetMesh& m = model_->mesh();
  NaturalOrdering connectivity(comm_, [&] {
    std::vector<PetscInt> ids;
    for (size_t e = 0; e < m.tets.size(); ++e)
      if (m.tet_counted[e]) ids.push_back(m.tet_original_id[e]);
    return ids;
  }(), m.n_global_tets, 4);
  std::vector<double> nodes;
  for (size_t e = 0; e < m.tets.size(); ++e)
    if (m.tet_counted[e])
      for (int a = 0; a < 4; ++a)
        nodes.push_back(static_cast<double>(m.node_original_id[m.tets[e][a]]));
  const DistributedArray<double> natural = connectivity.ToNatural(nodes.data());
  std::vector<int64_t> tets(natural.data, natural.data + natural.local_rows * 4);
  DistributedArray<int64_t> topology{natural.global_rows, natural.row_offset,
                                     natural.local_rows, 4, tets.data()};
  frames_->SetTetMesh(topology, m.n_global_nodes);
}

int FemSimulation::StepsPerFrame() const {
  return static_cast<int>(std::ceil(scene_.time.frame_dt / scene_.time.dt - 1e-9));
}

void FemSimulation::AdvanceStep(StepStats* stats) {
  const int n_steps = StepsPerFrame();
  integrator_->Advance(scene_.time.frame_dt / n_steps, [&](const StepRecord& record) {
    if (stats) stats->Record(record);
  });
  if (++frame_step_ == n_steps) {
    frame_step_ = 0;
    ++frame_;
  }
}

int64_t FemSimulation::FramePoints() const { return model_->mesh().n_global_nodes; }

int64_t FemSimulation::FrameCells() const { return model_->mesh().n_global_tets; }

void FemSimulation::SaveState(CheckpointWriter& out) {
  const std::pair<const char*, Vec> fields[] = {{"/fem/x", integrator_->positions()},
                                                {"/fem/v", integrator_->velocities()}};
  for (const auto& [name, vec] : fields) {
    const PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArrayRead(vec, &a));
    const DistributedArray<double> natural = node_order_->ToNatural(a);
    OPTISTEP_PETSC(VecRestoreArrayRead(vec, &a));
    out.Write(name, natural);
  }
  out.WriteAttribute("frame_step", int64_t{frame_step_});
}

void FemSimulation::LoadState(const CheckpointReader& in) {
  const int64_t n_nodes = model_->mesh().n_global_nodes;
  for (const char* name : {"/fem/x", "/fem/v"})
    if (in.Shape(name) != std::vector<int64_t>{n_nodes, 3})
      throw InputError(in.path() + ": " + name + " does not hold 3 values for each of the " +
                       std::to_string(n_nodes) + " nodes of " + scene_.path);
  const RowRange rows = node_order_->NaturalRows();
  std::vector<double> x = in.Read<double>("/fem/x", rows);
  std::vector<double> v = in.Read<double>("/fem/v", rows);
  const int64_t frame_step = in.Attribute<int64_t>("frame_step");
  if (frame_step < 0 || frame_step >= StepsPerFrame())
    throw InputError(in.path() + ": frame_step " + std::to_string(frame_step) +
                     " is not a step of the " + std::to_string(StepsPerFrame()) +
                     " steps per frame of " + scene_.path);
  std::vector<double> x_owned(3 * model_->mesh().n_owned), v_owned(x_owned.size());
  node_order_->FromNatural(x.data(), x_owned.data());
  node_order_->FromNatural(v.data(), v_owned.data());
  integrator_->SetState(x_owned.data(), v_owned.data(), in.header().time, in.header().step);
  frame_step_ = static_cast<int>(frame_step);
}

void FemSimulation::WriteFrame() {
  ScopedPhase phase(Phase::kOutput);
  std::vector<double> J, von_mises;
  integrator_->potential().TetDiagnostics(integrator_->positions(), &J, &von_mises);
  std::vector<double> owner(J.size());
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::fill(owner.begin(), owner.end(), static_cast<double>(rank));

  const PetscScalar* xa = nullptr;
  const PetscScalar* va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(integrator_->positions(), &xa));
  OPTISTEP_PETSC(VecGetArrayRead(integrator_->velocities(), &va));
  // Each ToNatural result stays valid until that ordering's next call, so node fields
  // are copied out before the second one is made.
  const DistributedArray<double> positions = node_order_->ToNatural(xa);
  std::vector<double> x_natural(positions.data, positions.data + positions.local_rows * 3);
  DistributedArray<double> x_view = positions;
  x_view.data = x_natural.data();
  const DistributedArray<double> velocities = node_order_->ToNatural(va);
  OPTISTEP_PETSC(VecRestoreArrayRead(integrator_->positions(), &xa));
  OPTISTEP_PETSC(VecRestoreArrayRead(integrator_->velocities(), &va));

  std::vector<std::vector<double>> cell_data;
  std::vector<XdmfTimeSeries::Field> fields;
  fields.push_back({"velocity", false, velocities});
  const std::pair<const char*, const std::vector<double>*> cells[] = {
      {"J", &J}, {"von_mises", &von_mises}, {"rank", &owner}};
  cell_data.reserve(3);
  for (const auto& [name, values] : cells) {
    const DistributedArray<double> natural = tet_order_->ToNatural(values->data());
    cell_data.emplace_back(natural.data, natural.data + natural.local_rows);
    DistributedArray<double> view = natural;
    view.data = cell_data.back().data();
    fields.push_back({name, true, view});
  }
  frames_->WriteFrame(frame_, integrator_->time(), x_view, fields);
}

std::vector<double> FemSimulation::Gather(Vec v) {
  const PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(v, &a));
  const DistributedArray<double> natural = node_order_->ToNatural(a);
  OPTISTEP_PETSC(VecRestoreArrayRead(v, &a));
  int size = 1;
  MPI_Comm_size(comm_, &size);
  const int mine = static_cast<int>(natural.local_rows * 3);
  std::vector<int> counts(size), displs(size, 0);
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, comm_);
  for (int r = 1; r < size; ++r) displs[r] = displs[r - 1] + counts[r - 1];
  std::vector<double> all(natural.global_rows * 3);
  MPI_Allgatherv(natural.data, mine, MPI_DOUBLE, all.data(), counts.data(), displs.data(),
                 MPI_DOUBLE, comm_);
  return all;
}

std::vector<double> FemSimulation::GatherPositions() { return Gather(integrator_->positions()); }

std::vector<double> FemSimulation::GatherVelocities() { return Gather(integrator_->velocities()); }

}  // namespace optistep
