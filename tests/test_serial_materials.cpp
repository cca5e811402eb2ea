// Serial tests of the hyperelastic materials (src/materials/). The reference numbers come
// from elsewhere: central finite differences of Psi and P, the hand-built linear isotropic
// elasticity tensor, the Lame formulas evaluated by hand, and eigenvalues of dP/dF.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/Error.hpp"
#include "materials/Material.hpp"

namespace optistep {
namespace {

// Rubber-like, as in the scenes: E = 1e5 Pa, nu = 0.4.
const LameParameters kLame = LameParameters::FromYoungPoisson(1e5, 0.4);
// Stiffness scale for absolute tolerances on P (Pa) and dP/dF (Pa).
const double kStiffness = kLame.mu + kLame.lambda;

Mat3 RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  return Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng))
      .normalized()
      .toRotationMatrix();
}

// Q1 diag(sigma) Q2^T with random rotations Q1, Q2: a deformation gradient with the given
// (signed) singular values.
Mat3 WithSingularValues(const Vec3& sigma, std::mt19937& rng) {
  return RandomRotation(rng) * sigma.asDiagonal() * RandomRotation(rng).transpose();
}

// Moderate stretches, det > 0: random singular values in [0.7, 1.4] and two with repeated
// singular values, where the pair quotients of the SVD eigen-system are 0/0.
std::vector<Mat3> ModerateF(std::mt19937& rng) {
  std::uniform_real_distribution<double> stretch(0.7, 1.4);
  std::vector<Mat3> Fs;
  for (int n = 0; n < 8; ++n)
    Fs.push_back(WithSingularValues(Vec3(stretch(rng), stretch(rng), stretch(rng)), rng));
  Fs.push_back(WithSingularValues(Vec3(1.2, 1.2, 0.8), rng));
  Fs.push_back(WithSingularValues(Vec3(0.9, 0.9, 0.9), rng));
  return Fs;
}

// Inverted elements (det < 0), away from sigma_i + sigma_j = 0.
std::vector<Mat3> InvertedF(std::mt19937& rng) {
  return {WithSingularValues(Vec3(1.3, 0.9, -0.6), rng),
          WithSingularValues(Vec3(1.1, 0.8, -0.3), rng)};
}

// dP_ij/dF_kl = mu (delta_ik delta_jl + delta_il delta_jk) + lambda delta_ij delta_kl.
Mat9 LinearIsotropicTensor(double mu, double lambda) {
  Mat9 C;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k)
        for (int l = 0; l < 3; ++l)
          C(i + 3 * j, k + 3 * l) = mu * ((i == k) * (j == l) + (i == l) * (j == k)) +
                                    lambda * (i == j) * (k == l);
  return C;
}

Eigen::Matrix<double, 9, 1> Eigenvalues(const Mat9& H) {
  return Eigen::SelfAdjointEigenSolver<Mat9>(H, Eigen::EigenvaluesOnly).eigenvalues();
}

// True if the smallest eigenvalue is >= -1e-9 times the largest magnitude.
bool IsPSD(const Mat9& H) {
  const auto ev = Eigenvalues(H);
  return ev.minCoeff() >= -1e-9 * ev.cwiseAbs().maxCoeff();
}

Mat3 StressOf(const ElasticMaterial& material, const Mat3& F) {
  Mat3 P;
  material.PsiAndP(F, &P);
  return P;
}

constexpr double kStep = 1e-6;  // finite-difference step in F (dimensionless)

void ExpectStressIsEnergyGradient(const ElasticMaterial& material, const Mat3& F) {
  Mat3 P;
  const double Psi = material.PsiAndP(F, &P);
  EXPECT_NEAR(Psi, material.Psi(F), 1e-10 * kStiffness) << "F =\n" << F;
  Mat3 P_fd;
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 3; ++l) {
      Mat3 dF = Mat3::Zero();
      dF(k, l) = kStep;
      P_fd(k, l) = (material.Psi(F + dF) - material.Psi(F - dF)) / (2.0 * kStep);
    }
  EXPECT_LE((P_fd - P).cwiseAbs().maxCoeff(), 1e-7 * kStiffness) << "F =\n" << F;
}

void ExpectTangentIsStressGradient(const ElasticMaterial& material, const Mat3& F) {
  const Mat9 dPdF = material.dPdF(F, false);
  Mat9 dPdF_fd;
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 3; ++l) {
      Mat3 dF = Mat3::Zero();
      dF(k, l) = kStep;
      const Mat3 dP = (StressOf(material, F + dF) - StressOf(material, F - dF)) / (2.0 * kStep);
      dPdF_fd.col(k + 3 * l) = Eigen::Map<const Vec9>(dP.data());
    }
  EXPECT_LE((dPdF_fd - dPdF).cwiseAbs().maxCoeff(), 1e-7 * kStiffness) << "F =\n" << F;
  EXPECT_LE((dPdF - dPdF.transpose()).cwiseAbs().maxCoeff(), 1e-10 * kStiffness);
}

// --- every model ------------------------------------------------------------------------

class AllMaterials : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<ElasticMaterial> material_ = MakeMaterial(GetParam(), kLame);
};

TEST_P(AllMaterials, NameAndLameRoundTrip) {
  EXPECT_EQ(material_->Name(), GetParam());
  EXPECT_EQ(material_->Lame().mu, kLame.mu);
  EXPECT_EQ(material_->Lame().lambda, kLame.lambda);
}

TEST_P(AllMaterials, StressIsFiniteDifferenceOfEnergy) {
  std::mt19937 rng(20240611);
  for (const Mat3& F : ModerateF(rng)) ExpectStressIsEnergyGradient(*material_, F);
}

TEST_P(AllMaterials, TangentIsFiniteDifferenceOfStress) {
  std::mt19937 rng(7);
  for (const Mat3& F : ModerateF(rng)) ExpectTangentIsStressGradient(*material_, F);
}

TEST_P(AllMaterials, RestStateHasNoEnergyNorStress) {
  const Mat3 I = Mat3::Identity();
  Mat3 P;
  EXPECT_NEAR(material_->PsiAndP(I, &P), 0.0, 1e-12 * kStiffness);
  EXPECT_NEAR(material_->Psi(I), 0.0, 1e-12 * kStiffness);
  EXPECT_LE(P.cwiseAbs().maxCoeff(), 1e-12 * kStiffness) << "P(I) =\n" << P;
}

TEST_P(AllMaterials, RestTangentIsLinearIsotropicElasticity) {
  const Mat9 C = LinearIsotropicTensor(kLame.mu, kLame.lambda);
  for (bool project_spd : {false, true}) {
    const Mat9 dPdF = material_->dPdF(Mat3::Identity(), project_spd);
    EXPECT_LE((dPdF - C).cwiseAbs().maxCoeff(), 1e-10 * kStiffness)
        << "project_spd = " << project_spd << ", dPdF(I) =\n" << dPdF;
  }
}

TEST_P(AllMaterials, ProjectionKeepsTangentThatIsAlreadyPSD) {
  std::mt19937 rng(3);
  const Mat3 F = WithSingularValues(Vec3(1.05, 1.03, 1.01), rng);
  const Mat9 dPdF = material_->dPdF(F, false);
  ASSERT_TRUE(IsPSD(dPdF)) << "choose an F where the tangent is PSD; eigenvalues "
                           << Eigenvalues(dPdF).transpose();
  EXPECT_LE((material_->dPdF(F, true) - dPdF).cwiseAbs().maxCoeff(), 1e-8 * kStiffness);
}

INSTANTIATE_TEST_SUITE_P(Materials, AllMaterials,
                         ::testing::Values("fixed_corotated", "stable_neo_hookean", "linear"));

// --- the finite-strain models -----------------------------------------------------------

class HyperelasticMaterials : public AllMaterials {};

TEST_P(HyperelasticMaterials, DerivativesMatchFiniteDifferencesAtInvertedF) {
  std::mt19937 rng(11);
  for (const Mat3& F : InvertedF(rng)) {
    ASSERT_LT(F.determinant(), 0.0);
    ExpectStressIsEnergyGradient(*material_, F);
    ExpectTangentIsStressGradient(*material_, F);
  }
}

TEST_P(HyperelasticMaterials, ProjectionMakesIndefiniteTangentPSD) {
  std::mt19937 rng(5);
  const std::vector<Mat3> Fs = {WithSingularValues(Vec3(0.5, 0.4, 0.3), rng),   // compressed
                                WithSingularValues(Vec3(1.0, 0.6, -0.4), rng),   // inverted
                                WithSingularValues(Vec3(1.2, 0.7, -0.9), rng)};  // inverted
  for (const Mat3& F : Fs) {
    const auto ev = Eigenvalues(material_->dPdF(F, false));
    EXPECT_LT(ev.minCoeff(), -1e-3 * ev.cwiseAbs().maxCoeff())
        << "the tangent should be indefinite here; eigenvalues " << ev.transpose();
    const Mat9 projected = material_->dPdF(F, true);
    EXPECT_TRUE(IsPSD(projected)) << "eigenvalues " << Eigenvalues(projected).transpose();
  }
}

// F = 0 (a collapsed element) and, for fixed_corotated, sigma_1 + sigma_2 = 0, where the
// polar decomposition is not unique: the projected tangent must stay finite and PSD.
TEST_P(HyperelasticMaterials, ProjectedTangentIsFiniteAndPSDAtDegenerateF) {
  std::mt19937 rng(13);
  for (const Mat3& F : {Mat3(Mat3::Zero()), WithSingularValues(Vec3(1.0, 0.5, -0.5), rng)}) {
    const Mat9 projected = material_->dPdF(F, true);
    ASSERT_TRUE(projected.allFinite()) << "F =\n" << F;
    EXPECT_TRUE(IsPSD(projected)) << "eigenvalues " << Eigenvalues(projected).transpose();
  }
}

TEST_P(HyperelasticMaterials, EnergyAndStressAreRotationInvariant) {
  std::mt19937 rng(17);
  std::vector<Mat3> Fs = ModerateF(rng);
  for (const Mat3& F : InvertedF(rng)) Fs.push_back(F);
  for (const Mat3& F : Fs) {
    const Mat3 Q = RandomRotation(rng);
    Mat3 P, P_rotated;
    const double Psi = material_->PsiAndP(F, &P);
    EXPECT_NEAR(material_->PsiAndP(Q * F, &P_rotated), Psi, 1e-10 * kStiffness);
    EXPECT_NEAR(material_->Psi(Q * F), Psi, 1e-10 * kStiffness);
    EXPECT_LE((P_rotated - Q * P).cwiseAbs().maxCoeff(), 1e-10 * kStiffness);
  }
}

INSTANTIATE_TEST_SUITE_P(Materials, HyperelasticMaterials,
                         ::testing::Values("fixed_corotated", "stable_neo_hookean"));

// --- construction -----------------------------------------------------------------------

TEST(LameParameters, FromYoungPoisson) {
  // mu = 1e5 / 2.8, lambda = 1e5 * 0.4 / (1.4 * 0.2).
  EXPECT_NEAR(kLame.mu, 35714.285714285714, 1e-8);
  EXPECT_NEAR(kLame.lambda, 142857.14285714286, 1e-8);
}

TEST(MakeMaterial, UnknownNameThrowsInputErrorListingKnownNames) {
  try {
    MakeMaterial("nonsense", kLame);
    FAIL() << "MakeMaterial(\"nonsense\") did not throw";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nonsense"), std::string::npos) << what;
    for (const char* name : {"fixed_corotated", "stable_neo_hookean", "linear"})
      EXPECT_NE(what.find(name), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace optistep
