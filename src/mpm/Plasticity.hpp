#pragma once
// Plasticity return mappings of MPM, applied per particle after the implicit solve, to
// the trial elastic deformation gradient F_E^trial = (I + dt grad v) F_E^n (the plastic
// part stays fixed during the solve: lagged plasticity, as in Gast et al. 2015, Sec. 6 and
// HOT, Wang et al. 2020, Sec. 3.1). Each return mapping works on the rotation-variant SVD
// F_E^trial = U diag(sigma) V^T (materials/IsotropicTangent.hpp), returns the new elastic F
// and updates the particle's PlasticState.
#include <string>
#include <vector>

#include "core/Types.hpp"
#include "materials/Material.hpp"
#include "mpm/Particles.hpp"

namespace optistep::mpm {

enum class PlasticityModel { kNone, kSnow, kVonMises };

/// The model of a scene-file name: "none", "snow", "von_mises". Throws InputError naming
/// the known names otherwise.
PlasticityModel PlasticityModelFromName(const std::string& name);

/// Parameters of one material's plasticity. Defaults of the snow model are the reference
/// values of Stomakhin et al. 2013, "A material point method for snow simulation", Table 2.
struct PlasticityParameters {
  PlasticityModel model = PlasticityModel::kNone;
  double theta_c = 2.5e-2;  ///< snow: critical compression (-)
  double theta_s = 7.5e-3;  ///< snow: critical stretch (-)
  double xi = 10.0;         ///< snow: hardening coefficient (-)
  double tau_Y = 0.0;       ///< von Mises: yield stress (Pa), no default: the scene gives it

  /// Throws InputError "<where>: <key> = <value>, expected ..." unless the parameters the
  /// model uses are valid: 0 < theta_c < 1, 0 <= theta_s, 0 <= xi (snow); 0 < tau_Y
  /// (von Mises); all finite.
  void Validate(const std::string& where) const;
};

/// Snow hardening factor exp(xi (1 - J_P)) (-) (Stomakhin et al. 2013, Sec. 5).
double SnowHardening(double Jp, double xi);

/// The hardened Lame parameters mu = mu0 exp(xi (1 - J_P)), lambda = lambda0 exp(xi (1 - J_P))
/// (Pa) (Stomakhin et al. 2013, Sec. 5). Both scale by the same factor, so for
/// fixed_corotated Psi_hardened(F) = SnowHardening(Jp, xi) Psi(F) and P likewise.
LameParameters HardenedLame(const LameParameters& lame0, double Jp, double xi);

/// Snow (Stomakhin et al. 2013, Sec. 5): sigma_hat = clamp(sigma, 1 - theta_c, 1 + theta_s),
/// F_E = U diag(sigma_hat) V^T; F_P absorbs the rest, F_P^{n+1} = F_E^{-1} F, so
///   J_P^{n+1} = J_P^n det(F_E^trial) / det(F_E)
/// and J_P J_E = J is unchanged. Returns F_trial itself (bitwise) when nothing is clamped.
/// An inverted F_trial (sigma_2 < 0) is clamped to a non-inverted F_E and gets J_P < 0.
Mat3 SnowReturnMapping(const Mat3& F_trial, double theta_c, double theta_s, PlasticState* state);

/// Von Mises (J2) plasticity for fixed_corotated, in Hencky strain space (the return
/// mapping in principal logarithmic strains of Klar, Gast, Pradhana, Fu, Schroeder, Jiang,
/// Teran 2016, "Drucker-Prager elastoplasticity for sand animation", here with the
/// von Mises yield surface ||dev tau|| <= sqrt(2/3) tau_Y of J2 plasticity, Simo and
/// Hughes 1998, "Computational inelasticity", Ch. 3; perfect plasticity, no hardening).
/// With eps = log(sigma) (sigma floored at kMinStretch), eps_hat = dev eps and
/// n = eps_hat / ||eps_hat||, the plastic flow is isochoric and along n:
///   sigma(s) = exp(tr(eps)/3 + s n),   s in [0, ||eps_hat||].
/// The principal Kirchhoff stress of fixed_corotated is tau_k = 2 mu (sigma_k - 1) sigma_k +
/// lambda (J - 1) J; J is constant along the path, so ||dev tau|| = 2 mu ||dev(sigma^2 -
/// sigma)|| does not involve lambda. If ||dev tau|| <= sqrt(2/3) tau_Y at s = ||eps_hat||,
/// F_trial is returned as is; otherwise s* solves ||dev tau(sigma(s*))|| = sqrt(2/3) tau_Y
/// (safeguarded Newton on [0, ||eps_hat||], to round-off), F_E = U diag(sigma(s*)) V^T, and
/// the equivalent plastic strain grows by sqrt(2/3) (||eps_hat|| - s*), the norm of the
/// plastic log-strain increment times sqrt(2/3) (equal to the axial plastic strain in a
/// uniaxial test). mu in Pa, tau_Y in Pa.
Mat3 VonMisesReturnMapping(const Mat3& F_trial, double mu, double tau_Y, PlasticState* state);

/// Floor of the singular values whose logarithm the von Mises return mapping takes (-):
/// log strain is undefined for inverted or collapsed F.
inline constexpr double kMinStretch = 1e-4;

/// Dispatch on parameters.model; kNone returns F_trial. lame0: the material's Lame
/// parameters (Pa).
Mat3 ReturnMapping(const PlasticityParameters& parameters, const LameParameters& lame0,
                   const Mat3& F_trial, PlasticState* state);

/// particles->F[p] = ReturnMapping(plasticity[m], materials[m]->Lame(), F[p], plastic[p])
/// with m = particles->material[p], after UpdateDeformationGradients. Particle loop.
void ApplyReturnMapping(const MaterialTable& materials,
                        const std::vector<PlasticityParameters>& plasticity, Particles* particles);

}  // namespace optistep::mpm
