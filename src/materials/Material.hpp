#pragma once
// Hyperelastic energy densities Psi(F) with first Piola-Kirchhoff stress and its
// derivative, shared by the FEM and MPM discretizations.
#include <memory>
#include <string>

#include "core/Types.hpp"

namespace optistep {

/// Lame parameters (Pa) from Young's modulus E (Pa) and Poisson's ratio nu (-):
/// mu = E / (2 (1 + nu)), lambda = E nu / ((1 + nu)(1 - 2 nu)).
struct LameParameters {
  double mu = 0.0;
  double lambda = 0.0;
  static LameParameters FromYoungPoisson(double E, double nu);
};

/// An isotropic hyperelastic material. Energy density in J/m^3 (= Pa), F dimensionless.
/// All functions are pure, rank-local and thread-safe.
class ElasticMaterial {
 public:
  virtual ~ElasticMaterial() = default;
  /// Name as used in scene files ("fixed_corotated", "stable_neo_hookean", "linear").
  virtual std::string Name() const = 0;
  /// Psi(F), J/m^3.
  virtual double Psi(const Mat3& F) const = 0;
  /// Psi(F) and P(F) = dPsi/dF (Pa) in one evaluation; returns Psi.
  virtual double PsiAndP(const Mat3& F, Mat3* P) const = 0;
  /// dP/dF (Pa) in the Mat9 convention of core/Types.hpp. With project_spd, the result
  /// is made positive semi-definite by clamping negative eigenvalues to zero in the
  /// SVD eigen-system of the isotropic tangent (Teran, Sifakis, Irving, Fedkiw 2005,
  /// "Robust quasistatic finite elements and flesh simulation", Sec. 5).
  virtual Mat9 dPdF(const Mat3& F, bool project_spd) const = 0;
  const LameParameters& Lame() const { return lame_; }

 protected:
  explicit ElasticMaterial(LameParameters lame) : lame_(lame) {}
  LameParameters lame_;
};

/// Creates a material by its scene-file name. Throws InputError for an unknown name
/// (the message lists the known ones).
std::unique_ptr<ElasticMaterial> MakeMaterial(const std::string& model, LameParameters lame);

}  // namespace optistep
