#include "materials/LinearElasticity.hpp"

#include <algorithm>

namespace optistep {

LinearElasticity::LinearElasticity(LameParameters lame) : ElasticMaterial(lame) {
  // C vec(dF) = mu vec(dF + dF^T) + lambda tr(dF) vec(I); vec(I) has ones at 0, 4, 8.
  Vec9 vec_I = Vec9::Zero();
  vec_I(0) = vec_I(4) = vec_I(8) = 1.0;
  C_ = lame.mu * Mat9::Identity() + lame.lambda * vec_I * vec_I.transpose();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C_(i + 3 * j, j + 3 * i) += lame.mu;
  const double volume_eigenvalue = 3.0 * lame.lambda + 2.0 * lame.mu;
  C_projected_ = C_ - std::min(volume_eigenvalue, 0.0) / 3.0 * vec_I * vec_I.transpose();
}

double LinearElasticity::Psi(const Mat3& F) const {
  Mat3 P;
  return PsiAndP(F, &P);
}

double LinearElasticity::PsiAndP(const Mat3& F, Mat3* P) const {
  const Mat3 eps = 0.5 * (F + F.transpose()) - Mat3::Identity();
  const double tr_eps = eps.trace();
  *P = 2.0 * lame_.mu * eps + lame_.lambda * tr_eps * Mat3::Identity();
  return lame_.mu * eps.squaredNorm() + 0.5 * lame_.lambda * tr_eps * tr_eps;
}

Mat9 LinearElasticity::dPdF(const Mat3& /*F*/, bool project_spd) const {
  return project_spd ? C_projected_ : C_;
}

}  // namespace optistep
