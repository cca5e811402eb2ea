#pragma once
// Stable Neo-Hookean elasticity: Smith, de Goes, Kim 2018, "Stable Neo-Hookean Flesh
// Simulation", ACM TOG 37(2), the energy with the log(I_C + 1) term and the Lame
// reparametrization of their Sec. 3.4.
#include "materials/Material.hpp"

namespace optistep {

/// With I_C = ||F||_F^2 and J = det F, the paper's energy (Sec. 3, the form that adds
/// -mu'/2 log(I_C + 1) so the rest state is stable) is
///   Psi_SNH(F) = mu'/2 (I_C - 3) + lambda'/2 (J - alpha)^2 - mu'/2 log(I_C + 1),
///   alpha = 1 + mu'/lambda' - mu'/(4 lambda')       (= 1 + 3 mu' / (4 lambda')),
/// and the Lame reparametrization of Sec. 3.4 that matches linear elasticity with the
/// given (mu, lambda) at small strain is
///   mu' = 4/3 mu,   lambda' = lambda + 5/6 mu.
/// Check: P(I) = (3/4 mu' + lambda' (1 - alpha)) I = 0, and
///   dP/dF(I) : dF = 3/4 mu' (dF + dF^T) + (lambda' + mu'/8 - 3/4 mu') tr(dF) I
///                 = mu (dF + dF^T) + lambda tr(dF) I.
/// Psi here is Psi_SNH(F) - Psi_SNH(I), so that Psi(I) = 0; the constant changes no force.
///   P(F) = mu' (1 - 1/(I_C + 1)) F + lambda' (J - alpha) cof(F),
///   dP/dF = mu' (1 - 1/(I_C + 1)) I_9 + 2 mu'/(I_C + 1)^2 f f^T + lambda' g g^T
///           + lambda' (J - alpha) H_J,   f = vec F, g = vec cof(F), H_J = d^2 J / dF^2.
/// dPdF(F, false) evaluates this without an SVD; dPdF(F, true) uses the SVD eigen-system
/// (IsotropicTangent.hpp), whose pair eigenvalues have the closed form
///   stretch_k, twist_k = mu' (1 - 1/(I_C + 1)) -/+ lambda' (J - alpha) sigma_k.
/// Defined for every F (I_C + 1 >= 1), inverted ones included.
class StableNeoHookean final : public ElasticMaterial {
 public:
  static constexpr const char* kName = "stable_neo_hookean";

  explicit StableNeoHookean(LameParameters lame);
  std::string Name() const override { return kName; }
  double Psi(const Mat3& F) const override;
  double PsiAndP(const Mat3& F, Mat3* P) const override;
  Mat9 dPdF(const Mat3& F, bool project_spd) const override;

 private:
  /// Psi_SNH as a function of the invariants, without the rest-state offset.
  double PsiSNH(double I_C, double J) const;

  double mu_snh_;      // mu' (Pa)
  double lambda_snh_;  // lambda' (Pa)
  double alpha_;       // rest volume of the volume term (-)
  double Psi_rest_;    // Psi_SNH(I) (J/m^3)
};

}  // namespace optistep
