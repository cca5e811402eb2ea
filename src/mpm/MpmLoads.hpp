#pragma once
// Loads on MPM particles: point loads, and the dead tractions and
// pressures of TractionParticleForces below. Point loads (the scene's loads of type point): the
// total force F tau(t) (N) split equally over the particles the selection holds at the
// step's start, on their current positions (a box, or the current end of the selected
// bodies along an axis: the loaded end moves with the body), then spread to the grid with
// the particles' weights, f_i = sum_p w_ip f_p (sum_i f_i = F: the weights are a partition
// of unity). The incremental potential takes them as -dt sum_i f_i . dv_i
// (MpmIncrementalPotential::SetNodalForces). No state crosses steps (the tractions' particle
// forces are a function of the scene, rebuilt at set-up, also before a restart loads its state).
#include <array>
#include <vector>

#include "io/SceneSections.hpp"
#include "mpm/MpmDomain.hpp"
#include "mpm/MpmModel.hpp"

namespace optistep::mpm {

/// Whether the scene has MPM point loads.
bool HasPointLoads(const ModelConfig& scene);

/// Collective: throws InputError (naming loads[i]) when a point load's selection holds no
/// particle (at set-up, before anything is written).
void CheckPointLoads(const ModelConfig& scene, const MpmDomain& domain);

/// Collective (particle counts and axis extents are reduced). After ExchangeHalo and
/// BuildStepGrid: the point loads' nodal forces at time t (s), 3 per local grid node of
/// step (N), summed over this rank's owned and halo particles, in particle order.
/// Throws InputError (naming loads[i]) when a load's selection holds no particle (the
/// selected end can lose its particles to a collision object).
std::vector<double> NodalPointLoads(const ModelConfig& scene, const MpmDomain& domain,
                                    const StepGrid& step, double t);

/// Whether the scene has MPM tractions or pressures.
bool HasTractionLoads(const ModelConfig& scene);

/// A body's rest boundary as triangles (m, world frame), corners ordered so that
/// (b - a) x (c - a) points out of the body.
using BoundaryTriangles = std::vector<std::array<Vec3, 3>>;

/// Rank-local, pure function of its arguments (rank 0 calls it on the whole sample, so
/// the result does not depend on the rank count). Dead tractions and pressures of the
/// scene's loads on MPM particles, in rest area (docs/methods/loads.md):
///  - the loaded surface of load i is the boundary triangles of the selected bodies whose
///    three corners the selection holds (the FEM rule for faces; an axis end is measured
///    on the triangles' corners); its rest area A = sum A_T;
///  - triangle T carries F_T = t A_T (traction t, Pa) or -p n_T A_T (pressure p, Pa, n_T
///    its outward unit normal), split in equal shares (by volume: every particle has V0 =
///    dx^3 / ppc) over the body's particles whose rest position lies within one particle
///    spacing h = dx / ppc^(1/3) of T; when none does (random sampling leaves a gap), the
///    nearest particle takes it all. So sum_p F_p = sum_T F_T exactly (t A for a
///    traction), and the load stays on the particles that represent the loaded surface.
/// boundary[b], X[b], id[b]: body b's boundary triangles, its particles' rest positions
/// (m) and global ids. Returns the forces per unit time function, sorted by (id, load).
/// Throws InputError naming loads[i] when a selection holds no boundary triangle, or the
/// bodies it selects have no boundary triangles (boundary[b] empty: a primitive without
/// a triangulation).
std::vector<ParticleForce> TractionParticleForces(const ModelConfig& scene,
                                                  const std::vector<BoundaryTriangles>& boundary,
                                                  const std::vector<std::vector<Vec3>>& X,
                                                  const std::vector<std::vector<std::int64_t>>& id,
                                                  double h);

/// Not collective. After ExchangeHalo and BuildStepGrid: adds the particle forces
/// (sorted by (id, load)) times their loads' time functions at t (s) to f (N, 3 per local
/// grid node of step), spread with the particles' weights, f_i += sum_p w_ip tau(t) F_p,
/// over this rank's owned and halo particles in particle order.
void AddNodalParticleForces(const ModelConfig& scene, const std::vector<ParticleForce>& forces,
                            const MpmDomain& domain, const StepGrid& step, double t,
                            std::vector<double>* f);

}  // namespace optistep::mpm
