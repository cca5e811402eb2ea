#include "app/FemSimulation.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/Error.hpp"
#include "core/Phases.hpp"
#include "model/SceneMesh.hpp"
#include "integrators/IntegratorFactory.hpp"

namespace optistep {
FemSimulation::FemSimulation(MPI_Comm comm, const SceneConfig& scene)
    : Simulation(comm, scene) {
  ScopedPhase phase(kSetupPhase);
  DistributedTetMesh mesh = LoadDistributedMesh(comm_, scene_, &quality_);
  model_ = std::make_unique<FemModel>(scene_, scene_.friction, scene_.self_contact, std::move(mesh));
  x_.reset(model_->CreateNodeVector());
  OPTISTEP_PETSC(VecDuplicate(x_, v_.out()));
  model_->InitialState(x_, v_);
  SetIntegrator(CreateFemIntegrator(scene_, *model_, x_, v_));
  InstallStateCheck([this] { return CheckState(); });
  const DistributedTetMesh& m = model_->mesh();
  node_order_ = std::make_unique<NaturalOrdering>(
      comm_, std::vector<PetscInt>(m.node_original_id.begin(), m.node_original_id.begin() + m.n_owned),
      m.n_global_nodes, 3);
  std::vector<PetscInt> counted_ids;
  for (size_t e = 0; e < m.tets.size(); ++e)
    if (m.tet_counted[e]) counted_ids.push_back(m.tet_original_id[e]);
  tet_order_ = std::make_unique<NaturalOrdering>(comm_, counted_ids, m.n_global_tets, 1);
}

std::string FemSimulation::CheckState() const {
  std::vector<double> J, von_mises;
  model_->TetDiagnostics(x_, &J, &von_mises);
  const DistributedTetMesh& m = model_->mesh();
  std::vector<long long> ids;
  std::vector<char> finite;
  std::size_t k = 0;
  for (std::size_t e = 0; e < m.tets.size(); ++e) {
    if (!m.tet_counted[e]) continue;
    ids.push_back(static_cast<long long>(m.tet_original_id[e]));
    finite.push_back(std::isfinite(von_mises[k++]));
  }
  return JudgeState(J, ids, finite, "tet", "a non-finite von Mises stress");
}

FemSimulation::~FemSimulation() {
  // The integrator refers to x_ and v_: it goes first.
  integrator_.reset();
}

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

int64_t FemSimulation::FramePoints() const { return model_->mesh().n_global_nodes; }

int64_t FemSimulation::FrameCells() const { return model_->mesh().n_global_tets; }

void FemSimulation::SaveState(CheckpointWriter& out) {
  const std::pair<const char*, Vec> fields[] = {{"/fem/x", x_}, {"/fem/v", v_}};
  for (const auto& [name, vec] : fields) {
    const PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArrayRead(vec, &a));
    const DistributedArray<double> natural = node_order_->ToNatural(a);
    OPTISTEP_PETSC(VecRestoreArrayRead(vec, &a));
    out.Write(name, natural);
  }
  out.WriteAttribute("frame_step", int64_t{controller_->frame_step()});
  integrator_->SaveState(out);
}

bool FemSimulation::LoadState(const CheckpointReader& in) {
  const int64_t n_nodes = model_->mesh().n_global_nodes;
  for (const char* name : {"/fem/x", "/fem/v"})
    if (in.Shape(name) != std::vector<int64_t>{n_nodes, 3})
      throw InputError(in.path() + ": " + name + " does not hold 3 values for each of the " +
                       std::to_string(n_nodes) + " nodes of " + scene_.path);
  const RowRange rows = node_order_->NaturalRows();
  std::vector<double> x = in.Read<double>("/fem/x", rows);
  std::vector<double> v = in.Read<double>("/fem/v", rows);
  const int64_t frame_step = in.Attribute<int64_t>("frame_step");
  const int steps_per_frame = controller_->StepsPerFrame();
  if (frame_step < 0 || frame_step >= steps_per_frame)
    throw InputError(in.path() + ": frame_step " + std::to_string(frame_step) +
                     " is not a step of the " + std::to_string(steps_per_frame) +
                     " steps per frame of " + scene_.path);
  int size = 1;
  MPI_Comm_size(comm_, &size);
  integrator_->LoadState(in, in.header().ranks == size);
  std::vector<double> x_owned(3 * model_->mesh().n_owned), v_owned(x_owned.size());
  node_order_->FromNatural(x.data(), x_owned.data());
  node_order_->FromNatural(v.data(), v_owned.data());
  for (auto [target, values] : {std::pair<Vec, const double*>{x_, x_owned.data()}, {v_, v_owned.data()}}) {
    PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArray(target, &a));
    std::copy(values, values + x_owned.size(), a);
    OPTISTEP_PETSC(VecRestoreArray(target, &a));
    OPTISTEP_PETSC(VecGhostUpdateBegin(target, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecGhostUpdateEnd(target, INSERT_VALUES, SCATTER_FORWARD));
  }
  integrator_->SetClock(in.header().time, static_cast<long>(in.header().step));
  controller_->set_frame_step(static_cast<int>(frame_step));
  // METIS splits the mesh alike for the same rank count: each rank holds its nodes again.
  return in.header().ranks == size;
}

void FemSimulation::WriteFrame() {
  ScopedPhase phase(kOutputPhase);
  std::vector<double> J, von_mises;
  model_->TetDiagnostics(x_, &J, &von_mises);
  std::vector<double> owner(J.size());
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  std::fill(owner.begin(), owner.end(), static_cast<double>(rank));

  const PetscScalar* xa = nullptr;
  const PetscScalar* va = nullptr;
  OPTISTEP_PETSC(VecGetArrayRead(x_, &xa));
  OPTISTEP_PETSC(VecGetArrayRead(v_, &va));
  // Each ToNatural result stays valid until that ordering's next call, so node fields
  // are copied out before the second one is made.
  const DistributedArray<double> positions = node_order_->ToNatural(xa);
  std::vector<double> x_natural(positions.data, positions.data + positions.local_rows * 3);
  DistributedArray<double> x_view = positions;
  x_view.data = x_natural.data();
  const DistributedArray<double> velocities = node_order_->ToNatural(va);
  OPTISTEP_PETSC(VecRestoreArrayRead(x_, &xa));
  OPTISTEP_PETSC(VecRestoreArrayRead(v_, &va));

  std::vector<std::vector<double>> cell_data;
  std::vector<XdmfTimeSeries::Field> fields;
  fields.push_back({"velocity", false, velocities});
  const auto extra = integrator_->FrameCellFields();  // e.g. async's region (per tet)
  std::vector<std::pair<const char*, const std::vector<double>*>> cells = {
      {"J", &J}, {"von_mises", &von_mises}, {"rank", &owner}};
  for (const auto& [name, values] : extra) cells.emplace_back(name.c_str(), &values);
  cell_data.reserve(cells.size());
  for (const auto& [name, values] : cells) {
    const DistributedArray<double> natural = tet_order_->ToNatural(values->data());
    cell_data.emplace_back(natural.data, natural.data + natural.local_rows);
    DistributedArray<double> view = natural;
    view.data = cell_data.back().data();
    fields.push_back({name, true, view});
  }
  frames_->WriteFrame(frame_, time(), x_view, fields);
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

std::vector<double> FemSimulation::GatherPositions() { return Gather(x_); }

std::vector<double> FemSimulation::GatherVelocities() { return Gather(v_); }

}  // namespace optistep
