#pragma once
// The line search every minimizer shares: PETSc's TaoLineSearch on E along a direction d,
// "more-thuente" by default (the strong Wolfe conditions, c1 = 1e-4, c2 = 0.9, trying the
// initial step first; Gast et al. 2015, Sec. 3.1), any TaoLineSearch type by option
// (-<prefix>tao_ls_type armijo is backtracking: halving from the initial step until
// E(u + alpha d) <= E(u) + 1e-4 alpha g^T d; DOT's default). Timed as the phase LineSearch.
#include <petsctao.h>

#include <string>

#include "core/PetscHandles.hpp"
#include "solvers/IncrementalPotential.hpp"

namespace optistep {

extern const Phase kLineSearchPhase;

class LineSearch {
 public:
  /// What one search did.
  struct Result {
    bool decreased = false;  ///< E fell (the iterate moved); false: u and g are restored
    double energy = 0.0;     ///< E at the returned u
    double step = 0.0;       ///< the accepted step length alpha
    bool nan = false;        ///< the search met a NaN energy
    /// PETSc's message when the search raised an error (More-Thuente's "dx * (stp-stx) >=
    /// 0.0" on a NaN or inconsistent trial); u and g are restored as for no decrease.
    std::string error;
  };

  /// Collective on comm; options prefix of the owning minimizer ("newton_"); the type
  /// unless -<prefix>tao_ls_type says otherwise.
  LineSearch(MPI_Comm comm, const std::string& prefix, const char* default_type = TAOLINESEARCHMT);
  ~LineSearch();
  LineSearch(const LineSearch&) = delete;
  LineSearch& operator=(const LineSearch&) = delete;

  /// Collective: creates the TaoLineSearch afresh and reads its options (-<prefix>tao_ls_*).
  /// Called at set-up and whenever the vector layout changes (MPM: every step), since the
  /// search keeps work vectors of the old size.
  void Reset();
  /// Collective: the potential whose energy and gradient the next searches evaluate (once
  /// per solve). Clears what a search type keeps between searches (armijo's reference
  /// energies), so nothing carries over from an earlier solve.
  void SetPotential(IncrementalPotential* potential);
  /// Collective: searches u + alpha d from alpha = initial_step. On entry energy = E(u) and
  /// g = grad E(u); on return u, g and Result::energy are the accepted iterate's, or, when
  /// E rose or the search failed without a decrease, the entry values again (u restored
  /// from backup, a vector of u's layout). A NaN energy is never accepted. During an
  /// armijo search the potential's energy guard (IncrementalPotential::SetEnergyGuard;
  /// Gast et al. 2015, Sec. 3.3) is E(u) + 1e-10 |E(u)|, and +inf again on return; other
  /// types interpolate from rejected trials and get no guard.
  Result Apply(Vec u, double energy, Vec g, Vec d, Vec backup, double initial_step = 1.0);
  /// Collective: PETSc's view of the search (type and parameters).
  void View(PetscViewer viewer) const;

 private:
  MPI_Comm comm_;
  std::string prefix_;
  const char* default_type_;
  OwnedTaoLineSearch tao_ls_;
  IncrementalPotential* potential_ = nullptr;
  bool backtracking_ = false;  ///< armijo: rejected trials only halve the step
};

}  // namespace optistep
