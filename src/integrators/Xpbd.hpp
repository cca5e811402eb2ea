#pragma once
// What XPBD with small steps (Macklin et al. 2019, Alg. 1) shares across discretizations
// (FemXpbd for tet meshes, ChainXpbd for particle chains): the scene's substeps and
// iterations per substep (xpbd.substeps, xpbd.iterations) and the clock.
#include <string>

#include "integrators/Integrator.hpp"
#include "io/SceneSections.hpp"

namespace optistep {

class Xpbd : public Integrator {
 public:
  const char* Name() const override { return "xpbd"; }
  std::string Method() const override { return "xpbd"; }
  std::string SmallerStepKey() const override { return "more xpbd.substeps"; }

 protected:
  explicit Xpbd(const XpbdConfig& config)
      : substeps_(config.substeps), iterations_(config.iterations) {}
  /// "xpbd, 20 substeps x 1 iteration".
  std::string DescribeSubsteps() const {
    return std::string(Name()) + ", " + std::to_string(substeps_) + " substeps x " +
           std::to_string(iterations_) + (iterations_ == 1 ? " iteration" : " iterations");
  }

  int substeps_ = 1;
  int iterations_ = 1;
};

}  // namespace optistep
