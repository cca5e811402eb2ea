// Serial tests of the 3x3 rotation-variant SVD of the materials (materials/RotationVariantSVD).
// The references come from elsewhere: F built as Q1 diag(sigma) Q2^T from known signed
// singular values and rotations, and Eigen::JacobiSVD with the reflection moved into
// sigma_2 (Irving, Teran, Fedkiw 2004, Sec. 5), the kernel the materials used before.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "materials/RotationVariantSVD.hpp"

namespace optistep {
namespace {

Mat3 RandomRotation(std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  return Eigen::Quaterniond(normal(rng), normal(rng), normal(rng), normal(rng))
      .normalized()
      .toRotationMatrix();
}

struct Case {
  std::string name;
  Mat3 F;
};

// Q1 diag(sigma) Q2^T with random rotations Q1, Q2.
Mat3 WithSingularValues(const Vec3& sigma, std::mt19937& rng) {
  return RandomRotation(rng) * sigma.asDiagonal() * RandomRotation(rng).transpose();
}

// The previous kernel: JacobiSVD, then a reflection in U or V moved into sigma_2.
RotationVariantSVD JacobiReference(const Mat3& F) {
  const Eigen::JacobiSVD<Mat3> svd(F, Eigen::ComputeFullU | Eigen::ComputeFullV);
  RotationVariantSVD r{svd.matrixU(), svd.singularValues(), svd.matrixV()};
  if (r.U.determinant() < 0.0) {
    r.U.col(2) *= -1.0;
    r.sigma(2) *= -1.0;
  }
  if (r.V.determinant() < 0.0) {
    r.V.col(2) *= -1.0;
    r.sigma(2) *= -1.0;
  }
  return r;
}

// Every kind of F the elements and particles meet, 200 of each random kind.
std::vector<Case> AllCases() {
  std::mt19937 rng(29);
  std::uniform_real_distribution<double> entry(-1.0, 1.0), stretch(0.3, 2.0), decade(-6.0, 0.0);
  std::vector<Case> cases;
  for (int n = 0; n < 200; ++n) {
    Mat3 F;
    for (int i = 0; i < 9; ++i) F(i) = entry(rng);
    cases.push_back({"random entries", F});
    Mat3 G = Mat3::Identity();
    for (int i = 0; i < 9; ++i) G(i) += 0.05 * entry(rng);
    cases.push_back({"near identity", RandomRotation(rng) * G});
    cases.push_back(
        {"stretch", WithSingularValues(Vec3(stretch(rng), stretch(rng), stretch(rng)), rng)});
    cases.push_back(
        {"inverted", WithSingularValues(Vec3(stretch(rng), stretch(rng), -stretch(rng)), rng)});
    cases.push_back({"rotation", RandomRotation(rng)});
    cases.push_back({"scaled rotation", stretch(rng) * RandomRotation(rng)});
    const double a = stretch(rng);
    cases.push_back({"two equal", WithSingularValues(Vec3(a, a, stretch(rng)), rng)});
    cases.push_back({"two equal, inverted", WithSingularValues(Vec3(a, a, -stretch(rng)), rng)});
    cases.push_back(
        {"two equal to 1e-9", WithSingularValues(Vec3(a, a * (1.0 + 1e-9), 0.5 * a), rng)});
    cases.push_back({"ill-conditioned", WithSingularValues(Vec3(1.0, std::pow(10.0, decade(rng)),
                                                                -std::pow(10.0, decade(rng))),
                                                           rng)});
    cases.push_back({"two tiny, nearly equal", WithSingularValues(Vec3(1.0, 1e-7, 1.001e-7), rng)});
    cases.push_back({"flat, inverted", WithSingularValues(Vec3(1.0, 1.0, -1e-3), rng)});
    const Vec3 u = Vec3::Random(), v = Vec3::Random();
    cases.push_back({"rank 1", u * v.transpose()});
    cases.push_back({"rank 2", WithSingularValues(Vec3(stretch(rng), stretch(rng), 0.0), rng)});
    cases.push_back({"tiny (1e-150)", 1e-150 * WithSingularValues(Vec3(1.5, 0.7, -0.4), rng)});
    cases.push_back({"huge (1e150)", 1e150 * WithSingularValues(Vec3(1.5, 0.7, -0.4), rng)});
  }
  cases.push_back({"identity", Mat3::Identity()});
  cases.push_back({"minus identity", -Mat3::Identity()});
  cases.push_back({"diagonal reflection", Vec3(1.0, 1.0, -1.0).asDiagonal().toDenseMatrix()});
  cases.push_back({"zero", Mat3::Zero()});
  return cases;
}

double OrthogonalityError(const Mat3& Q) {
  return (Q.transpose() * Q - Mat3::Identity()).cwiseAbs().maxCoeff();
}

TEST(RotationVariantSVD, ReconstructsFWithOrthonormalFactors) {
  for (const Case& c : AllCases()) {
    const RotationVariantSVD svd = ComputeRotationVariantSVD(c.F);
    const double scale = std::max(c.F.cwiseAbs().maxCoeff(), 1e-300);
    const Mat3 USVt = svd.U * svd.sigma.asDiagonal() * svd.V.transpose();
    EXPECT_LE((USVt - c.F).cwiseAbs().maxCoeff(), 1e-14 * scale) << c.name << ", F =\n" << c.F;
    EXPECT_LE(OrthogonalityError(svd.U), 1e-14) << c.name;
    EXPECT_LE(OrthogonalityError(svd.V), 1e-14) << c.name;
  }
}

// sigma_0 >= sigma_1 >= |sigma_2| exactly, sigma_0, sigma_1 >= 0, det U = det V = +1, and
// sigma_2 < 0 exactly when det F < 0 (where det F is not round-off).
TEST(RotationVariantSVD, KeepsTheRotationVariantConvention) {
  for (const Case& c : AllCases()) {
    const RotationVariantSVD svd = ComputeRotationVariantSVD(c.F);
    const Vec3& s = svd.sigma;
    EXPECT_GE(s(0), s(1)) << c.name;
    EXPECT_GE(s(1), std::abs(s(2))) << c.name;
    EXPECT_GE(s(1), 0.0) << c.name;
    EXPECT_NEAR(svd.U.determinant(), 1.0, 1e-14) << c.name;
    EXPECT_NEAR(svd.V.determinant(), 1.0, 1e-14) << c.name;
    const double det = c.F.determinant();
    if (std::abs(det) > 1e-10 * std::pow(s(0), 3)) {
      EXPECT_EQ(s(2) < 0.0, det < 0.0)
          << c.name << ": sigma " << s.transpose() << ", det F " << det;
    }
  }
}

// Inverted F with distinct singular values: sigma is the signed (1.3, 0.9, -0.6), and
// R = U V^T is Q1 Q2^T, the rotation the elasticity models take as F's rotation. A kernel
// that returned sigma_2 > 0 with an improper U or V (the ordinary SVD) fails here.
TEST(RotationVariantSVD, InvertedElementCarriesTheReflectionInSigma2) {
  std::mt19937 rng(31);
  for (int n = 0; n < 50; ++n) {
    const Mat3 Q1 = RandomRotation(rng), Q2 = RandomRotation(rng);
    const Vec3 sigma(1.3, 0.9, -0.6);
    const Mat3 F = Q1 * sigma.asDiagonal() * Q2.transpose();
    const RotationVariantSVD svd = ComputeRotationVariantSVD(F);
    EXPECT_LE((svd.sigma - sigma).cwiseAbs().maxCoeff(), 1e-14) << svd.sigma.transpose();
    EXPECT_LE((svd.U * svd.V.transpose() - Q1 * Q2.transpose()).cwiseAbs().maxCoeff(), 1e-13);
    EXPECT_LE((RotationVariantSingularValues(F) - sigma).cwiseAbs().maxCoeff(), 1e-14);
  }
}

TEST(RotationVariantSVD, MatchesJacobiSVD) {
  for (const Case& c : AllCases()) {
    const RotationVariantSVD svd = ComputeRotationVariantSVD(c.F);
    const RotationVariantSVD reference = JacobiReference(c.F);
    const double sigma_0 = reference.sigma(0);
    const Vec3 difference = svd.sigma - reference.sigma;
    // sigma_2's sign is round-off where F is singular.
    const double d2 = c.F.determinant() == 0.0 || c.name.rfind("rank", 0) == 0
                          ? std::abs(svd.sigma(2)) - std::abs(reference.sigma(2))
                          : difference(2);
    EXPECT_LE(std::max(difference.head<2>().cwiseAbs().maxCoeff(), std::abs(d2)), 1e-14 * sigma_0)
        << c.name << ": " << svd.sigma.transpose() << " against " << reference.sigma.transpose();
    // Relative to each singular value where F is well-conditioned (sigma_0 / |sigma_2| < 100).
    if (std::abs(reference.sigma(2)) > 1e-2 * sigma_0) {
      for (int i = 0; i < 3; ++i)
        EXPECT_NEAR(svd.sigma(i), reference.sigma(i), 1e-13 * std::abs(reference.sigma(i)))
            << c.name << ", i = " << i;
      // Distinct singular values fix the rotation R = U V^T.
      const Vec3 s = reference.sigma.cwiseAbs();
      if (s(0) - s(1) > 1e-3 * s(0) && s(1) - s(2) > 1e-3 * s(0)) {
        EXPECT_LE((svd.U * svd.V.transpose() - reference.U * reference.V.transpose())
                      .cwiseAbs()
                      .maxCoeff(),
                  1e-11)
            << c.name;
      }
    }
  }
}

TEST(RotationVariantSVD, RepeatedAndZeroSingularValuesAreExact) {
  const RotationVariantSVD identity = ComputeRotationVariantSVD(Mat3::Identity());
  EXPECT_EQ(identity.sigma, Vec3(1.0, 1.0, 1.0));
  EXPECT_EQ(identity.U * identity.V.transpose(), Mat3::Identity());
  const RotationVariantSVD zero = ComputeRotationVariantSVD(Mat3::Zero());
  EXPECT_EQ(zero.sigma, Vec3::Zero());
  EXPECT_NEAR(zero.U.determinant(), 1.0, 1e-15);
  EXPECT_NEAR(zero.V.determinant(), 1.0, 1e-15);
  const RotationVariantSVD reflection =
      ComputeRotationVariantSVD(Vec3(1.0, 1.0, -1.0).asDiagonal().toDenseMatrix());
  EXPECT_EQ(reflection.sigma, Vec3(1.0, 1.0, -1.0));
  std::mt19937 rng(37);
  for (int n = 0; n < 20; ++n) {
    const Mat3 Q = RandomRotation(rng);
    const RotationVariantSVD rotation = ComputeRotationVariantSVD(2.5 * Q);
    EXPECT_LE((rotation.sigma - Vec3::Constant(2.5)).cwiseAbs().maxCoeff(), 1e-14);
    EXPECT_LE((rotation.U * rotation.V.transpose() - Q).cwiseAbs().maxCoeff(), 1e-14);
  }
}

// Scales where the squares of F's entries would over- or underflow.
TEST(RotationVariantSVD, ExtremeScales) {
  std::mt19937 rng(41);
  const Vec3 sigma(1.5, 0.7, -0.4);
  for (const double scale : {1e-300, 1e-200, 1e-100, 1e100, 1e200, 1e300}) {
    const Mat3 F = scale * WithSingularValues(sigma, rng);
    const RotationVariantSVD svd = ComputeRotationVariantSVD(F);
    EXPECT_LE((svd.sigma / scale - sigma).cwiseAbs().maxCoeff(), 1e-14) << "scale " << scale;
    EXPECT_LE((svd.U * svd.sigma.asDiagonal() * svd.V.transpose() - F).cwiseAbs().maxCoeff(),
              1e-14 * scale);
    EXPECT_LE((RotationVariantSingularValues(F) / scale - sigma).cwiseAbs().maxCoeff(), 1e-14);
  }
}

// The energy-only path gives the full path's magnitudes to the last bit, so Psi and
// PsiAndP agree to the last bit as well.
TEST(RotationVariantSVD, SingularValuesAloneAreTheSameBits) {
  for (const Case& c : AllCases()) {
    const Vec3 full = ComputeRotationVariantSVD(c.F).sigma;
    const Vec3 alone = RotationVariantSingularValues(c.F);
    EXPECT_EQ(full.cwiseAbs(), alone.cwiseAbs()) << c.name;
    // The sign of sigma_2 is round-off where F is singular.
    if (c.name.rfind("rank", 0) != 0 && c.name != "zero")
      EXPECT_EQ(alone(2) < 0.0, full(2) < 0.0) << c.name;
  }
}

}  // namespace
}  // namespace optistep
