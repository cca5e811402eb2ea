#pragma once
// The sections of a scene (app/SceneConfig.hpp composes them), and what the layers below
// app/ take of it: ModelConfig (model/, fem/, mpm/), ParticlesConfig (particles/),
// IntegratorConfig (integrators/), each section's struct (SolverConfig for solvers/, ...).
// Scenes are data; the solver never hard-codes geometry, materials or motion. Units are SI
// throughout.
//
// Reading rules (io/SceneSections.cpp, app/SceneConfig.cpp): unknown keys, wrong types and
// out-of-range values are InputErrors whose message names the file and the key path, e.g.
//   "scene.yaml: bodies[0].material.E: expected a positive number, got '-3'".
// Every rank parses the same file, so errors are raised identically on every rank.
#include <array>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/Types.hpp"
#include "io/SceneChoices.hpp"
#include "io/SceneKeys.hpp"

namespace optistep {


/// Plasticity of an MPM material: a return mapping applied per particle after each step
/// (src/mpm/Plasticity.hpp, which converts this to mpm::PlasticityParameters with
/// PlasticityModelFromName(model), xi = hardening, tau_Y = yield_stress). Defaults of the
/// snow model: Stomakhin et al. 2013, "A material point method for snow simulation",
/// Table 2. Each model takes only its own keys.
struct PlasticityConfig {
  std::string model = "none";  ///< none | snow | von_mises
  double theta_c = 2.5e-2;     ///< snow: critical compression (-), in (0, 1)
  double theta_s = 7.5e-3;     ///< snow: critical stretch (-), >= 0
  double hardening = 10.0;     ///< snow: hardening coefficient xi (-), >= 0
  double yield_stress = 0.0;   ///< von_mises: tau_Y (Pa), > 0, required (no default)
};

/// Constitutive model of a body. E in Pa, nu dimensionless in [0, 0.5), density kg/m^3.
struct MaterialConfig {
  std::string model = "fixed_corotated";  ///< fixed_corotated | stable_neo_hookean | linear
  double E = 0.0;
  double nu = 0.0;
  double density = 0.0;
  PlasticityConfig plasticity;  ///< MPM only (an InputError in FEM scenes)
};

/// An analytic solid that MPM particles are sampled from (src/mpm/Shapes.hpp), in the
/// body's own coordinates (m): the body transform then places it, so a shape point x
/// ends up at R (s .* x) + t (a sphere under a non-uniform scale is an ellipsoid).
/// center defaults to the origin and axis to +y (normalized on read).
struct ShapeConfig {
  enum class Kind { kBox, kSphere, kCylinder, kTorus };
  Kind kind = Kind::kBox;
  Vec3 box_min = Vec3::Zero();  ///< kBox, box_min < box_max componentwise
  Vec3 box_max = Vec3::Zero();  ///< kBox
  Vec3 center = Vec3::Zero();   ///< kSphere, kCylinder, kTorus
  Vec3 axis = Vec3::UnitY();    ///< kCylinder, kTorus: axis of revolution
  double radius = 0.0;          ///< kSphere, kCylinder, > 0
  double half_length = 0.0;     ///< kCylinder (capped): half the length along axis, > 0
  double major_radius = 0.0;    ///< kTorus: R, > 0
  double minor_radius = 0.0;    ///< kTorus: r, in (0, R)
};

/// Initial conditions of a body beyond its uniform initial_velocity (key
/// bodies[i].initial_conditions; src/model/InitialConditions.hpp applies them). The initial
/// velocity of a node (FEM) or particle (MPM) at its initial position x (m, after the
/// prestrain) is initial_velocity + omega axis x (x - center) + the expression's value +
/// the table's row; Dirichlet nodes start at rest as before.
struct InitialConditionsConfig {
  /// Rigid angular velocity omega (rad/s, right-handed about axis, normalized on read)
  /// about center (m; default the body's center of mass at its initial positions).
  bool has_angular_velocity = false;
  Vec3 axis = Vec3::UnitZ();
  double angular_velocity = 0.0;
  bool has_center = false;
  Vec3 center = Vec3::Zero();
  /// Velocity field (m/s): three muparser expressions in x, y, z (m), one per component;
  /// empty: none. Checked by muparser when the scene is read.
  std::vector<std::string> velocity_expression;
  /// FEM only: a text file of rows "node vx vy vz" (node: 0-based index in the body's
  /// mesh file, m/s; '#' starts a comment), resolved like mesh; empty: none.
  std::string velocity_table;
  /// Prestrain: the initial positions are center + A (X - center) with X the rest
  /// positions (the rest shape is unchanged), A = prestrain_scale (uniform or per axis)
  /// or a full deformation gradient, det A > 0; center defaults to the body's center of
  /// mass at rest.
  bool has_prestrain = false;
  Mat3 prestrain = Mat3::Identity();
  bool has_prestrain_center = false;
  Vec3 prestrain_center = Vec3::Zero();
};

/// One body, from exactly one source: a tetrahedral mesh file (.ele/.node pair given by
/// either file, or .msh), or, in MPM scenes only, a closed triangle surface (.off or
/// .stl) or an analytic shape. The transform places every source; one material; an
/// initial velocity (m/s).
/// A body's copies (key `copies`): a grid of count[0] x count[1] x count[2] copies,
/// copy (i, j, k) moved by (i spacing[0], j spacing[1], k spacing[2]) (m) plus a jitter
/// drawn uniformly from [-jitter, jitter]^3 (m) by a 32-bit Mersenne Twister seeded with
/// `seed`. ReadSceneConfig replaces the body by its copies, named <name>.<index> (index =
/// i + count[0] (j + count[1] k)), so "125 tori in a bowl" is one body entry.
struct CopiesConfig {
  std::array<int, 3> count = {1, 1, 1};
  Vec3 spacing = Vec3::Zero();
  double jitter = 0.0;
  int seed = 1;
};

struct BodyConfig {
  enum class Source { kMesh, kSurface, kShape };
  std::string name;
  Source source = Source::kMesh;
  std::string mesh;     ///< kMesh; resolved against the scene file's folder unless absolute
  std::string surface;  ///< kSurface (MPM only); resolved like mesh
  ShapeConfig shape;    ///< kShape (MPM only)
  TransformConfig transform;
  MaterialConfig material;
  Vec3 initial_velocity = Vec3::Zero();
  InitialConditionsConfig initial_conditions;
  CopiesConfig copies;  ///< expanded by ReadSceneConfig: a read scene's bodies have one each
};

/// Which nodes a boundary condition holds. Positions are tested after the transform,
/// at t = 0.
struct SelectionConfig {
  enum class Kind { kBox, kAxisEnd };
  Kind kind = Kind::kBox;
  // kBox: nodes with box_min <= x <= box_max (componentwise), in m.
  Vec3 box_min = Vec3::Zero();
  Vec3 box_max = Vec3::Zero();
  // kAxisEnd: nodes within `within` (a fraction of the extent along `axis`) of the
  // body's `end` ("min" or "max") along axis 0, 1 or 2 (x, y, z).
  int axis = 0;
  bool end_max = false;
  double within = 0.01;
  /// Restrict to one body by name; empty means all bodies.
  std::string body;
};

/// One scripted motion segment, active for t in [start, end) (s). Outside all segments
/// the nodes stay where the previous segments left them.
struct MotionSegmentConfig {
  enum class Kind { kTranslate, kRotate };
  Kind kind = Kind::kTranslate;
  double start = 0.0;
  double end = std::numeric_limits<double>::infinity();
  Vec3 velocity = Vec3::Zero();  ///< kTranslate, m/s
  Vec3 axis = Vec3::UnitX();     ///< kRotate, normalized on read
  double angular_velocity = 0.0; ///< kRotate, rad/s, right-handed about axis
  /// kRotate: a point on the rotation axis (m). When not given in the scene
  /// (has_center = false) the user of the segment picks it: for a boundary condition the
  /// centroid of the selected nodes at t = 0, for a collision object its own center
  /// (sphere, cylinder, torus), point (half-space) or box center.
  Vec3 center = Vec3::Zero();
  bool has_center = false;
};

/// Dirichlet condition: the selected nodes follow the segments (an empty list holds
/// them fixed).
struct BoundaryConditionConfig {
  std::string name;
  SelectionConfig select;
  std::vector<MotionSegmentConfig> motion;
};

/// Analytic collision object, handled as a penalty energy k * m_i * max(-phi, 0)^3
/// per node (Gast et al. 2015 Sec. 5.2) with Coulomb friction applied after the solve.
/// phi is the signed distance, negative inside the obstacle. motion moves MPM objects and,
/// in FEM scenes, those of the backward_euler and quasi_static integrators (posed at each
/// step's end t_{n+1}; an InputError with the other FEM integrators).
/// kBowl: a hemispherical shell inner_radius <= |x - center| <= outer_radius on the side
/// (x - center) . axis <= 0, open toward +axis (bodies live in its cavity).
/// kBoxWithHole: the box [min, max] minus the infinite cylinder of radius hole_radius
/// about the line through center along the coordinate axis `axis` (the hole goes through).
struct CollisionObjectConfig {
  enum class Kind { kHalfSpace, kSphere, kBox, kCylinder, kTorus, kBowl, kBoxWithHole };
  Kind kind = Kind::kHalfSpace;
  std::string name;
  Vec3 point = Vec3::Zero();   ///< kHalfSpace: a point on the plane
  Vec3 normal = Vec3::UnitY(); ///< kHalfSpace: outward normal (normalized on read)
  Vec3 center = Vec3::Zero();  ///< kSphere, kCylinder, kTorus, kBowl; kBoxWithHole: on the hole's axis
  double radius = 0.0;         ///< kSphere, kCylinder, m, > 0
  Vec3 box_min = Vec3::Zero(); ///< kBox, kBoxWithHole: box_min < box_max componentwise
  Vec3 box_max = Vec3::Zero(); ///< kBox, kBoxWithHole
  Vec3 axis = Vec3::UnitY();   ///< kCylinder, kTorus, kBowl, kBoxWithHole (normalized on read)
  /// kCylinder: capped at |axial offset from center| < half_length (m, > 0); infinite
  /// (uncapped) by default.
  double half_length = std::numeric_limits<double>::infinity();
  double major_radius = 0.0;   ///< kTorus: R, m, > 0
  double minor_radius = 0.0;   ///< kTorus: r, m, in (0, R)
  double inner_radius = 0.0;   ///< kBowl: m, in (0, outer_radius)
  double outer_radius = 0.0;   ///< kBowl: m, > 0
  double hole_radius = 0.0;    ///< kBoxWithHole: m, > 0, the hole inside the box's section
  double stiffness = 1e5;      ///< k, 1/(m s^2): energy per unit mass per m^3 penetration
  double friction = 0.0;       ///< Coulomb coefficient mu >= 0
  /// FEM: penalty (the energy k m max(-phi, 0)^3, Gast et al. 2015 Sec. 5.2) or
  /// constraint (phi >= 0 held by gradient projection, Sec. 3.2 and 5.1;
  /// fem/ConstraintCollisions.hpp).
  CollisionMethod method = CollisionMethod::kPenalty;
  /// FEM: contact damping ratio zeta >= 0 (dimensionless), the penalty spring's dashpot as
  /// a fraction of its critical damping (fem/ContactDamping.hpp); 0: undamped.
  double damping = 0.0;
  /// MPM grid-node projection at the object: sticky zeroes the node's velocity relative
  /// to the object, slip removes only its inward normal part. Read in FEM scenes too,
  /// and ignored there.
  GridBoundary boundary = GridBoundary::kSticky;
  /// Scripted rigid motion of the object, same segments as a boundary condition's;
  /// empty: the object stays put.
  std::vector<MotionSegmentConfig> motion;
};

/// A dimensionless function of time tau(t) that scales a load or gravity (top-level key
/// time_functions, referenced by name, or given inline where a load names one;
/// src/model/TimeFunction.hpp evaluates it).
///  - constant: tau = value;
///  - ramp: tau = from for t <= start, to for t >= end, linear in between (end > start);
///  - table: linear interpolation of (t, value) points (t strictly increasing), constant
///    beyond the first and last point.
struct TimeFunctionConfig {
  enum class Kind { kConstant, kRamp, kTable };
  Kind kind = Kind::kConstant;
  std::string name;        ///< its key in time_functions; empty when inline
  double value = 1.0;      ///< kConstant
  double start = 0.0;      ///< kRamp, s
  double end = 0.0;        ///< kRamp, s
  double from = 0.0;       ///< kRamp
  double to = 1.0;         ///< kRamp
  std::vector<std::pair<double, double>> points;  ///< kTable: (t in s, tau)
};

/// An external load (key loads), an energy term of the incremental potential scaled by
/// its time function at the end of each step (src/fem/FemLoads.hpp; MPM: point loads and
/// body forces, src/mpm/MpmLoads.hpp):
///  - point: the total force `force` (N), split equally over the selected nodes (FEM) or
///    the particles the selection holds at each step's start (MPM);
///  - traction: `traction` (Pa, force per unit rest area) on the boundary faces whose three
///    nodes are selected (FEM), a dead load;
///  - pressure: `pressure` (Pa, > 0 pushes into the body) on the selected boundary faces
///    (FEM), follower (normal to the deformed face; default) or dead (normal to the rest face);
///  - body_force: `acceleration` (m/s^2, force per unit mass) on a body or all bodies.
struct LoadConfig {
  enum class Kind { kPoint, kTraction, kPressure, kBodyForce };
  Kind kind = Kind::kPoint;
  std::string name;
  SelectionConfig select;           ///< kPoint, kTraction, kPressure
  Vec3 force = Vec3::Zero();        ///< kPoint, N
  Vec3 traction = Vec3::Zero();     ///< kTraction, Pa
  double pressure = 0.0;            ///< kPressure, Pa
  bool follower = true;             ///< kPressure
  Vec3 acceleration = Vec3::Zero(); ///< kBodyForce, m/s^2
  std::string body;                 ///< kBodyForce: one body by name; empty: all (MPM: all only)
  TimeFunctionConfig time_function; ///< constant 1 unless given
};

/// Time stepping. Steps end on frame boundaries: each frame of length frame_dt is cut
/// into ceil(frame_dt / dt) equal steps.
struct TimeConfig {
  double dt = 0.0;         ///< requested step, s, > 0
  double frame_dt = 0.0;   ///< s, > 0 (scene gives frame_rate in 1/s or frame_dt)
  int frames = 0;          ///< number of frames (scene gives frames or end_time)
  int max_dt_halvings = 8; ///< retries of a failed step with dt halved
};

/// DOT's subdomains (Li et al. 2019; top-level key `dot`, FEM only): the defaults of the
/// subdomain initializer's options (-dot_subdomains_per_rank, -dot_merge;
/// src/solvers/SubdomainInitializer.hpp).
struct DotConfig {
  /// Subdomains per rank: each rank's counted tets split again by METIS_PartMeshDual
  /// (ncommon = 3), integer >= 1; 0 (the default): subdomains sized by subdomain_nodes.
  int subdomains_per_rank = 0;
  /// Target nodes per subdomain: the whole mesh split into max(1, round(N / this)) parts
  /// by METIS, each rank's share of a part one subdomain; integer >= 1 (default: ours, chosen
  /// on bar17K and the twisted bars: docs/methods/dot.md).
  int subdomain_nodes = 3000;
  /// How the back-solves of the subdomains are merged at shared nodes: "average" (DOT's
  /// code: the mean over the subdomains holding the node) or "symmetric" (a partition of
  /// unity applied on both sides: an SPD additive Schwarz). Empty: symmetric with a coarse
  /// space, average without.
  std::string merge;
  /// Coarse space: "rigid" (two-level Schwarz on the rigid-body modes of each subdomain,
  /// weighted by a partition of unity) or "none" (one level, DOT's).
  std::string coarse = "rigid";
};

/// Tets from which a FEM scene of one body that names no solver.method is minimized by
/// newton_mg instead of newton (scenes of several bodies keep newton: the embedded-grid
/// multigrid's coarsest level grows with the body count, docs/methods/multigrid.md). On the size ladder of docs/benchmarks/2026-11-28-fem-ladder.md
/// (2 ranks) newton with Jacobi is up to 1.6x faster below 100k tets, and newton_mg 2.6x
/// faster on the elephant's impact at 147k tets and 3.2x at 398k, about level on the fast
/// twisted bar at 781k and 2.4x faster on the stiff one at 3.8M.
constexpr int kNewtonMgDefaultTets = 150000;

/// Per-step minimizer settings (Gast et al. 2015 Sec. 3.1; Li et al. 2019; Wang et al.
/// 2020). These are the defaults of the minimizer's options (-newton_*, -lbfgs_*, -dot_*;
/// docs/user/solver-options.md), which override them.
struct SolverConfig {
  /// newton | newton_mg | lbfgs | hot | dot (src/solvers/MinimizerFactory.hpp)
  MinimizerMethod method = MinimizerMethod::kNewton;
  /// Whether the scene (or --set) named solver.method; without it a FEM mesh of at least
  /// kNewtonMgDefaultTets tets is minimized by newton_mg (CreateMinimizer).
  bool method_given = false;
  /// Termination: characteristic_norm (default) or absolute (Gast's tau).
  Termination termination = Termination::kCharacteristicNorm;
  /// Characteristic-norm epsilon. When the scene does not give it: 1e-5 for FEM (DOT, Li
  /// et al. 2019, Sec. 6; the value here), 1e-7 for MPM (HOT, Wang et al. 2020, Sec. 7.1).
  double cn_epsilon = 1e-5;
  /// Rigid-motion test of the characteristic-norm termination: the net force and torque of
  /// the residual of every body no Dirichlet condition holds, over its weight and inertia,
  /// must stay below it (src/solvers/ConvergenceTest.hpp). Ours, no paper gives one: 1e-3,
  /// a body's mean acceleration right to 0.1% of gravity in every step, at the cost of
  /// hardly any Newton iterations (docs/methods/newton.md, "Termination").
  double rigid_epsilon = 1e-3;
  double tau = 1e-6;          ///< absolute gradient norm tolerance (N), "absolute" only
  int max_iterations = 200;   ///< Newton iteration cap per step
  double kappa = 1e-2;        ///< downhill check (Gast Sec. 3.1); MPM: 1e-5 (HOT's code)
  double step_clamp = 1e3;    ///< l, largest step length (m) (Gast Sec. 3.1)
  double forcing_sigma = 1.0; ///< CG rel. tol = min(1/2, sigma sqrt(max(|g|, floor)))
  /// What |g| in the forcing term measures: gradient (the Euclidean norm, floor tau;
  /// Gast Sec. 3.1), characteristic_norm (eps times the CN residual, floor eps: the
  /// gradient in characteristic-force units) or preconditioned (sqrt(g^T B g) with B
  /// the preconditioner, floor the norm of the CN tolerances; HOT, Wang et al. 2020, Sec.
  /// 5.3 and its reference code's inexact CG). Without the key (DefaultForcing in
  /// io/SceneSections.cpp): preconditioned for MPM, characteristic_norm for FEM with CN
  /// termination, gradient with absolute.
  Forcing forcing = Forcing::kCharacteristicNorm;
  bool best_of_two_guesses = true;
  /// FEM: the elastic Hessian Newton solves with: element (each tet's dP/dF projected
  /// to SPD, Teran et al. 2005) or none (the true tangent; CG's early exit on
  /// indefiniteness and the downhill check, Gast Sec. 3.1, keep directions downhill).
  /// Without the key (DefaultHessianProjection in io/SceneSections.cpp): element for
  /// backward_euler, none for quasi_static (the projection clips a bent beam's compressed
  /// modes and makes Newton converge linearly near equilibrium).
  HessianProjection hessian_projection = HessianProjection::kElement;
  /// L-BFGS history size m: 5 for FEM (DOT's code), 8 for MPM (HOT, Wang et al. 2020, Sec.
  /// 7.1) when the scene does not give it.
  int window = 5;
  /// L-BFGS initial inverse Hessian: lagged_hessian (LBFGS-H) | projective_dynamics
  /// (LBFGS-PD) | subdomains | jacobi | identity | vcycle (src/solvers/Initializer.hpp).
  /// Empty: lagged_hessian for method lbfgs, vcycle for hot (dot always takes subdomains).
  std::string initializer;
  /// The scene's `dot` block (read here: it configures a minimizer's initializer).
  DotConfig dot;
  /// Multigrid levels, the finest included, integer >= 1; 0 (the key absent): the
  /// discretization's default. MPM (method hot's V-cycle, newton_mg's preconditioner;
  /// src/solvers/GridMultigrid.hpp): 3 (HOT, Wang et al. 2020, Sec. 7.1). FEM (the
  /// embedded-grid multigrid of newton_mg and of initializer vcycle;
  /// src/solvers/TetGridMultigrid.hpp): as many as it takes for the coarsest grid to have
  /// at most 500 nodes.
  int mg_levels = 0;
  /// Prolongation by node embedding: "linear" (HOT Sec. 4) or "quadratic" (HOT's ablation).
  std::string mg_embedding = "linear";
  /// The scene file, for messages that name a solver key found wrong only during the run
  /// (set by ReadSceneConfig; not a key).
  std::string scene_path;
};

/// Lagged Rayleigh damping (Gast Sec. 4.2): stiffness-proportional coefficient beta (s).
struct DampingConfig {
  double stiffness_beta = 0.0;
};

/// Asynchronous evolution (Schroeder, Kwatra, Zheng, Fedkiw 2010; top-level key `async`,
/// FEM only; src/integrators/AsyncRegions.hpp).
struct AsyncConfig {
  /// Layers of tets from the boundary surface that form the semi-implicit region (Sec. 4):
  /// layer 1 is the tets with a node on the surface, layer k + 1 the tets with a node of
  /// layer k; integer >= 1, 1 as in the paper's examples.
  int surface_layers = 1;
  /// Force distribution (Sec. 5): the fully implicit region's forces become
  /// epsilon P f + (1 - epsilon) f, P the mass-symmetric projection onto rigid motions;
  /// in [0, 1] (0: off, 1: the region moves rigidly), 0.5 as in the paper's examples.
  double epsilon = 0.5;
  /// How the interior's forces enter at the frame boundary: frame (integrators/FemAsync:
  /// one implicit step of the interior tets over the whole step after the substeps; exact
  /// free fall) or paper (the last substep is the coupled step of Sec. 4.3: interior
  /// forces scaled by alpha = (2 Dt - h) / h in an implicit position update, velocity
  /// averaging and the interior-only nodes placed from the step's start;
  /// docs/methods/async.md).
  AsyncCoupling coupling = AsyncCoupling::kFrame;
};

/// The MPM discretization (top-level key `mpm`, required exactly when discretization is
/// "mpm"): a background grid of spacing dx and particles sampled in each body.
/// Penalty self-collisions and body-body collisions of FEM scenes (Gast et al. 2015,
/// Sec. 5.3; fem/SelfContact.hpp): off by default.
struct SelfContactConfig {
  bool enabled = false;
  /// k in Phi = k d sqrt(d + 1e-15), d the squared penetration distance (m^2): J/m^3,
  /// > 0. The paper gives no value for it; 1e7 is ours (a 1 mm penetration pushes back
  /// with 3k d = 30 N).
  double stiffness = 1e7;
  /// The line search's guard (Gast et al. 2015, Sec. 3.3): a backtracking (armijo)
  /// trial whose energy without the self-collision term already exceeds E(x_i) skips
  /// contact detection (the trial is rejected either way). On by default, as in the paper.
  bool line_search_guard = true;
  /// Coulomb coefficient mu (dimensionless, >= 0) of the friction applied after the solve
  /// between a penetrating node and the points of its closest primitive (Sec. 5.3); 0: none.
  double friction = 0.0;
};

struct MpmConfig {
  double dx = 0.0;            ///< grid spacing, m, > 0, required
  int ppc = 8;                ///< particles sampled per grid cell, integer >= 1
  /// CFL number: dt is capped at cfl dx / max_p |v_p|; in (0, 1] (Gast et al. 2015
  /// Sec. 6.3; HOT, Wang et al. 2020, Sec. 7.1).
  double cfl = 0.6;
  /// Fraction of FLIP in a PIC/FLIP blend of the grid-to-particle velocity, in [0, 1];
  /// 0 transfers with APIC (Jiang et al. 2015).
  double flip = 0.0;
  /// Particles are repartitioned across ranks when max/mean particles per rank exceeds
  /// this, > 1.
  double repartition_threshold = 1.2;
  int seed = 1;               ///< seed of the particle sampling, integer >= 0
  /// PN-PCG(MF): the Newton Hessian as a MatShell applied matrix-free, not assembled.
  bool matrix_free = false;
};

/// A chain of point particles (discretization: particles, integrator: xpbd; Macklin et al.
/// 2019, Sec. 6.1): a polyline of particles joined in order by distance constraints whose
/// rest lengths are the initial distances, of compliance alpha (m/N; a spring of stiffness
/// k has alpha = 1/k; 0 is inextensible). Positions from `points`, or `start` + i `step` for
/// i < `count`.
struct ChainConfig {
  std::string name;
  std::vector<Vec3> points;            ///< m, at least 2, no two neighbours at one place
  double mass = 0.0;                   ///< kg per particle, > 0, required
  std::vector<std::pair<int, double>> masses;  ///< overrides (particle index, kg > 0)
  std::vector<int> pinned;             ///< particles held where they start
  double compliance = 0.0;             ///< alpha, m/N, >= 0
  Vec3 initial_velocity = Vec3::Zero();  ///< m/s, of every particle not pinned
};

/// A cloth of point particles (discretization: particles, integrator: xpbd; Macklin et al.
/// 2019, Sec. 6.2, Fig. 5): the vertices of a triangle surface (.off or .stl,
/// io/SurfaceMesh.hpp) placed by `transform`, each edge a distance constraint of compliance
/// alpha (m/N; the paper's stiff springs k = 1e7 N/m have alpha = 1e-7) whose rest length is
/// its initial length; no bending constraints.
struct ClothConfig {
  std::string name;
  std::string mesh;                    ///< resolved against the scene file's folder
  TransformConfig transform;
  double mass = 0.0;                   ///< kg per particle, > 0, required
  std::vector<int> pinned;             ///< vertices held where they start
  double compliance = 0.0;             ///< alpha, m/N, >= 0
  Vec3 initial_velocity = Vec3::Zero();
  /// Bending (key bending_compliance, m/N, >= 0; absent: none): one distance constraint across
  /// each interior edge, between the two triangles' opposite vertices (particles/ParticleModel.hpp).
  bool bending = false;
  double bending_compliance = 0.0;
};

/// XPBD with small steps (Macklin et al. 2019, "Small Steps in Physics Simulation"; top-level
/// key `xpbd`, read by integrator: xpbd). Each step of the StepController (time.dt) is cut
/// into `substeps` substeps of dt / substeps, each with `iterations` constraint passes
/// (Alg. 1: one pass per substep).
struct XpbdConfig {
  /// n, integer >= 1. The paper fixes no count (its studies run 1 to 100); ours: 20.
  int substeps = 20;
  /// Constraint passes per substep, integer >= 1: 1 (the paper's Alg. 1 and Sec. 3).
  int iterations = 1;
  /// v_max, m/s, > 0: the depenetration speed limit of Sec. 4.2 for contacts with collision
  /// objects: the contact C = phi(x) - min(0, phi(x_prev) + v_max dt_s) >= 0 pushes a node
  /// that starts a substep at depth d out to phi = -d + v_max dt_s at most. The paper names
  /// v_max but (as we read it) gives no value: off (infinity) unless set.
  double max_depenetration_speed = std::numeric_limits<double>::infinity();
  /// Tet-constraint order (integrators/FemXpbd.hpp): coloring (Gauss-Seidel by color, the
  /// default) or jacobi (every tet from the same positions, corrections averaged per node:
  /// the paper's GPU variant; Macklin et al. 2014, "Unified Particle Physics", Sec. 4.2).
  XpbdOrder order = XpbdOrder::kColoring;
};

struct OutputConfig {
  std::string directory;  ///< relative to the working directory; default "out/<name>"
  int every = 1;          ///< write every N-th frame (frame 0 always)
  /// Checkpoints (io/Checkpoint.hpp) go to <directory>/checkpoints: every N accepted
  /// steps (0: not by step count) and/or every T wall-clock seconds (s, 0: not by time),
  /// and always on SIGTERM or SIGUSR1. The newest checkpoints_kept (>= 1) are kept.
  int checkpoint_every_steps = 0;
  double checkpoint_every_seconds = 0.0;
  int checkpoints_kept = 2;
};

/// Friction against the collision objects (top-level key `friction`). model
/// after_solve: Coulomb friction on the velocities after a frictionless solve (Gast et
/// al. 2015 Sec. 5.2; MPM: on the slip nodes, bounded by the normal impulse);
/// potential: IPC's lagged, smoothed dissipative potential inside the minimization (Li
/// et al. 2020, Sec. 5; fem/FrictionPotential.hpp, and for MPM on the slip nodes,
/// mpm/MpmIncrementalPotential::SetFrictionPotential). Without the key the parser takes
/// "potential" for FEM under backward_euler and quasi_static (a body on a slope with
/// mu > tan theta holds at every step size, which after the solve it does not) and
/// "after_solve" for MPM and the other integrators (DefaultFrictionModel in
/// io/SceneSections.cpp).
struct FrictionConfig {
  FrictionModel model = FrictionModel::kAfterSolve;  ///< a parsed scene's value replaces it (above)
  /// IPC's eps_v (m/s, > 0): tangential speeds below it count as static (IPC Sec. 5.2,
  /// eq. 14-15, where eps_v is in velocity units and the mollifier's width is eps_v h).
  /// 1e-3 m/s, the order of IPC's examples as we recall them (the exact sentence of the
  /// paper was not checked); a sticking body creeps at most at eps_v.
  double epsilon_v = 1e-3;
  /// Friction solves per step, the normal forces and normals lagged again at the previous
  /// solve's result (IPC Sec. 5.1's outer lagging iterations), integer >= 1. FEM: 1 lags
  /// them at the step's start only; MPM: the first is lagged at a frictionless solve.
  int lagged_updates = 1;
};

/// The quasi-static integrator (integrator: quasi_static, FEM; top-level key
/// `quasi_static`): each step minimizes elastic energy + contact - external work, with no
/// inertia term, the loads taken at the step's end time.
struct QuasiStaticConfig {
  /// Gravity scaled by min(1, t / ramp_time) (load stepping); false: the full load from
  /// the first step.
  bool ramp = true;
  /// s, > 0; 0 (not given): the run's duration, frames * frame_dt (which changes when a
  /// run is extended: give it to keep a restarted, longer run on the same load path).
  double ramp_time = 0.0;
  /// Equilibrium test: |residual|_2 <= tolerance |f_ext|_2 over the free nodes (the
  /// load-relative force criterion of structural codes, e.g. ANSYS CNVTOL's L2 norm
  /// against the applied loads, whose default is a looser 5e-3), > 0. Ours: 1e-6 (1e-8
  /// meets the round-off floor of a stiff beam's elastic forces: E = 1e9 Pa, 1025 nodes).
  double tolerance = 1e-6;
};

/// What model/, fem/ and mpm/ read of a scene: the file (for messages), gravity, the
/// bodies and what acts on them. The composed SceneConfig (app/) is one (a base, so a
/// scene binds to a `const ModelConfig&`); the lower layers take this, not the whole scene.
struct ModelConfig {
  std::string path;        ///< the scene file as given
  Vec3 gravity = Vec3(0.0, -9.81, 0.0);  ///< m/s^2
  std::vector<BodyConfig> bodies;
  std::vector<BoundaryConditionConfig> boundary_conditions;
  std::vector<CollisionObjectConfig> collision_objects;
  /// Loads and the time functions that scale them and gravity (tau = 1 unless
  /// gravity_time_function is given).
  std::vector<LoadConfig> loads;
  TimeFunctionConfig gravity_time_function;
};

/// The chains and cloths of a particles scene (particles/ParticleModel.hpp builds them).
struct ParticlesConfig {
  std::vector<ChainConfig> chains;     ///< discretization: particles only
  std::vector<ClothConfig> cloths;     ///< discretization: particles only
};

/// What integrators/ read of a scene: the model, the chains and cloths, and the sections
/// of the time step (which integrator, on which discretization, with which settings). The
/// composed SceneConfig (app/) is one; what only the run reads (name, text, output, PETSc
/// options) is left out.
struct IntegratorConfig : ModelConfig, ParticlesConfig {
  IntegratorKind integrator = IntegratorKind::kBackwardEuler;
  Discretization discretization = Discretization::kFem;  ///< fem | mpm | particles (chains, under xpbd)
  MpmConfig mpm;                       ///< read only when discretization is "mpm"
  TimeConfig time;
  SolverConfig solver;
  DampingConfig damping;
  FrictionConfig friction;
  QuasiStaticConfig quasi_static;
  XpbdConfig xpbd;
  AsyncConfig async;  ///< read only in FEM scenes
  SelfContactConfig self_contact;
};

}  // namespace optistep
