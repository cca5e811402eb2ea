#include "mpm/MpmIncrementalPotential.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/Error.hpp"
#include "core/GhostedVector.hpp"
#include "core/Phases.hpp"
#include "model/SmoothedFriction.hpp"

namespace optistep::mpm {
namespace {

using Kind = NodeConstraint::Kind;

/// a + 5 b + 25 c of stencil node n = a + 3 b + 9 c: its code in a 5^3 box.
constexpr int BoxCode(int n) { return n % 3 + 5 * ((n / 3) % 3) + 25 * (n / 9); }
constexpr int kBoxCode[kStencilNodes] = {
    BoxCode(0),  BoxCode(1),  BoxCode(2),  BoxCode(3),  BoxCode(4),  BoxCode(5),  BoxCode(6),
    BoxCode(7),  BoxCode(8),  BoxCode(9),  BoxCode(10), BoxCode(11), BoxCode(12), BoxCode(13),
    BoxCode(14), BoxCode(15), BoxCode(16), BoxCode(17), BoxCode(18), BoxCode(19), BoxCode(20),
    BoxCode(21), BoxCode(22), BoxCode(23), BoxCode(24), BoxCode(25), BoxCode(26)};

PetscErrorCode ShellMult(Mat H, Vec x, Vec y) {
  void* ctx = nullptr;
  PetscCall(MatShellGetContext(H, &ctx));
  try {
    static_cast<MpmIncrementalPotential*>(ctx)->HessianMultiply(x, y);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

PetscErrorCode ShellDiagonal(Mat H, Vec d) {
  void* ctx = nullptr;
  PetscCall(MatShellGetContext(H, &ctx));
  try {
    static_cast<MpmIncrementalPotential*>(ctx)->HessianDiagonal(d);
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

PetscErrorCode ShellInvertBlockDiagonal(Mat H, const PetscScalar** values) {
  void* ctx = nullptr;
  PetscCall(MatShellGetContext(H, &ctx));
  try {
    *values = static_cast<MpmIncrementalPotential*>(ctx)->InverseHessianDiagonalBlocks();
  } catch (const std::exception& e) {
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "%s", e.what());
  }
  return 0;
}

Mat3 Projector(const NodeConstraint& c) {
  switch (c.kind) {
    case Kind::kFree: return Mat3::Identity();
    case Kind::kSticky: return Mat3::Zero();
    case Kind::kSlip: return Mat3::Identity() - c.normal * c.normal.transpose();
  }
  return Mat3::Identity();
}

}  // namespace

MpmIncrementalPotential::MpmIncrementalPotential(const MpmDomain& domain, StepGrid& step,
                                                 const MaterialTable& materials,
                                                 const std::vector<PlasticityParameters>& plasticity,
                                                 std::vector<NodeConstraint> constraints,
                                                 double dt, const Vec3& gravity, bool matrix_free,
                                                 const char* hessian_type)
    : domain_(domain),
      step_(step),
      materials_(materials),
      plasticity_(plasticity),
      constraints_(std::move(constraints)),
      dt_(dt),
      gravity_(gravity),
      matrix_free_(matrix_free),
      hessian_type_(hessian_type ? hessian_type : MATBAIJ) {
  grid_info_.dx = domain_.dx();
  grid_info_.first_global = step_.begin;
  grid_info_.n_global = step_.n_global;
  grid_info_.owned_nodes.reserve(step_.owned_nodes.size());
  for (const int i : step_.owned_nodes) {
    const Eigen::Vector3i node = step_.grid.Node(i);
    grid_info_.owned_nodes.push_back({node[0], node[1], node[2]});
  }
  dv_local_.reset(CreateVector());
  v_work_.assign(3 * static_cast<std::size_t>(step_.grid.NodeCount()), 0.0);
  dv_work_.assign(v_work_.size(), 0.0);
}

MpmIncrementalPotential::~MpmIncrementalPotential() = default;

double MpmIncrementalPotential::Hardening(std::size_t p) const {
  const PlasticityParameters& plastic = plasticity_[domain_.particles().material[p]];
  return plastic.model == PlasticityModel::kSnow
             ? SnowHardening(domain_.particles().plastic[p].Jp, plastic.xi)
             : 1.0;
}

void MpmIncrementalPotential::ProjectNode(int node, double* g3) const {
  const NodeConstraint& c = constraints_[node];
  if (c.kind == Kind::kFree) return;
  Eigen::Map<Vec3> g(g3);
  g = Projector(c) * g;
}

void MpmIncrementalPotential::AddToOwnedNodes(std::size_t p, const Mat3& M, double* out) const {
  const StencilCache& cache = step_.cache;
  const Stencil& s = cache.stencil[p];
  const int n_owned_nodes = static_cast<int>(step_.owned_nodes.size());
  ForEachStencilNode([&](int n, int a, int b, int c) {
    const int lf = step_.local_form[cache.node[p][n]];
    if (lf < 0 || lf >= n_owned_nodes) return;
    const Vec3 f = M * s.grad_w_ip(a, b, c);
    for (int d = 0; d < 3; ++d) out[3 * lf + d] += f[d];
  });
}

void MpmIncrementalPotential::LoadVelocities(Vec dv) {
  if (dv != dv_local_) OPTISTEP_PETSC(VecCopy(dv, dv_local_));
  const GhostedLocalView local(dv_local_);
  const PetscScalar* la = local.data();
  const std::vector<double>& v = step_.grid.v;
  for (std::size_t i = 0; i < step_.local_form.size(); ++i) {
    const int lf = step_.local_form[i];
    // Nodes below the mass floor (MpmDomain::BuildStepGrid) are no unknowns: free flight.
    for (int d = 0; d < 3; ++d)
      v_work_[3 * i + d] = v[3 * i + d] + (lf >= 0 ? la[3 * lf + d] : dt_ * gravity_[d]);
  }
}

void MpmIncrementalPotential::Project(Vec d) const {
  PetscScalar* da = nullptr;
  OPTISTEP_PETSC(VecGetArray(d, &da));
  for (std::size_t k = 0; k < step_.owned_nodes.size(); ++k) ProjectNode(step_.owned_nodes[k], da + 3 * k);
  OPTISTEP_PETSC(VecRestoreArray(d, &da));
}

PetscReal MpmIncrementalPotential::Evaluate(Vec dv, Vec g) { return Assemble(dv, g, true); }

PetscReal MpmIncrementalPotential::Assemble(Vec dv, Vec g, bool project) {
  LoadVelocities(dv);
  const Particles& particles = domain_.particles();
  const StencilCache& cache = step_.cache;
  const int n_owned_nodes = static_cast<int>(step_.owned_nodes.size());
  // Test g, never ga: a rank without unknowns gets a null array, and must restore it all
  // the same, or g keeps the norm VecSet cached and VecNorm(g) skips its collective there.
  PetscScalar* ga = nullptr;
  if (g) {
    OPTISTEP_PETSC(VecSet(g, 0.0));
    OPTISTEP_PETSC(VecGetArray(g, &ga));
  }
  double energy = 0.0;
  // sum_p V0_p Psi(F_p(dv)) and its gradient dt V0_p P(F_p) (F_p^n)^T grad_w_ip (HOT eq. 1-2).
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const Mat3& F_n = particles.F[p];
    const Mat3 F = (Mat3::Identity() + dt_ * VelocityGradient(cache, p, v_work_.data())) * F_n;
    const ElasticMaterial& material = *materials_[particles.material[p]];
    const double scale = particles.V0[p] * Hardening(p);
    double psi = 0.0;
    if (g) {
      Mat3 P;
      psi = material.PsiAndP(F, &P);
      AddToOwnedNodes(p, dt_ * scale * P * F_n.transpose(), ga);
    } else {
      psi = material.Psi(F);
    }
    if (p < domain_.n_owned()) energy += scale * psi;
  }
  // 1/2 m |dv|^2 - dt m g . dv on owned nodes.
  for (int k = 0; k < n_owned_nodes; ++k) {
    const int i = step_.owned_nodes[k];
    const double m = step_.grid.m[i];
    Vec3 dvi;
    for (int d = 0; d < 3; ++d) dvi[d] = v_work_[3 * i + d] - step_.grid.v[3 * i + d];
    energy += 0.5 * m * dvi.squaredNorm() - dt_ * m * gravity_.dot(dvi);
    if (!nodal_forces_.empty()) {
      const Eigen::Map<const Vec3> f(&nodal_forces_[3 * static_cast<std::size_t>(i)]);
      energy -= dt_ * f.dot(dvi);
      if (g)
        for (int d = 0; d < 3; ++d) ga[3 * k + d] -= dt_ * f[d];
    }
    if (!friction_scale_.empty()) {
      Vec3 friction = Vec3::Zero();
      energy += FrictionTerm(i, &friction, nullptr);
      if (g)
        for (int d = 0; d < 3; ++d) ga[3 * k + d] += friction[d];
    }
    if (g) {
      for (int d = 0; d < 3; ++d) ga[3 * k + d] += m * dvi[d] - dt_ * m * gravity_[d];
      if (project) ProjectNode(i, ga + 3 * k);
    }
  }
  if (g) OPTISTEP_PETSC(VecRestoreArray(g, &ga));
  double total = 0.0;
  MPI_Allreduce(&energy, &total, 1, MPI_DOUBLE, MPI_SUM, domain_.comm());
  return total;
}

Mat MpmIncrementalPotential::NewMatrix() {
  const PetscInt n = 3 * static_cast<PetscInt>(step_.owned_nodes.size());
  const PetscInt N = 3 * step_.n_global;
  Mat H = nullptr;
  if (matrix_free_) {
    // Block size 3 before the type is set, for point-block Jacobi (PCPBJACOBI).
    OPTISTEP_PETSC(MatCreate(domain_.comm(), &H));
    OPTISTEP_PETSC(MatSetSizes(H, n, n, N, N));
    OPTISTEP_PETSC(MatSetBlockSize(H, 3));
    OPTISTEP_PETSC(MatSetType(H, MATSHELL));
    OPTISTEP_PETSC(MatShellSetContext(H, const_cast<MpmIncrementalPotential*>(this)));
    OPTISTEP_PETSC(MatShellSetOperation(H, MATOP_MULT, reinterpret_cast<void (*)(void)>(ShellMult)));
    OPTISTEP_PETSC(
        MatShellSetOperation(H, MATOP_GET_DIAGONAL, reinterpret_cast<void (*)(void)>(ShellDiagonal)));
    OPTISTEP_PETSC(MatShellSetOperation(H, MATOP_INVERT_BLOCK_DIAGONAL,
                                        reinterpret_cast<void (*)(void)>(ShellInvertBlockDiagonal)));
    OPTISTEP_PETSC(MatSetOption(H, MAT_SYMMETRIC, PETSC_TRUE));
    return H;
  }
  // BAIJ (the 5^3 block stencil of HOT's grid) unless the minimizer asks for another;
  // -hessian_mat_type aij for GAMG or hypre. Preallocated for exactly the rows' layout
  // (BuildRowLayout): the active nodes of the 5^3 box around each owned node less the
  // couplings of sticky nodes.
  if (!rows_.laid_out()) BuildRowLayout();
  return rows_.NewMatrix(domain_.comm(), hessian_type_);
}

void MpmIncrementalPotential::BuildRowLayout() {
  // Row k (owned node i): the active, non-sticky nodes of the 5^3 box around i, sorted
  // by global id; slot_of_offset_ maps a box offset to the slot in that list.
  const LocalGrid& grid = step_.grid;
  const int n_owned_nodes = static_cast<int>(step_.owned_nodes.size());
  rows_.Reset(step_.begin);
  slot_of_offset_.assign(static_cast<std::size_t>(n_owned_nodes) * 125, -1);
  diagonal_slot_.assign(n_owned_nodes, -1);
  row_node_.clear();
  std::vector<std::pair<PetscInt, int>> entries;
  for (int k = 0; k < n_owned_nodes; ++k) {
    const int i = step_.owned_nodes[k];
    const Eigen::Vector3i node = grid.Node(i);
    entries.clear();
    const bool sticky_row = constraints_[i].kind == Kind::kSticky;
    for (int o = 0; o < 125; ++o) {
      const Eigen::Vector3i offset(o % 5 - 2, (o / 5) % 5 - 2, o / 25 - 2);
      const int j = grid.Index(node + offset);
      if (j < 0 || step_.petsc_id[j] < 0) continue;
      const bool diagonal = o == 62;
      if (!diagonal && (sticky_row || constraints_[j].kind == Kind::kSticky)) continue;
      entries.emplace_back(step_.petsc_id[j], o);
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& [id, o] : entries) {
      const PetscInt slot = rows_.AddColumn(id);
      slot_of_offset_[static_cast<std::size_t>(k) * 125 + o] = static_cast<int>(slot);
      if (o == 62) diagonal_slot_[k] = static_cast<int>(slot);
      row_node_.push_back(grid.Index(node + Eigen::Vector3i(o % 5 - 2, (o / 5) % 5 - 2, o / 25 - 2)));
    }
    rows_.EndRow();
  }
  rows_.Zero();
}

Mat MpmIncrementalPotential::CreateHessian() {
  if (!hessian_) hessian_.reset(NewMatrix());
  return OwnedMat::Shared(hessian_).release();
}

bool MpmIncrementalPotential::HessianPatternIs(Mat H) {
  if (matrix_free_) return false;
  if (!rows_.laid_out()) BuildRowLayout();
  return rows_.SamePattern(H);
}

void MpmIncrementalPotential::Hessian(Vec dv, Mat H) {
  ScopedPhase phase(kHessianPhase);
  LoadVelocities(dv);
  const Particles& particles = domain_.particles();
  const StencilCache& cache = step_.cache;
  const int n_owned_nodes = static_cast<int>(step_.owned_nodes.size());
  if (matrix_free_) {
    // Keep dP/dF per particle; products are formed in HessianMultiply.
    stiffness_.resize(particles.size());
    for (std::size_t p = 0; p < particles.size(); ++p) {
      const Mat3 F = (Mat3::Identity() + dt_ * VelocityGradient(cache, p, v_work_.data())) * particles.F[p];
      stiffness_[p] = Hardening(p) * materials_[particles.material[p]]->dPdF(F, true);
    }
    if (!friction_scale_.empty()) {
      friction_blocks_.assign(n_owned_nodes, Mat3::Zero());
      for (int k = 0; k < n_owned_nodes; ++k)
        FrictionTerm(step_.owned_nodes[k], nullptr, &friction_blocks_[k]);
    }
    return;
  }
  // Blocks are summed into row-wise buffers laid out like the matrix rows (neighbours
  // in the 5^3 box, sorted by global id) and handed to PETSc one whole row at a time:
  // per-particle MatSetValuesBlocked would search each row 729 times per particle.
  if (!rows_.laid_out()) BuildRowLayout();
  rows_.Zero();
  double a[kStencilNodes][3];
  double G[kStencilNodes][3][9];  // G[m][k] = column-major 3x3 block of C (a_m (x) I), rows 3k..3k+2
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const std::array<int, kStencilNodes>& nodes = cache.node[p];
    // slots[n]: the slot table (by box code) of stencil node n's row, or null when this
    // rank does not assemble that row (not owned, inactive or sticky).
    const int* slots[kStencilNodes];
    bool any_row = false;
    for (int n = 0; n < kStencilNodes; ++n) {
      const int lf = step_.local_form[nodes[n]];
      const bool row = lf >= 0 && lf < n_owned_nodes && constraints_[nodes[n]].kind != Kind::kSticky;
      slots[n] = row ? &slot_of_offset_[125 * static_cast<std::size_t>(lf)] : nullptr;
      any_row |= row;
    }
    if (!any_row) continue;
    const Mat3& F_n = particles.F[p];
    const Mat3 F = (Mat3::Identity() + dt_ * VelocityGradient(cache, p, v_work_.data())) * F_n;
    const Mat9 C = materials_[particles.material[p]]->dPdF(F, true);
    // With a_n = F_n^T grad_w_n, dv_n enters vec(dF) as dt vec(dv_n a_n^T), so
    //   K_nm[r][s] = dt^2 V0 s_p sum_{k,l} C[r + 3k][s + 3l] a_n[k] a_m[l],
    // formed as G_m = C (a_m (x) I) (9x3), then K_nm[r][s] = sum_k a_n[k] G_m[r + 3k][s]
    // (G is stored by k as column-major 3x3 blocks, so K_nm is a sum of three 9-vectors).
    // C is symmetric (a Hessian of Psi), so K_mn = K_nm^T: each pair is formed once.
    const Stencil& st = cache.stencil[p];
    ForEachStencilNode([&](int n, int ia, int ib, int ic) {
      const Vec3 an = F_n.transpose() * st.grad_w_ip(ia, ib, ic);
      for (int k = 0; k < 3; ++k) a[n][k] = an[k];
    });
    for (int m = 0; m < kStencilNodes; ++m)
      for (int k = 0; k < 3; ++k)
        for (int t = 0; t < 3; ++t)
          for (int d = 0; d < 3; ++d)
            G[m][k][d + 3 * t] = C(d + 3 * k, t) * a[m][0] + C(d + 3 * k, t + 3) * a[m][1] +
                                 C(d + 3 * k, t + 6) * a[m][2];
    const double scale = dt_ * dt_ * particles.V0[p] * Hardening(p);
    for (int n = 0; n < kStencilNodes; ++n) {
      // Stencil node m = a + 3 b + 9 c sits at box offset (a, b, c) - (a_n, b_n, c_n)
      // from node n: box code 62 + (a - a_n) + 5 (b - b_n) + 25 (c - c_n).
      const int code_n = kBoxCode[n];
      const double a0 = scale * a[n][0], a1 = scale * a[n][1], a2 = scale * a[n][2];
      for (int m = n; m < kStencilNodes; ++m) {
        // -1: inactive or sticky column, or a row this rank does not assemble.
        const int slot_nm = slots[n] ? slots[n][62 + kBoxCode[m] - code_n] : -1;
        const int slot_mn = m != n && slots[m] ? slots[m][62 + code_n - kBoxCode[m]] : -1;
        if (slot_nm < 0 && slot_mn < 0) continue;
        const double(*Gm)[9] = G[m];
        double local[9];  // K_nm, column-major, summed in registers
        for (int e = 0; e < 9; ++e) local[e] = a0 * Gm[0][e] + a1 * Gm[1][e] + a2 * Gm[2][e];
        if (slot_nm >= 0) {
          double* block = rows_.block(slot_nm);
          for (int e = 0; e < 9; ++e) block[e] += local[e];
        }
        if (slot_mn >= 0) {
          double* block = rows_.block(slot_mn);
          for (int t = 0; t < 3; ++t)
            for (int d = 0; d < 3; ++d) block[d + 3 * t] += local[t + 3 * d];
        }
      }
    }
  }
  const std::vector<PetscInt>& row_start = rows_.row_start();
  for (int k = 0; k < n_owned_nodes; ++k) {
    const int i = step_.owned_nodes[k];
    const double m = step_.grid.m[i];
    double* diag = rows_.block(diagonal_slot_[k]);
    const NodeConstraint& c = constraints_[i];
    if (c.kind == Kind::kSlip) {  // P_n K_nm P_m around slip nodes
      const Mat3 P = Projector(c);
      for (PetscInt s = row_start[k]; s < row_start[k + 1]; ++s) {
        Eigen::Map<Mat3> block(rows_.block(s));
        block = P * block;
      }
    }
    for (PetscInt s = row_start[k]; s < row_start[k + 1]; ++s) {
      const NodeConstraint& cm = constraints_[row_node_[s]];
      if (cm.kind != Kind::kSlip) continue;
      Eigen::Map<Mat3> block(rows_.block(s));
      block = block * Projector(cm);
    }
    for (int d = 0; d < 3; ++d) diag[4 * d] += m;
    if (!friction_scale_.empty()) {  // tangential: P B P = B
      Mat3 friction = Mat3::Zero();
      FrictionTerm(i, nullptr, &friction);
      Eigen::Map<Mat3>(diag) += friction;
    }
  }
  rows_.Insert(H);
}

void MpmIncrementalPotential::HessianMultiply(Vec x, Vec y) {
  // y = m x + P K (P x), K = sum_p dt^2 V0_p s_p A_p^T C_p A_p (see Hessian()).
  OPTISTEP_PETSC(VecCopy(x, dv_local_));
  const GhostedLocalView local(dv_local_);
  const PetscScalar* la = local.data();
  for (std::size_t i = 0; i < step_.local_form.size(); ++i) {
    const int lf = step_.local_form[i];
    for (int d = 0; d < 3; ++d) dv_work_[3 * i + d] = lf >= 0 ? la[3 * lf + d] : 0.0;
    if (lf >= 0) ProjectNode(static_cast<int>(i), &dv_work_[3 * i]);
  }
  const int n_owned_nodes = static_cast<int>(step_.owned_nodes.size());
  PetscScalar* ya = nullptr;
  OPTISTEP_PETSC(VecGetArray(y, &ya));
  for (int k = 0; k < 3 * n_owned_nodes; ++k) ya[k] = 0.0;
  const Particles& particles = domain_.particles();
  const StencilCache& cache = step_.cache;
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const Mat3& F_n = particles.F[p];
    const Mat3 dF = dt_ * VelocityGradient(cache, p, dv_work_.data()) * F_n;
    const Vec9 dP = stiffness_[p] * Eigen::Map<const Vec9>(dF.data());
    AddToOwnedNodes(p, dt_ * particles.V0[p] * Eigen::Map<const Mat3>(dP.data()) * F_n.transpose(), ya);
  }
  for (int k = 0; k < n_owned_nodes; ++k) {
    const int i = step_.owned_nodes[k];
    ProjectNode(i, ya + 3 * k);
    for (int d = 0; d < 3; ++d) ya[3 * k + d] += step_.grid.m[i] * la[3 * k + d];
    if (!friction_blocks_.empty())
      Eigen::Map<Vec3>(ya + 3 * k) += friction_blocks_[k] * Eigen::Map<const Vec3>(la + 3 * k);
  }
  OPTISTEP_PETSC(VecRestoreArray(y, &ya));
}

void MpmIncrementalPotential::HessianDiagonalBlocks(std::vector<double>* blocks) const {
  // Block (i, i) of the Hessian: m_i I + P_i K_ii P_i (m_i I on sticky nodes).
  const int n_owned_nodes = static_cast<int>(step_.owned_nodes.size());
  blocks->assign(9 * static_cast<std::size_t>(n_owned_nodes), 0.0);
  const Particles& particles = domain_.particles();
  const StencilCache& cache = step_.cache;
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const Mat3& F_n = particles.F[p];
    const Stencil& s = cache.stencil[p];
    const double scale = dt_ * dt_ * particles.V0[p];
    ForEachStencilNode([&](int n, int a, int b, int c) {
      const int i = cache.node[p][n];
      const int lf = step_.local_form[i];
      if (lf < 0 || lf >= n_owned_nodes || constraints_[i].kind == Kind::kSticky) return;
      const Vec3 an = F_n.transpose() * s.grad_w_ip(a, b, c);
      Eigen::Map<Mat3> block(&(*blocks)[9 * static_cast<std::size_t>(lf)]);
      for (int r = 0; r < 3; ++r)
        for (int t = 0; t < 3; ++t) {
          double sum = 0.0;
          for (int k = 0; k < 3; ++k)
            for (int l = 0; l < 3; ++l) sum += stiffness_[p](r + 3 * k, t + 3 * l) * an[k] * an[l];
          block(r, t) += scale * sum;
        }
    });
  }
  for (int k = 0; k < n_owned_nodes; ++k) {
    const int i = step_.owned_nodes[k];
    Eigen::Map<Mat3> block(&(*blocks)[9 * static_cast<std::size_t>(k)]);
    const NodeConstraint& c = constraints_[i];
    if (c.kind == Kind::kSlip) {
      const Mat3 P = Projector(c);
      block = P * block * P;
    }
    block += step_.grid.m[i] * Mat3::Identity();
    if (!friction_blocks_.empty()) block += friction_blocks_[k];
  }
}

void MpmIncrementalPotential::HessianDiagonal(Vec diag) {
  std::vector<double> blocks;
  HessianDiagonalBlocks(&blocks);
  PetscScalar* da = nullptr;
  OPTISTEP_PETSC(VecGetArray(diag, &da));
  for (std::size_t k = 0; k < blocks.size() / 9; ++k)
    for (int d = 0; d < 3; ++d) da[3 * k + d] = blocks[9 * k + 4 * d];
  OPTISTEP_PETSC(VecRestoreArray(diag, &da));
}

const double* MpmIncrementalPotential::InverseHessianDiagonalBlocks() {
  HessianDiagonalBlocks(&inverse_blocks_);
  for (std::size_t k = 0; k < inverse_blocks_.size() / 9; ++k) {
    Eigen::Map<Mat3> block(&inverse_blocks_[9 * k]);
    block = block.inverse().eval();
  }
  return inverse_blocks_.data();
}

void MpmIncrementalPotential::CharacteristicNormWeights(double epsilon, Vec w) {
  // HOT Sec. 5.2: tol_i = eps 24 dx^2 dt (sum_p w_ip m_p |dP/dF(I)|_F) / m_i.
  const Particles& particles = domain_.particles();
  const StencilCache& cache = step_.cache;
  const int n_owned_nodes = static_cast<int>(step_.owned_nodes.size());
  std::vector<double> stiffness_mass(n_owned_nodes, 0.0);
  for (std::size_t p = 0; p < particles.size(); ++p) {
    const double k = Hardening(p) * particles.mass[p] *
                     materials_[particles.material[p]]->dPdF(Mat3::Identity(), false).norm();
    const Stencil& s = cache.stencil[p];
    ForEachStencilNode([&](int n, int a, int b, int c) {
      const int lf = step_.local_form[cache.node[p][n]];
      if (lf >= 0 && lf < n_owned_nodes) stiffness_mass[lf] += s.w_ip(a, b, c) * k;
    });
  }
  const double dx = domain_.dx();
  PetscScalar* wa = nullptr;
  OPTISTEP_PETSC(VecGetArray(w, &wa));
  for (int k = 0; k < n_owned_nodes; ++k) {
    const int i = step_.owned_nodes[k];
    const double tol = constraints_[i].kind == Kind::kSticky
                           ? PETSC_INFINITY
                           : epsilon * 24.0 * dx * dx * dt_ * stiffness_mass[k] / step_.grid.m[i];
    for (int d = 0; d < 3; ++d) wa[3 * k + d] = tol;
  }
  OPTISTEP_PETSC(VecRestoreArray(w, &wa));
}

void MpmIncrementalPotential::InitialGuess(Vec dv, bool with_gravity) const {
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(dv, &a));
  for (std::size_t k = 0; k < step_.owned_nodes.size(); ++k) {
    const int i = step_.owned_nodes[k];
    const NodeConstraint& c = constraints_[i];
    const Vec3 v(step_.grid.v[3 * i], step_.grid.v[3 * i + 1], step_.grid.v[3 * i + 2]);
    const Vec3 free_part = with_gravity ? Vec3(dt_ * gravity_) : Vec3::Zero();
    const Mat3 P = Projector(c);
    const Vec3 guess = P * free_part + (Mat3::Identity() - P) * (c.velocity - v);
    for (int d = 0; d < 3; ++d) a[3 * k + d] = guess[d];
  }
  OPTISTEP_PETSC(VecRestoreArray(dv, &a));
}

std::vector<double> MpmIncrementalPotential::NormalImpulses(Vec dv) {
  // The normal impulse per unit mass the slip constraint absorbs at each node, dv_n (m/s).
  // At the minimizer the projected gradient vanishes, so the unprojected gradient of E is
  // the constraint's impulse on the node, g_i = m_i dv_i - dt (f_i + m_i g) = dt f_c,i,
  // along n_i: the reaction to the approach, to the weight of the material above and to
  // the elastic forces alike (Gast et al. 2015 Sec. 5.2 and 6; HOT, Wang et al. 2020,
  // projects the same constraint on the grid nodes).
  std::vector<double> normal_impulse(constraints_.size(), 0.0);
  OwnedVec g(CreateVector());
  Assemble(dv, g, false);
  // Owned nodes only: a ghost node's P2G mass is a partial sum.
  PetscScalar* ga = nullptr;
  OPTISTEP_PETSC(VecGetArray(g, &ga));
  for (std::size_t k = 0; k < step_.owned_nodes.size(); ++k) {
    const int i = step_.owned_nodes[k];
    const NodeConstraint& c = constraints_[i];
    const Vec3 g_i(ga[3 * k], ga[3 * k + 1], ga[3 * k + 2]);
    // A node the material pulls away from the object (n . g_i < 0) has no friction.
    ga[3 * k] = c.kind == Kind::kSlip && c.friction > 0.0
                    ? std::max(0.0, c.normal.dot(g_i)) / step_.grid.m[i]
                    : 0.0;
  }
  OPTISTEP_PETSC(VecRestoreArray(g, &ga));
  {
    const GhostedLocalView local(g);
    for (std::size_t i = 0; i < constraints_.size(); ++i)
      if (step_.local_form[i] >= 0) normal_impulse[i] = local.data()[3 * step_.local_form[i]];
  }
  return normal_impulse;
}

void MpmIncrementalPotential::SetFrictionPotential(const std::vector<double>& normal_impulse,
                                                   double epsilon_v) {
  friction_eps_ = epsilon_v;
  friction_scale_.assign(constraints_.size(), 0.0);
  for (std::size_t i = 0; i < constraints_.size(); ++i) {
    const NodeConstraint& c = constraints_[i];
    if (c.kind == Kind::kSlip && c.friction > 0.0)
      friction_scale_[i] = c.friction * step_.grid.m[i] * normal_impulse[i];
  }
}

double MpmIncrementalPotential::FrictionTerm(int i, Vec3* gradient, Mat3* hessian) const {
  const double scale = friction_scale_[i];
  if (!(scale > 0.0)) return 0.0;
  const NodeConstraint& c = constraints_[i];
  const Mat3 T = Projector(c);
  const Vec3 rel = Eigen::Map<const Vec3>(&v_work_[3 * static_cast<std::size_t>(i)]) - c.velocity;
  return SmoothedFriction(scale, T * rel, T, friction_eps_, gradient, hessian);
}

bool MpmIncrementalPotential::HasSlipFriction() const {
  int friction = 0;
  for (const NodeConstraint& c : constraints_) friction |= c.kind == Kind::kSlip && c.friction > 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &friction, 1, MPI_INT, MPI_MAX, domain_.comm());
  return friction != 0;
}

void MpmIncrementalPotential::NewGridVelocities(Vec dv, std::vector<double>* v_new) {
  // The bound after the solve, unless the friction potential is installed. Whether it is
  // must be judged alike on every rank before the collective HasSlipFriction: friction_eps_
  // is set on all of them (SetFrictionPotential is collective), while friction_scale_ is
  // empty on a rank without grid nodes.
  const bool friction = friction_eps_ == 0.0 && HasSlipFriction();
  std::vector<double> normal_impulse;
  if (friction) normal_impulse = NormalImpulses(dv);
  LoadVelocities(dv);
  *v_new = v_work_;
  for (std::size_t i = 0; i < constraints_.size() && friction; ++i) {
    Eigen::Map<Vec3> v(v_new->data() + 3 * i);
    v = CoulombBound(constraints_[i], normal_impulse[i], v);
  }
}

Vec3 MpmIncrementalPotential::CoulombBound(const NodeConstraint& c, double normal_impulse, const Vec3& v) {
  if (c.kind != Kind::kSlip || c.friction <= 0.0) return v;
  // Coulomb friction after the solve (Gast Sec. 5.2): the tangential relative velocity
  // falls by at most mu dv_n, and stops rather than reverses.
  const Vec3 rel = v - c.velocity;
  const Vec3 normal_part = c.normal.dot(rel) * c.normal;
  const Vec3 tangential = rel - normal_part;
  const double speed = tangential.norm();
  const double keep = speed > 0.0 ? 1.0 - CoulombStoppedFraction(c.friction * normal_impulse, speed) : 0.0;
  return c.velocity + normal_part + keep * tangential;
}

void MpmIncrementalPotential::ApplyCoulombBound(const std::vector<double>& normal_impulse, Vec dv) const {
  PetscScalar* a = nullptr;
  OPTISTEP_PETSC(VecGetArray(dv, &a));
  for (std::size_t k = 0; k < step_.owned_nodes.size(); ++k) {
    const int i = step_.owned_nodes[k];
    const Vec3 v_old(step_.grid.v[3 * i], step_.grid.v[3 * i + 1], step_.grid.v[3 * i + 2]);
    Eigen::Map<Vec3> dv_i(a + 3 * k);
    dv_i = CoulombBound(constraints_[i], normal_impulse[i], v_old + dv_i) - v_old;
  }
  OPTISTEP_PETSC(VecRestoreArray(dv, &a));
}

}  // namespace optistep::mpm
