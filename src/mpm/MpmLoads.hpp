#pragma once
// Point loads of an MPM scene (the scene's loads of type point; issue 10, item 4): the
// total force F tau(t) (N) split equally over the particles the selection holds at the
// step's start, on their current positions (a box, or the current end of the selected
// bodies along an axis: the loaded end moves with the body), then spread to the grid with
// the particles' weights, f_i = sum_p w_ip f_p (sum_i f_i = F: the weights are a partition
// of unity). The incremental potential takes them as -dt sum_i f_i . dv_i
// (MpmIncrementalPotential::SetNodalForces). No state crosses steps.
#include <vector>

#include "io/SceneConfig.hpp"
#include "mpm/MpmDomain.hpp"

namespace optistep::mpm {

/// Whether the scene has MPM point loads.
bool HasPointLoads(const SceneConfig& scene);

/// Collective: throws InputError (naming loads[i]) when a point load's selection holds no
/// particle (at set-up, before anything is written).
void CheckPointLoads(const SceneConfig& scene, const MpmDomain& domain);

/// Collective (particle counts and axis extents are reduced). After ExchangeHalo and
/// BuildStepGrid: the point loads' nodal forces at time t (s), 3 per local grid node of
/// step (N), summed over this rank's owned and halo particles, in particle order.
/// Throws InputError (naming loads[i]) when a load's selection holds no particle (the
/// selected end can lose its particles to a collision object).
std::vector<double> NodalPointLoads(const SceneConfig& scene, const MpmDomain& domain,
                                    const StepGrid& step, double t);

}  // namespace optistep::mpm
