// The minimizers (solvers/NewtonMinimizer, solvers/LbfgsMinimizer, made by CreateMinimizer)
// on analytic potentials (tests/AnalyticPotentials.hpp), independent of FEM and MPM, on 1, 2
// and 4 ranks with u of block size 3 split as PETSc decides:
//  - a quadratic E = 1/2 (u - u*)^T A (u - u*), n = 24, cond(A) about 100, u* known;
//  - the extended Rosenbrock function (More, Garbow and Hillstrom 1981, problem 21) from the
//    classic start (-1.2, 1, ...), minimizer all ones, indefinite on the way;
//  - the quadratic with two nodes held at given values, whose minimizer solves the reduced
//    system A_ff (u_f - u*_f) = -A_fc (u_c - u*_c) (Eigen, dense).
// Expected numbers, from elsewhere:
//  - newton and lbfgs converge on all three to within what |g| < tau allows:
//    |u - u_min| <= |g| / lambda_min (a quadratic), to first order (Rosenbrock);
//  - Newton with an exact (Cholesky) solve takes 1 iteration on a quadratic, whose model is
//    exact; so does L-BFGS whose H0 is the exact inverse Hessian (LBFGS-H with Cholesky), its
//    first direction being that Newton step;
//  - L-BFGS with H0 = I and exact line searches takes at most n + 1 iterations: BFGS with
//    exact line searches terminates on a strongly convex quadratic in at most n (Nocedal &
//    Wright, Numerical Optimization, 2nd ed., Thm. 6.4 and Sec. 6.1), L-BFGS keeping all
//    pairs is BFGS and, with a fixed H0 = I, any window gives CG's iterates (Sec. 7.2;
//    Kolda, O'Leary and Nazareth 1998);
//  - L-BFGS with unit steps matches the two-loop recursion (N&W Alg. 7.4) written out in
//    Eigen, which the finite termination cannot see (exact steps make the pairs conjugate,
//    and then the loops' order and the dropped pair do not matter).
//  - L-BFGS's refresh of H0^-1 (stall, cap, contact triggers) still reaches the minimizer,
//    in fewer iterations when it makes every direction a Newton one.
// Negative controls: the inexact default line search (c2 = 0.9) loses the finite
// termination, and LBFGS-H with its default inexact CG takes more than one iteration.
#include <gtest/gtest.h>
#include <petscsys.h>

#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "AnalyticPotentials.hpp"
#include "ScopedOptions.hpp"
#include "TestUtil.hpp"
#include "core/Error.hpp"
#include "app/SceneConfig.hpp"
#include "solvers/LineSearch.hpp"
#include "solvers/MinimizerFactory.hpp"

namespace optistep {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using test::AnalyticPotential;
using test::Quadratic;
using test::Rosenbrock;

using test::ScopedOptions;

/// The scene's solver block of a test: absolute termination |g|_2 < tau.
SolverConfig Config(const std::string& method, double tau) {
  SolverConfig config;
  EXPECT_TRUE(FromString(method, &config.method)) << method;
  config.termination = Termination::kAbsolute;
  config.tau = tau;
  config.forcing = Forcing::kGradient;  // what SceneConfig picks with absolute termination
  config.max_iterations = 1000;
  return config;
}

struct Outcome {
  SolveReport report;
  VectorXd u;    ///< the returned iterate, all components on every rank
  double error;  ///< |u - expected|_2
};

/// Collective: creates the minimizer (CreateMinimizer: SetFromOptions, SetUp) with `options`
/// set, minimizes from `start` and measures the distance to `expected`.
Outcome Minimize(AnalyticPotential& potential, const VectorXd& start, const VectorXd& expected,
                 const SolverConfig& config, std::vector<std::pair<std::string, std::string>> options,
                 const char* label) {
  const ScopedOptions scoped(std::move(options));
  const auto minimizer = CreateMinimizer(MPI_COMM_WORLD, config, MinimizerDefaults{}, "test_minimizers");
  Vec u = potential.CreateVector(start);
  Outcome outcome;
  outcome.report = minimizer->Minimize(potential, u);
  outcome.u = potential.Gather(u);
  outcome.error = (outcome.u - expected).norm();
  VecDestroy(&u);
  if (test::Rank() == 0)
    std::printf("  [measured] %-48s %s after %3d iterations (%4d inner), |g| %.2e, |u - u_min| %.2e\n",
                label, outcome.report.reason.c_str(), outcome.report.iterations,
                outcome.report.linear_iterations, outcome.report.gradient_norm, outcome.error);
  return outcome;
}

constexpr PetscInt kQuadraticNodes = 8;  // n = 24
constexpr PetscInt kRosenbrockNodes = 4;  // n = 12, 6 pairs
/// Termination |g|_2 < tau. On the quadratics |u - u_min| <= |g|_2 / lambda_min(A_ff) <
/// tau / SmallestEigenvalueBound(); on Rosenbrock g = H* (u - u*) + O(|u - u*|^2), so |u - u*| <
/// tau / kHessianMinimum to first order, and twice that leaves ample room for the second
/// order (|u - u*|^2 times the third derivatives, about 1e-15 here).
constexpr double kTau = 1e-10;

/// Held nodes of the constrained quadratic: the first one and one inside.
std::vector<char> HeldNodes() {
  std::vector<char> held(kQuadraticNodes, 0);
  held[0] = held[5] = 1;
  return held;
}

/// LBFGS-H solved exactly: a Cholesky factorization (MUMPS, on every rank count).
const std::vector<std::pair<std::string, std::string>> kExactInitializer = {
    {"-lbfgsh_ksp_type", "preonly"},
    {"-lbfgsh_pc_type", "cholesky"},
    {"-lbfgsh_pc_factor_mat_solver_type", "mumps"}};

/// The line search (near) exact on a quadratic: the strong Wolfe curvature condition
/// |phi'(alpha)| <= c2 |phi'(0)| with c2 = 1e-10 leaves alpha within 1e-10 (relative) of
/// the exact minimizer along d, since phi' is linear in alpha. More-Thuente's first
/// interpolation from (0, phi, phi') and (1, phi, phi') is exact for a quadratic phi, so
/// this costs one more evaluation, not a bisection.
const std::vector<std::pair<std::string, std::string>> kExactLineSearch = {{"-lbfgs_tao_ls_gtol", "1e-10"}};

const char* const kMethods[] = {"newton", "lbfgs"};

TEST(Minimizers, BothConvergeOnTheQuadratic) {
  for (const std::string method : kMethods) {
    Quadratic potential(kQuadraticNodes);
    const Outcome out = Minimize(potential, potential.Start(), potential.Minimizer(potential.Start()),
                                 Config(method, kTau), {}, (method + ", quadratic").c_str());
    EXPECT_TRUE(out.report.converged) << method << ": " << out.report.reason;
    EXPECT_LT(out.error, kTau / potential.SmallestEigenvalueBound()) << method;
  }
}

TEST(Minimizers, BothConvergeOnRosenbrock) {
  for (const std::string method : kMethods) {
    Rosenbrock potential(kRosenbrockNodes);
    const Outcome out = Minimize(potential, potential.Start(), potential.Minimizer(),
                                 Config(method, kTau), {}, (method + ", Rosenbrock").c_str());
    EXPECT_TRUE(out.report.converged) << method << ": " << out.report.reason;
    EXPECT_LT(out.error, 2.0 * kTau / Rosenbrock::kHessianMinimum) << method;
  }
}

/// A solve stopped at its iteration cap says which measure was not met, with the figures:
/// Rosenbrock from its start is far from |g| < 1e-10 after 2 iterations.
TEST(Minimizers, TheIterationCapNamesTheMeasureNotMet) {
  for (const std::string method : kMethods) {
    Rosenbrock potential(kRosenbrockNodes);
    SolverConfig config = Config(method, kTau);
    config.max_iterations = 2;
    const Outcome out = Minimize(potential, potential.Start(), potential.Minimizer(), config, {},
                                 (method + ", Rosenbrock, 2 iterations").c_str());
    EXPECT_FALSE(out.report.converged) << method;
    const std::string& reason = out.report.reason;
    EXPECT_EQ(reason.rfind("iteration cap (2) reached: |g| ", 0), 0u) << method << ": " << reason;
    EXPECT_NE(reason.find(" >= 1e-10 (not met)"), std::string::npos) << method << ": " << reason;
  }
}

/// Terminated by the characteristic norm with epsilon: converged when sum_i |g_i|^2 /
/// epsilon^2 < N over the free nodes (held ones have tol = inf), so |g|_2 < sqrt(N) epsilon.
TEST(Minimizers, BothKeepHeldNodesAndFindTheConstrainedMinimizer) {
  for (const std::string method : kMethods) {
    Quadratic potential(kQuadraticNodes, HeldNodes());
    const VectorXd start = potential.Start(), expected = potential.Minimizer(start);
    SolverConfig config = Config(method, kTau);
    config.termination = Termination::kCharacteristicNorm;
    config.cn_epsilon = 1e-10;
    config.forcing = Forcing::kCharacteristicNorm;  // SceneConfig's pick for FEM with CN termination
    const Outcome out = Minimize(potential, start, expected, config, {}, (method + ", held nodes").c_str());
    EXPECT_TRUE(out.report.converged) << method << ": " << out.report.reason;
    EXPECT_LT(out.report.cn_residual, 1.0) << method;
    EXPECT_LT(out.error, std::sqrt(static_cast<double>(kQuadraticNodes)) * config.cn_epsilon /
                             potential.SmallestEigenvalueBound())
        << method;
    // The held values exactly: no direction may move them.
    for (PetscInt k = 0; k < potential.size(); ++k)
      if (potential.Held(k)) EXPECT_EQ(out.u[k], start[k]) << method << ", component " << k;
  }
  // Not the unconstrained minimizer: the constraint matters.
  const Quadratic held(kQuadraticNodes, HeldNodes()), unconstrained(kQuadraticNodes);
  EXPECT_GT((held.Minimizer(held.Start()) - unconstrained.Minimizer(unconstrained.Start())).norm(), 0.1);
}

/// Newton with a Cholesky solve, and L-BFGS whose H0 is the Cholesky-solved Hessian (the
/// exact inverse), take the exact Newton step first, which on a quadratic lands on the
/// minimizer: one iteration, with and without held nodes.
TEST(Minimizers, AnExactSolveTakesOneIterationOnAQuadratic) {
  const std::pair<std::string, std::vector<std::pair<std::string, std::string>>> cases[] = {
      {"newton",
       {{"-newton_ksp_type", "preonly"},
        {"-newton_pc_type", "cholesky"},
        {"-newton_pc_factor_mat_solver_type", "mumps"}}},
      {"lbfgs", kExactInitializer}};
  for (const auto& [method, options] : cases)
    for (const bool constrained : {false, true}) {
      Quadratic potential(kQuadraticNodes, constrained ? HeldNodes() : std::vector<char>{});
      const VectorXd start = potential.Start();
      const std::string label = method + ", Cholesky, " + (constrained ? "held nodes" : "quadratic");
      const Outcome out = Minimize(potential, start, potential.Minimizer(start), Config(method, kTau),
                                   options, label.c_str());
      EXPECT_TRUE(out.report.converged) << label << ": " << out.report.reason;
      EXPECT_EQ(out.report.iterations, 1) << label;
    }
}

/// Negative control of the one above: LBFGS-H's default CG to relative tolerance 1/2 makes
/// the first direction only roughly the Newton step.
TEST(Minimizers, LbfgsWithAnInexactInitializerTakesMoreThanOneIteration) {
  Quadratic potential(kQuadraticNodes);
  const Outcome out = Minimize(potential, potential.Start(), potential.Minimizer(potential.Start()),
                               Config("lbfgs", kTau), {}, "lbfgs, CG(1/2) H0, quadratic");
  EXPECT_TRUE(out.report.converged) << out.report.reason;
  EXPECT_GT(out.report.iterations, 1);
}

/// Finite termination (see the top): at most n iterations in exact arithmetic, + 1 for
/// round-off. With a fixed H0 = I and exact line searches every window gives CG's iterates
/// (N&W Sec. 7.2 for m = 1, memoryless BFGS; Kolda, O'Leary and Nazareth 1998, SIAM J.
/// Optim. 8(4), for every m), so a small window is no negative control here.
TEST(Minimizers, LbfgsWithTheIdentityAndExactLineSearchesTerminatesWithinNPlusOneIterations) {
  Quadratic potential(kQuadraticNodes);
  const int n = static_cast<int>(potential.size());
  for (const int window : {n, 5, 1}) {
    SolverConfig config = Config("lbfgs", kTau);
    config.initializer = "identity";
    config.window = window;
    const std::string label = "lbfgs, H0 = I, window " + std::to_string(window) + ", exact line search";
    const Outcome out = Minimize(potential, potential.Start(), potential.Minimizer(potential.Start()), config,
                                 kExactLineSearch, label.c_str());
    EXPECT_TRUE(out.report.converged) << label << ": " << out.report.reason;
    EXPECT_LE(out.report.iterations, n + 1) << label;
    EXPECT_LT(out.error, kTau / potential.SmallestEigenvalueBound()) << label;
  }
}

/// Negative control of the one above: the default strong Wolfe search (c2 = 0.9) is not
/// exact, the finite termination is lost, and L-BFGS converges only superlinearly.
TEST(Minimizers, LbfgsWithTheIdentityAndInexactLineSearchesTakesMoreThanNPlusOneIterations) {
  Quadratic potential(kQuadraticNodes);
  const int n = static_cast<int>(potential.size());
  SolverConfig config = Config("lbfgs", kTau);
  config.initializer = "identity";
  config.window = n;
  const Outcome out = Minimize(potential, potential.Start(), potential.Minimizer(potential.Start()), config,
                               {}, "lbfgs, H0 = I, window n, default line search");
  EXPECT_TRUE(out.report.converged) << out.report.reason;
  EXPECT_GT(out.report.iterations, n + 1);
}

/// L-BFGS with unit steps x_{k+1} = x_k - H_k g_k on the quadratic, written out in Eigen
/// after N&W Alg. 7.4 (two-loop recursion) and 7.5 (the last m pairs): H0 = diag(A)^{-1},
/// what the jacobi initializer applies. Returns x after `iterations` steps from x.
VectorXd ReferenceLbfgs(const Quadratic& quadratic, VectorXd x, int window, int iterations) {
  const MatrixXd& A = quadratic.A();
  std::vector<VectorXd> s, y;
  VectorXd g = A * (x - quadratic.u_star());
  for (int it = 0; it < iterations; ++it) {
    const int k = static_cast<int>(s.size());
    std::vector<double> alpha(k);
    VectorXd q = -g;
    for (int i = k - 1; i >= 0; --i) {
      alpha[i] = s[i].dot(q) / y[i].dot(s[i]);
      q -= alpha[i] * y[i];
    }
    VectorXd d = q.cwiseQuotient(A.diagonal());
    for (int i = 0; i < k; ++i) d += (alpha[i] - y[i].dot(d) / y[i].dot(s[i])) * s[i];
    const VectorXd g_old = g;
    x += d;
    g = A * (x - quadratic.u_star());
    if (k == window) {
      s.erase(s.begin());
      y.erase(y.begin());
    }
    s.push_back(d);
    y.push_back(g - g_old);
  }
  return x;
}

/// With unit steps (-lbfgs_tao_ls_type unit) the iterates are those of the recursion
/// alone, so after K iterations they must match ReferenceLbfgs. The pairs are not
/// conjugate here (no exact line search), so unlike the finite termination above this
/// pins the order of the two loops, which pair a full window drops and where H0 sits.
TEST(Minimizers, LbfgsWithUnitStepsMatchesTheTwoLoopRecursion) {
  Quadratic potential(kQuadraticNodes);
  constexpr int kWindow = 3, kIterations = 12;
  SolverConfig config = Config("lbfgs", kTau);
  config.initializer = "jacobi";
  config.window = kWindow;
  config.max_iterations = kIterations;
  const VectorXd expected = ReferenceLbfgs(potential, potential.Start(), kWindow, kIterations);
  const Outcome out = Minimize(potential, potential.Start(), expected, config,
                               {{"-lbfgs_tao_ls_type", "unit"}},
                               "lbfgs, H0 = diag(A)^-1, window 3, unit steps");
  EXPECT_EQ(out.report.iterations, kIterations);
  // Round-off apart.
  EXPECT_LT(out.error, 1e-12 * expected.norm());
}


/// The shared line search never accepts a rise of E, whatever PETSc's reason: More-Thuente
/// held to one function evaluation stops with a positive halting reason (maximum function
/// evaluations) wherever that evaluation landed. Along d = -s g with s = 1e4 > 2 / lambda_min
/// >= 2 |g|^2 / (g^T A g), the quadratic's E(u + d) = E - s |g|^2 + s^2/2 g^T A g exceeds
/// E(u), so the search must restore u and g and report no decrease.
/// Rosenbrock whose "penalty contacts" are the components above 1/2: the set changes as
/// the iterates move from the classic start (-1.2, 1, ...) to all ones.
class RosenbrockWithContacts : public Rosenbrock {
 public:
  using Rosenbrock::Rosenbrock;
  std::vector<std::int64_t> PenaltyContacts(Vec u) override {
    const VectorXd x = Gather(u);
    std::vector<std::int64_t> keys;
    for (PetscInt k = 0; k < size(); ++k)
      if (x[k] > 0.5) keys.push_back(k);
    return keys;
  }
};

// L-BFGS's refresh (solvers/LbfgsMinimizer.hpp), here with LBFGS-H solved exactly, whose
// lagged Hessian is far off on Rosenbrock's curved valley: refreshing it whenever the
// residual does not fall by 0.1% per iteration makes every direction a Newton one, so the
// solve takes fewer iterations than without (the lagged one) and reaches the same
// minimizer; a solve capped at 3 iterations gets 3 more after a refresh at the cap; the
// contact trigger fires when the contact set changes, and never without the option.
TEST(Minimizers, LbfgsRefreshesItsInitializerWhenTriggeredAndStillFindsTheMinimizer) {
  const auto run = [](std::vector<std::pair<std::string, std::string>> options, const char* label,
                      int max_iterations = 1000) {
    RosenbrockWithContacts potential(kRosenbrockNodes);
    options.insert(options.end(), kExactInitializer.begin(), kExactInitializer.end());
    SolverConfig config = Config("lbfgs", kTau);
    config.max_iterations = max_iterations;
    return Minimize(potential, potential.Start(), potential.Minimizer(), config, options, label);
  };
  const Outcome lagged = run({}, "LBFGS-H (exact), no refresh");
  const Outcome refreshed = run({{"-lbfgs_refresh_stall", "0.999"}, {"-lbfgs_refresh_stall_window", "1"},
                                 {"-lbfgs_refresh_max", "1000"}},
                                "LBFGS-H (exact), refreshed when stalled");
  for (const Outcome* out : {&lagged, &refreshed}) {
    EXPECT_TRUE(out->report.converged) << out->report.reason;
    EXPECT_LT(out->error, 2.0 * kTau / Rosenbrock::kHessianMinimum);
  }
  EXPECT_EQ(lagged.report.refreshes, 0);
  EXPECT_GE(refreshed.report.refreshes, 1);
  EXPECT_LT(refreshed.report.iterations, lagged.report.iterations);

  const Outcome capped = run({}, "LBFGS-H (exact), cap 3", 3);
  const Outcome extended = run({{"-lbfgs_refresh_at_cap", "1"}}, "LBFGS-H (exact), cap 3, refreshed at it", 3);
  EXPECT_FALSE(capped.report.converged);
  EXPECT_EQ(capped.report.iterations, 3);
  EXPECT_EQ(extended.report.refreshes, 1);
  EXPECT_GT(extended.report.iterations, 3);
  EXPECT_LE(extended.report.iterations, 6);

  const Outcome contacts = run({{"-lbfgs_refresh_contacts", "1"}}, "LBFGS-H (exact), refreshed on contacts");
  EXPECT_TRUE(contacts.report.converged) << contacts.report.reason;
  EXPECT_GE(contacts.report.refreshes, 1);
  EXPECT_LT(contacts.error, 2.0 * kTau / Rosenbrock::kHessianMinimum);
}

/// A FEM scene of one body that names no solver.method is minimized by newton below
/// kNewtonMgDefaultTets tets and by newton_mg from there; several bodies, a named method
/// (scene or -solver_method) and MPM (grid) keep theirs.
TEST(Minimizers, TheDefaultMethodFollowsTheMeshSize) {
  const auto type = [](const SolverConfig& config, const MinimizerDefaults& defaults) {
    return std::string(CreateMinimizer(MPI_COMM_WORLD, config, defaults, "size.yaml")->Type());
  };
  const SolverConfig unnamed;  // method newton, not given
  ASSERT_FALSE(unnamed.method_given);
  const double below = kNewtonMgDefaultTets - 1, at = kNewtonMgDefaultTets;
  EXPECT_EQ(type(unnamed, MinimizerDefaults{PCJACOBI, false, below, 1}), "newton");
  EXPECT_EQ(type(unnamed, MinimizerDefaults{PCJACOBI, false, at, 1}), "newton_mg");
  EXPECT_EQ(type(unnamed, MinimizerDefaults{PCJACOBI, false, at, 2}), "newton");
  EXPECT_EQ(type(unnamed, MinimizerDefaults{PCPBJACOBI, true, at}), "newton");
  SolverConfig named;
  named.method_given = true;
  EXPECT_EQ(type(named, MinimizerDefaults{PCJACOBI, false, at, 1}), "newton");
  const ScopedOptions lbfgs(std::vector<std::pair<std::string, std::string>>{{"-solver_method", "lbfgs"}});
  EXPECT_EQ(type(unnamed, MinimizerDefaults{PCJACOBI, false, at, 1}), "lbfgs");
}

TEST(LineSearch, NeverAcceptsARiseOfTheEnergy) {
  Quadratic potential(kQuadraticNodes);
  ASSERT_GT(1e4, 2.0 / potential.SmallestEigenvalueBound());
  const ScopedOptions scoped(std::vector<std::pair<std::string, std::string>>{{"-test_ls_tao_ls_max_funcs", "1"}});
  LineSearch search(MPI_COMM_WORLD, "test_ls_");
  search.Reset();
  search.SetPotential(&potential);
  const VectorXd start = potential.Start();
  Vec u = potential.CreateVector(start);
  Vec g, d, backup;
  VecDuplicate(u, &g);
  VecDuplicate(u, &d);
  VecDuplicate(u, &backup);
  const double energy = potential.EnergyAndGradient(u, g);
  VecAXPBY(d, -1e4, 0.0, g);
  const VectorXd entry_gradient = potential.Gather(g);
  const LineSearch::Result result = search.Apply(u, energy, g, d, backup);
  EXPECT_FALSE(result.decreased);
  EXPECT_EQ(result.energy, energy);
  EXPECT_EQ((potential.Gather(u) - start).norm(), 0.0);
  EXPECT_EQ((potential.Gather(g) - entry_gradient).norm(), 0.0);
  for (Vec* v : {&u, &g, &d, &backup}) VecDestroy(v);
}

}  // namespace
}  // namespace optistep
