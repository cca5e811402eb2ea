#pragma once
// The SVD eigen-system of the tangent dP/dF of an isotropic energy Psi(sigma_0, sigma_1,
// sigma_2), shared by the hyperelastic materials: Teran, Sifakis, Irving, Fedkiw 2005,
// "Robust quasistatic finite elements and flesh simulation", Sec. 5; the same structure
// as Kim & Eberle 2020, "Dynamic Deformables" (eigensystems of isotropic energies).
// Private to src/materials/.
#include "core/Types.hpp"
#include "materials/RotationVariantSVD.hpp"

namespace optistep {

/// cof(F) = dJ/dF (= J F^{-T} where F is invertible), also defined for singular F.
Mat3 Cofactor(const Mat3& F);

/// dP/dF in the SVD frame, where it is block diagonal: with dF_hat = U^T dF V,
///  - the 3x3 block d2psi_dsigma2 acts on the diagonal (dF_hat_00, dF_hat_11, dF_hat_22);
///  - pair k, i.e. (i, j) = ((k + 1) % 3, (k + 2) % 3), acts on (dF_hat_ij, dF_hat_ji) with
///    eigenvalue stretch[k] = (dPsi/dsigma_i - dPsi/dsigma_j) / (sigma_i - sigma_j) on the
///    symmetric mode (E_ij + E_ji)/sqrt(2), and twist[k] = (dPsi/dsigma_i + dPsi/dsigma_j) /
///    (sigma_i + sigma_j) on the antisymmetric mode (E_ij - E_ji)/sqrt(2) (Teran et al. 2005,
///    Sec. 5).
/// The materials fill stretch and twist in closed form with the division done by hand, so
/// they stay exact when sigma_i ~ sigma_j or sigma_i ~ -sigma_j (where the quotients are
/// 0/0) instead of needing a separate limit branch.
struct IsotropicTangentBlocks {
  Mat3 d2psi_dsigma2 = Mat3::Zero();
  Vec3 stretch = Vec3::Zero();
  Vec3 twist = Vec3::Zero();
};

/// Adds the volume term Psi_vol = lambda/2 (J - J_rest)^2, J = sigma_0 sigma_1 sigma_2, to
/// blocks. With g_i = dJ/dsigma_i = prod_{m != i} sigma_m:
///   d2psi_dsigma2 += lambda (g g^T + (J - J_rest) d2J/dsigma2), (d2J/dsigma2)_ij = sigma_k,
///   stretch[k] -= lambda (J - J_rest) sigma_k,  twist[k] += lambda (J - J_rest) sigma_k.
/// Used by fixed_corotated (J_rest = 1) and stable_neo_hookean (J_rest = alpha).
void AddVolumeTerm(const Vec3& sigma, double lambda, double J_rest,
                   IsotropicTangentBlocks* blocks);

/// dP/dF = W H_hat W^T in the Mat9 convention of core/Types.hpp, W = V (x) U (Kronecker,
/// orthogonal), H_hat the block-diagonal tangent in the SVD frame. With project_spd, the
/// negative eigenvalues of every block are clamped to zero first (Teran et al. 2005,
/// Sec. 5), which makes the result the nearest PSD matrix in the Frobenius norm.
Mat9 AssembleIsotropicTangent(const RotationVariantSVD& svd, IsotropicTangentBlocks blocks,
                              bool project_spd);

}  // namespace optistep
