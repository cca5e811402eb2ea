#pragma once
// Analytic incremental potentials for the minimizer tests (test_minimizers): a quadratic
// with a known minimizer, with or without held nodes, and the extended Rosenbrock
// function, on a distributed u of block size 3, independent of FEM and MPM.
#include <petscmat.h>
#include <petscvec.h>

#include <Eigen/Dense>
#include <cmath>
#include <utility>
#include <vector>

#include "core/Error.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep::test {

using Eigen::MatrixXd;
using Eigen::VectorXd;

/// An analytic E(u) over n = 3 N components (N nodes, block size 3), u split over the ranks
/// as PETSc decides. n is tiny, so every rank gathers all of u and evaluates E redundantly,
/// then fills its own rows of g and H: E and g are the same bits on every rank count, and
/// only the minimizers' reductions and linear solves depend on it. Held nodes are the
/// constraints: g is 0 there, their Hessian rows and columns are decoupled (1 on the
/// diagonal), Project zeroes them and their characteristic-norm tolerance is +inf.
class AnalyticPotential : public IncrementalPotential {
 public:
  AnalyticPotential(PetscInt nodes, std::vector<char> held) : n_(3 * nodes), held_(std::move(held)) {
    held_.resize(nodes, 0);
    PetscInt local_nodes = PETSC_DECIDE, global_nodes = nodes;
    OPTISTEP_PETSC(PetscSplitOwnership(MPI_COMM_WORLD, &local_nodes, &global_nodes));
    OPTISTEP_PETSC(VecCreateMPI(MPI_COMM_WORLD, 3 * local_nodes, n_, &layout_));
    OPTISTEP_PETSC(VecSetBlockSize(layout_, 3));
    OPTISTEP_PETSC(VecGetOwnershipRange(layout_, &lo_, &hi_));
    OPTISTEP_PETSC(VecScatterCreateToAll(layout_, &to_all_, &all_));
  }
  ~AnalyticPotential() override {
    VecScatterDestroy(&to_all_);
    VecDestroy(&all_);
    VecDestroy(&layout_);
    MatDestroy(&hessian_);
  }

  PetscInt size() const { return n_; }
  bool Held(PetscInt k) const { return held_[k / 3] != 0; }

  /// A vector of u's layout holding x (all n components, each rank copies its own).
  Vec CreateVector(const VectorXd& x) const {
    Vec v = nullptr;
    OPTISTEP_PETSC(VecDuplicate(layout_, &v));
    PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArray(v, &a));
    for (PetscInt k = lo_; k < hi_; ++k) a[k - lo_] = x[k];
    OPTISTEP_PETSC(VecRestoreArray(v, &a));
    return v;
  }

  /// Collective: all n components of u, on every rank.
  VectorXd Gather(Vec u) const {
    OPTISTEP_PETSC(VecScatterBegin(to_all_, u, all_, INSERT_VALUES, SCATTER_FORWARD));
    OPTISTEP_PETSC(VecScatterEnd(to_all_, u, all_, INSERT_VALUES, SCATTER_FORWARD));
    const PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArrayRead(all_, &a));
    VectorXd x = Eigen::Map<const VectorXd>(a, n_);
    OPTISTEP_PETSC(VecRestoreArrayRead(all_, &a));
    return x;
  }

  void Hessian(Vec u, Mat H) override {
    const MatrixXd full = ProjectedHessian(Gather(u));
    for (PetscInt i = lo_; i < hi_; ++i) {
      const std::vector<PetscInt> cols = Columns(i);
      std::vector<PetscScalar> values;
      for (PetscInt j : cols) values.push_back(Held(i) ? 1.0 : full(i, j));
      OPTISTEP_PETSC(MatSetValues(H, 1, &i, static_cast<PetscInt>(cols.size()), cols.data(),
                                  values.data(), INSERT_VALUES));
    }
    OPTISTEP_PETSC(MatAssemblyBegin(H, MAT_FINAL_ASSEMBLY));
    OPTISTEP_PETSC(MatAssemblyEnd(H, MAT_FINAL_ASSEMBLY));
  }

  Mat CreateHessian() override {
    if (!hessian_) {
      // Preallocated to the pattern exactly: an entry outside it is a PETSc error.
      std::vector<PetscInt> d_nnz, o_nnz;
      for (PetscInt i = lo_; i < hi_; ++i) {
        d_nnz.push_back(0);
        o_nnz.push_back(0);
        for (PetscInt j : Columns(i)) ++(j >= lo_ && j < hi_ ? d_nnz.back() : o_nnz.back());
      }
      OPTISTEP_PETSC(MatCreate(MPI_COMM_WORLD, &hessian_));
      OPTISTEP_PETSC(MatSetSizes(hessian_, hi_ - lo_, hi_ - lo_, n_, n_));
      OPTISTEP_PETSC(MatSetBlockSize(hessian_, 3));
      OPTISTEP_PETSC(MatSetType(hessian_, MATAIJ));
      OPTISTEP_PETSC(MatSeqAIJSetPreallocation(hessian_, 0, d_nnz.data()));
      OPTISTEP_PETSC(MatMPIAIJSetPreallocation(hessian_, 0, d_nnz.data(), 0, o_nnz.data()));
      OPTISTEP_PETSC(MatSetOption(hessian_, MAT_SYMMETRIC, PETSC_TRUE));
      OPTISTEP_PETSC(MatSetOption(hessian_, MAT_SYMMETRY_ETERNAL, PETSC_TRUE));
    }
    OPTISTEP_PETSC(PetscObjectReference(reinterpret_cast<PetscObject>(hessian_)));
    return hessian_;
  }

  /// tol_i = epsilon s with the fixed scale s = 1 (a unit gradient), +inf on held nodes.
  void CharacteristicNormWeights(double epsilon, Vec w) override {
    PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArray(w, &a));
    for (PetscInt k = lo_; k < hi_; ++k) a[k - lo_] = Held(k) ? PETSC_INFINITY : epsilon;
    OPTISTEP_PETSC(VecRestoreArray(w, &a));
  }

  PetscInt GlobalNodeCount() const override { return n_ / 3; }

  void Project(Vec d) const override {
    PetscScalar* a = nullptr;
    OPTISTEP_PETSC(VecGetArray(d, &a));
    for (PetscInt k = lo_; k < hi_; ++k)
      if (Held(k)) a[k - lo_] = 0.0;
    OPTISTEP_PETSC(VecRestoreArray(d, &a));
  }

 protected:
  PetscReal Evaluate(Vec u, Vec g) override {
    VectorXd gradient;
    const double energy = Value(Gather(u), g ? &gradient : nullptr);
    if (g) {
      PetscScalar* a = nullptr;
      OPTISTEP_PETSC(VecGetArray(g, &a));
      for (PetscInt k = lo_; k < hi_; ++k) a[k - lo_] = Held(k) ? 0.0 : gradient[k];
      OPTISTEP_PETSC(VecRestoreArray(g, &a));
    }
    return energy;
  }

  /// E(x) and, when gradient is non-null, dE/dx (n components, held ones included).
  virtual double Value(const VectorXd& x, VectorXd* gradient) const = 0;
  /// The SPD-projected Hessian at x (n x n; only the entries Couples allows are read).
  virtual MatrixXd ProjectedHessian(const VectorXd& x) const = 0;
  /// Whether d^2E / dx_i dx_j may be nonzero somewhere.
  virtual bool Couples(PetscInt i, PetscInt j) const = 0;

 private:
  /// The columns of row i in the Hessian's pattern: the diagonal alone on a held row, the
  /// coupled free columns on a free one.
  std::vector<PetscInt> Columns(PetscInt i) const {
    if (Held(i)) return {i};
    std::vector<PetscInt> cols;
    for (PetscInt j = 0; j < n_; ++j)
      if (Couples(i, j) && !Held(j)) cols.push_back(j);
    return cols;
  }

  PetscInt n_;
  std::vector<char> held_;  ///< per node
  Vec layout_ = nullptr;
  PetscInt lo_ = 0, hi_ = 0;  ///< the owned components
  VecScatter to_all_ = nullptr;
  Vec all_ = nullptr;
  Mat hessian_ = nullptr;
};

/// E(u) = 1/2 (u - u*)^T A (u - u*) with A = D + L: D = diag(d_k), d_k log-spaced from
/// kSmallestDiagonal (k = 0) to 1 (k = n - 1), and L = tridiag(-1, 2, -1), the 1-D
/// Laplacian over the n components, eigenvalues 4 sin^2(j pi / (2 (n + 1))), j = 1..n.
/// cond(A) is about 100 (0.044 to 4.4), with n distinct, spread-out eigenvalues.
/// u*_k = cos(0.7 k). Held nodes stay at their start values.
///
/// The finite termination of L-BFGS that test_minimizers checks is exact arithmetic's;
/// round-off delays it when the spectrum clusters. With L scaled by 0.01 (cond about 260,
/// most eigenvalues near the d_k), LbfgsMinimizer took 26 iterations with m = n and an
/// L-BFGS in Eigen with the exact step 27; on this A both take exactly n.
class Quadratic : public AnalyticPotential {
 public:
  static constexpr double kSmallestDiagonal = 1e-3;

  explicit Quadratic(PetscInt nodes, std::vector<char> held = {})
      : AnalyticPotential(nodes, std::move(held)), A_(MatrixXd::Zero(size(), size())), u_star_(size()) {
    const PetscInt n = size();
    for (PetscInt k = 0; k < n; ++k) {
      A_(k, k) = std::pow(kSmallestDiagonal, 1.0 - static_cast<double>(k) / static_cast<double>(n - 1)) + 2.0;
      if (k > 0) A_(k, k - 1) = A_(k - 1, k) = -1.0;
      u_star_[k] = std::cos(0.7 * static_cast<double>(k));
    }
  }

  /// u = 0 on free nodes, u* + 1 on held ones (off the unconstrained minimizer).
  VectorXd Start() const {
    VectorXd x = VectorXd::Zero(size());
    for (PetscInt k = 0; k < size(); ++k)
      if (Held(k)) x[k] = u_star_[k] + 1.0;
    return x;
  }

  /// The minimizer with the held components at their values in `start`: u_c = start_c and
  /// A_ff (u_f - u*_f) = -A_fc (u_c - u*_c). Without held nodes, u*.
  VectorXd Minimizer(const VectorXd& start) const {
    std::vector<PetscInt> free, held;
    for (PetscInt k = 0; k < size(); ++k) (Held(k) ? held : free).push_back(k);
    MatrixXd A_ff(free.size(), free.size()), A_fc(free.size(), held.size());
    VectorXd e_c(held.size());
    for (std::size_t a = 0; a < free.size(); ++a) {
      for (std::size_t b = 0; b < free.size(); ++b) A_ff(a, b) = A_(free[a], free[b]);
      for (std::size_t b = 0; b < held.size(); ++b) A_fc(a, b) = A_(free[a], held[b]);
    }
    for (std::size_t b = 0; b < held.size(); ++b) e_c[b] = start[held[b]] - u_star_[held[b]];
    const VectorXd e_f = A_ff.llt().solve(-A_fc * e_c);
    VectorXd x = start;
    for (std::size_t a = 0; a < free.size(); ++a) x[free[a]] = u_star_[free[a]] + e_f[a];
    return x;
  }

  const MatrixXd& A() const { return A_; }
  const VectorXd& u_star() const { return u_star_; }

  /// A lower bound of lambda_min(A_ff) for every principal submatrix A_ff of A (Cauchy
  /// interlacing), A itself included: lambda_min(D) + lambda_min(L) (Weyl).
  double SmallestEigenvalueBound() const {
    const double h = M_PI / (2.0 * static_cast<double>(size() + 1));
    return kSmallestDiagonal + 4.0 * std::sin(h) * std::sin(h);
  }

 protected:
  double Value(const VectorXd& x, VectorXd* gradient) const override {
    const VectorXd e = x - u_star_;
    const VectorXd Ae = A_ * e;
    if (gradient) *gradient = Ae;
    return 0.5 * e.dot(Ae);
  }
  MatrixXd ProjectedHessian(const VectorXd&) const override { return A_; }
  bool Couples(PetscInt i, PetscInt j) const override { return std::abs(i - j) <= 1; }

 private:
  MatrixXd A_;
  VectorXd u_star_;
};

/// Extended Rosenbrock (More, Garbow and Hillstrom 1981, problem 21): E(u) = sum_p
/// 100 (u_{2p+1} - u_{2p}^2)^2 + (1 - u_{2p})^2 over the pairs of components (n even),
/// minimizer all ones (E = 0), Hessian there [[802, -400], [-400, 200]] per pair with
/// smallest eigenvalue kHessianMinimum. The pairs straddle nodes and, on 4 ranks, ranks.
class Rosenbrock : public AnalyticPotential {
 public:
  static constexpr double kHessianMinimum = 0.39936;  // (1002 - sqrt(1002^2 - 4 * 400)) / 2
  /// Eigenvalue floor of the projected Hessian: below kHessianMinimum, so that near the
  /// minimizer the projection leaves the true Hessian and Newton converges quadratically.
  static constexpr double kEigenvalueFloor = 0.1;

  explicit Rosenbrock(PetscInt nodes) : AnalyticPotential(nodes, {}) {}

  /// The classic start (-1.2, 1, -1.2, 1, ...).
  VectorXd Start() const {
    VectorXd x(size());
    for (PetscInt k = 0; k < size(); ++k) x[k] = k % 2 == 0 ? -1.2 : 1.0;
    return x;
  }
  VectorXd Minimizer() const { return VectorXd::Ones(size()); }

 protected:
  double Value(const VectorXd& x, VectorXd* gradient) const override {
    double energy = 0.0;
    if (gradient) gradient->setZero(size());
    for (PetscInt p = 0; 2 * p + 1 < size(); ++p) {
      const double a = x[2 * p], b = x[2 * p + 1], r = b - a * a;
      energy += 100.0 * r * r + (1.0 - a) * (1.0 - a);
      if (gradient) {
        (*gradient)[2 * p] = -400.0 * a * r - 2.0 * (1.0 - a);
        (*gradient)[2 * p + 1] = 200.0 * r;
      }
    }
    return energy;
  }

  /// Each pair's 2x2 Hessian with its eigenvalues clamped from below at kEigenvalueFloor
  /// (it is indefinite where u_{2p+1} > u_{2p}^2 + 0.005), as the FEM and MPM potentials
  /// project their element and particle blocks. From the classic start the clamp acts on 6
  /// of Newton's 36 iterations (smallest eigenvalue down to -5.1).
  MatrixXd ProjectedHessian(const VectorXd& x) const override {
    MatrixXd H = MatrixXd::Zero(size(), size());
    for (PetscInt p = 0; 2 * p + 1 < size(); ++p) {
      const double a = x[2 * p], b = x[2 * p + 1];
      Eigen::Matrix2d block;
      block << 1200.0 * a * a - 400.0 * b + 2.0, -400.0 * a, -400.0 * a, 200.0;
      const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eigen(block);
      const Eigen::Vector2d clamped = eigen.eigenvalues().cwiseMax(kEigenvalueFloor);
      const Eigen::Matrix2d& Q = eigen.eigenvectors();
      H.block<2, 2>(2 * p, 2 * p) = Q * clamped.asDiagonal() * Q.transpose();
    }
    return H;
  }
  bool Couples(PetscInt i, PetscInt j) const override { return i / 2 == j / 2; }
};

}  // namespace optistep::test
