#pragma once
// The distributed tetrahedral FEM model of a scene: mesh share, per-tet reference data,
// lumped masses, materials, Dirichlet nodes with their scripted motion, collision objects,
// and the PETSc layout (ghosted Vecs of block size 3, local-to-global mapping).
#include <petscis.h>
#include <petscvec.h>

#include <memory>
#include <vector>

#include "core/PetscHandles.hpp"
#include "core/Types.hpp"
#include "io/SceneSections.hpp"
#include "materials/Material.hpp"
#include "model/CollisionObject.hpp"
#include "model/ScriptedMotion.hpp"
#include "model/TimeFunction.hpp"
#include "partition/TetPartition.hpp"
#include "solvers/Minimizer.hpp"

namespace optistep {

class FemModel {
 public:
  /// Collective. `scene`: the bodies, conditions, objects and loads; `friction` and
  /// `self_contact`: the scene's sections of the same name, which the incremental
  /// potential reads. Throws InputError for a Dirichlet selection that holds no node, and
  /// for a degenerate tet (zero reference volume), naming it.
  FemModel(const ModelConfig& scene, const FrictionConfig& friction,
           const SelfContactConfig& self_contact, DistributedTetMesh mesh);
  ~FemModel();
  FemModel(const FemModel&) = delete;
  FemModel& operator=(const FemModel&) = delete;

  MPI_Comm comm() const { return mesh_.comm; }
  const DistributedTetMesh& mesh() const { return mesh_; }
  const ModelConfig& scene() const { return scene_; }
  const FrictionConfig& friction() const { return friction_; }
  const SelfContactConfig& self_contact() const { return self_contact_; }
  /// What a minimizer of this model's steps starts from: Jacobi-preconditioned linear
  /// solves, and the tets and bodies that pick the method when the scene names none
  /// (solvers/MinimizerFactory.hpp). The same for every FEM integrator that minimizes.
  MinimizerDefaults SolverDefaults() const {
    return MinimizerDefaults{PCJACOBI, false, static_cast<double>(mesh_.n_global_tets),
                             static_cast<int>(scene_.bodies.size())};
  }

  /// A new ghosted Vec (block size 3, owned nodes then ghosts in the local form).
  Vec CreateNodeVector() const;
  ISLocalToGlobalMapping LocalToGlobal() const { return l2g_; }

  // Per local tet.
  const Eigen::Matrix<double, 3, 4>& Beta(int e) const { return beta_[e]; }
  double RestVolume(int e) const { return V0_[e]; }
  const ElasticMaterial& MaterialOf(int e) const { return *materials_[mesh_.tet_body[e]]; }

  // Per owned node.
  double Mass(int l) const { return mass_[l]; }
  /// Index into motions() of the condition holding owned node l, or -1 when free.
  int DirichletOf(int l) const { return dirichlet_[l]; }
  bool IsConstrained(int l) const { return dirichlet_[l] >= 0; }
  /// For any local node (owned or ghost): is it a Dirichlet node on its owner?
  bool IsConstrainedLocal(int l) const { return constrained_local_[l] != 0; }
  /// Position (m) at time t of constrained owned node l.
  Vec3 DirichletTarget(int l, double t) const;
  PetscInt ConstrainedCount() const { return n_constrained_global_; }

  const std::vector<CollisionObject>& collision_objects() const { return collision_objects_; }
  /// Rank-local. Poses the moving collision objects at time t (s) (CollisionObject::SetTime).
  void SetCollisionTime(double t) {
    for (auto& c : collision_objects_) c.SetTime(t);
  }
  const Vec3& gravity() const { return scene_.gravity; }
  /// Gravity (m/s^2) at time t (s): the scene's gravity times its gravity_time_function.
  Vec3 Gravity(double t) const { return gravity_tau_.IsUnit() ? scene_.gravity : gravity_tau_(t) * scene_.gravity; }
  /// Total mass of the model (kg), summed deterministically.
  double TotalMass() const { return total_mass_; }

  /// Collective. Fills x with the initial positions (the rest positions, or prestrained
  /// ones) and v with the bodies' initial velocities (model/InitialConditions.hpp;
  /// Dirichlet nodes at rest). Throws InputError for a bad velocity table.
  void InitialState(Vec x, Vec v) const;

  /// Collective (refreshes x's ghosts): over this rank's counted tets, in counted-tet order,
  /// J = det F and the von Mises stress (Pa) at positions x (a ghosted node vector, m).
  void TetDiagnostics(Vec x, std::vector<double>* J, std::vector<double>* von_mises) const;

 private:
  void SetUpElements();
  void SetUpDirichlet();

  ModelConfig scene_;
  FrictionConfig friction_;
  SelfContactConfig self_contact_;
  TimeFunction gravity_tau_;
  DistributedTetMesh mesh_;
  std::vector<std::unique_ptr<ElasticMaterial>> materials_;  // per body
  std::vector<Eigen::Matrix<double, 3, 4>> beta_;
  std::vector<double> V0_;
  std::vector<double> mass_;
  std::vector<int> dirichlet_;
  std::vector<char> constrained_local_;
  std::vector<ScriptedMotion> motions_;
  std::vector<CollisionObject> collision_objects_;
  PetscInt n_constrained_global_ = 0;
  double total_mass_ = 0.0;
  std::vector<PetscInt> ghost_nodes_;
  OwnedLocalToGlobalMapping l2g_;
};

}  // namespace optistep
