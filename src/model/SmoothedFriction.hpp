#pragma once
// Coulomb friction of one contact, both ways the code applies it: IPC's smoothed term
// (Li et al. 2020, "Incremental Potential Contact", Sec. 5, eq. 14-15), shared by the FEM
// friction potential (fem/FrictionPotential) and the MPM grid's
// (mpm/MpmIncrementalPotential), and the bound after the solve (Gast et al. 2015 Secs.
// 5.1-5.2), shared by FEM (integrators/FemBackwardEuler) and MPM's slip nodes.
#include <algorithm>

#include "core/Types.hpp"

namespace optistep {

/// Friction after the solve (Gast et al. 2015 Sec. 5.2; Sec. 5.1 with a constraint's
/// impulse): the fraction of a contact's tangential momentum p_t = m |v_t| (kg m/s, > 0;
/// per unit mass: |v_t| in m/s) that friction takes away when it may take at most the
/// impulse `bound` (mu times the normal impulse, same units): min(1, bound / p_t). At 1
/// the sliding stops; it never reverses.
inline double CoulombStoppedFraction(double bound, double momentum) { return std::min(1.0, bound / momentum); }

/// The term D = scale f_0(|u|) of a tangential relative motion u (T u = u, T = I - n n^T
/// the tangent projection), with f_0 IPC's C^1 mollifier of width e (in u's units):
///   f_0(y) = -y^3 / (3 e^2) + y^2 / e + e / 3 for y < e, y otherwise (eq. 14-15).
/// FEM: u a displacement over the step (m), e = eps_v h, scale = mu lambda (N): D in J.
/// MPM: u a velocity (m/s), e = eps_v, scale = mu times the normal impulse (kg m/s): D in J.
/// Adds dD/du = scale f_1(y) u / y to *gradient and the Hessian
/// scale [f_2 s s^T + f_1 / y (T - s s^T)] (s = u / y; positive semidefinite, both
/// eigenvalues >= 0 for this f_0) to *hessian, each when non-null.
double SmoothedFriction(double scale, const Vec3& u, const Mat3& T, double e, Vec3* gradient,
                        Mat3* hessian);

}  // namespace optistep
