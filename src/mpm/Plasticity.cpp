#include "mpm/Plasticity.hpp"

#include <cmath>
#include <sstream>

#include "core/Error.hpp"
#include "materials/RotationVariantSVD.hpp"

namespace optistep::mpm {

namespace {

constexpr double kSqrtTwoThirds = 0.81649658092772603;  // sqrt(2/3)

void Require(bool ok, const std::string& where, const char* key, double value,
             const char* expected) {
  if (ok) return;
  std::ostringstream message;
  message.precision(17);
  message << where << ": " << key << " = " << value << ", expected " << expected;
  throw InputError(message.str());
}

/// Along the isochoric path sigma(s) = exp(eps_mean + s n) of VonMisesReturnMapping:
/// g(s) = ||dev(sigma^2 - sigma)|| and dg/ds, with d(sigma_k^2 - sigma_k)/ds =
/// (2 sigma_k - 1) sigma_k n_k. ||dev tau|| = 2 mu g(s).
struct IsochoricPath {
  double eps_mean;
  Vec3 n;

  Vec3 Sigma(double s) const { return (eps_mean + s * n.array()).exp(); }

  double g(double s, double* dg_ds) const {
    const Vec3 sigma = Sigma(s);
    const Vec3 q = sigma.array() * (sigma.array() - 1.0);
    const Vec3 dev_q = q.array() - q.mean();
    const double norm = dev_q.norm();
    const Vec3 dq_ds = (2.0 * sigma.array() - 1.0) * sigma.array() * n.array();
    *dg_ds = norm > 0.0 ? dev_q.dot(dq_ds) / norm : 0.0;
    return norm;
  }
};

/// The s in [0, s_max] with path.g(s) = target, given g(0) = 0 < target < g(s_max):
/// Newton's method, falling back to bisection of the bracketing interval whenever a step
/// leaves it; stops at round-off.
double SolveOnPath(const IsochoricPath& path, double s_max, double g_max, double target) {
  double lo = 0.0, hi = s_max;
  double s = s_max * target / g_max;  // g is close to linear in s for moderate strains
  for (int iteration = 0; iteration < 100; ++iteration) {
    double dg_ds;
    const double residual = path.g(s, &dg_ds) - target;
    if (residual == 0.0) return s;
    (residual > 0.0 ? hi : lo) = s;
    double next = dg_ds > 0.0 ? s - residual / dg_ds : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (next == s || hi - lo <= 1e-16 * s_max) return next;
    s = next;
  }
  return s;
}

}  // namespace

PlasticityModel PlasticityModelFromName(const std::string& name) {
  if (name == "none") return PlasticityModel::kNone;
  if (name == "snow") return PlasticityModel::kSnow;
  if (name == "von_mises") return PlasticityModel::kVonMises;
  throw InputError("unknown plasticity model '" + name + "'; known models: none, snow, von_mises");
}

void PlasticityParameters::Validate(const std::string& where) const {
  if (model == PlasticityModel::kSnow) {
    Require(theta_c > 0.0 && theta_c < 1.0, where, "theta_c", theta_c, "0 < theta_c < 1");
    Require(theta_s >= 0.0 && std::isfinite(theta_s), where, "theta_s", theta_s,
            "a finite theta_s >= 0");
    Require(xi >= 0.0 && std::isfinite(xi), where, "xi", xi, "a finite xi >= 0");
  } else if (model == PlasticityModel::kVonMises) {
    Require(tau_Y > 0.0 && std::isfinite(tau_Y), where, "tau_Y", tau_Y,
            "a positive finite yield stress in Pa");
  }
}

double SnowHardening(double Jp, double xi) { return std::exp(xi * (1.0 - Jp)); }

LameParameters HardenedLame(const LameParameters& lame0, double Jp, double xi) {
  const double h = SnowHardening(Jp, xi);
  LameParameters lame;
  lame.mu = h * lame0.mu;
  lame.lambda = h * lame0.lambda;
  return lame;
}

Mat3 SnowReturnMapping(const Mat3& F_trial, double theta_c, double theta_s, PlasticState* state) {
  const RotationVariantSVD svd = ComputeRotationVariantSVD(F_trial);
  const Vec3 sigma_hat = svd.sigma.cwiseMax(1.0 - theta_c).cwiseMin(1.0 + theta_s);
  if (sigma_hat == svd.sigma) return F_trial;
  state->Jp *= svd.sigma.prod() / sigma_hat.prod();
  return svd.U * sigma_hat.asDiagonal() * svd.V.transpose();
}

Mat3 VonMisesReturnMapping(const Mat3& F_trial, double mu, double tau_Y, PlasticState* state) {
  const RotationVariantSVD svd = ComputeRotationVariantSVD(F_trial);
  const Vec3 eps = svd.sigma.cwiseMax(kMinStretch).array().log();
  const Vec3 eps_hat = eps.array() - eps.mean();
  const double s_trial = eps_hat.norm();
  if (s_trial == 0.0) return F_trial;
  const IsochoricPath path{eps.mean(), eps_hat / s_trial};
  // ||dev tau|| <= sqrt(2/3) tau_Y  <=>  g <= sqrt(2/3) tau_Y / (2 mu).
  const double target = kSqrtTwoThirds * tau_Y / (2.0 * mu);
  double unused;
  const double g_trial = path.g(s_trial, &unused);
  if (g_trial <= target) return F_trial;
  const double s = SolveOnPath(path, s_trial, g_trial, target);
  state->plastic_strain += kSqrtTwoThirds * (s_trial - s);
  return svd.U * path.Sigma(s).asDiagonal() * svd.V.transpose();
}

Mat3 ReturnMapping(const PlasticityParameters& parameters, const LameParameters& lame0,
                   const Mat3& F_trial, PlasticState* state) {
  switch (parameters.model) {
    case PlasticityModel::kSnow:
      return SnowReturnMapping(F_trial, parameters.theta_c, parameters.theta_s, state);
    case PlasticityModel::kVonMises:
      return VonMisesReturnMapping(F_trial, lame0.mu, parameters.tau_Y, state);
    case PlasticityModel::kNone:
      break;
  }
  return F_trial;
}

void ApplyReturnMapping(const MaterialTable& materials,
                        const std::vector<PlasticityParameters>& plasticity, Particles* particles) {
  for (std::size_t p = 0; p < particles->size(); ++p) {
    const int m = particles->material[p];
    particles->F[p] =
        ReturnMapping(plasticity[m], materials[m]->Lame(), particles->F[p], &particles->plastic[p]);
  }
}

}  // namespace optistep::mpm
