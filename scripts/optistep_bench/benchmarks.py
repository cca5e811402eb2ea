"""Every benchmark, declared as data: scenes (config, --set overrides, sizes), methods,
rank counts, PETSc options, frames, the table of its record and its plots.

`scripts/bench --list` prints them; `scripts/bench NAME --dry-run` prints every command.
A suite (xpbd) runs several benchmarks under one name.
"""
import dataclasses
import os
import re

from .paths import in_root
from .spec import BASE_RUNG, Benchmark, Mesh, Method, Program, Rung, Scene, Window

PI = 3.141592653589793

# ---------------------------------------------------------------------------- FEM methods
# What solves a step on a tet mesh. newton-mg and lbfgs-vcycle: the embedded-grid Galerkin
# multigrid (Xian, Tong, Liu 2019) as Newton's preconditioner and as L-BFGS's initializer
# (docs/methods/multigrid.md); lbfgs-vcycle runs when named (--only method=...).
FEM_METHODS = [
    Method("newton-jacobi", ("solver.method=newton",), title="PN-PCG (Jacobi), the default"),
    Method("newton-gamg", ("solver.method=newton",), ("-newton_pc_type", "gamg"),
           title="PN-PCG with GAMG"),
    Method("newton-mg", ("solver.method=newton_mg",), title="PN-PCG with the embedded-grid "
           "multigrid"),
    Method("lbfgs", ("solver.method=lbfgs",), title="LBFGS-H"),
    Method("lbfgs-vcycle", ("solver.method=lbfgs", "solver.initializer=vcycle"),
           title="L-BFGS with the embedded-grid multigrid's V-cycle", optional=True),
    Method("dot", ("solver.method=dot",), title="DOT"),
]

# ---------------------------------------------------------------------------- FEM ladder
BAR_POLY = "configs/meshes/bar_4x1x1.poly"
ELEPHANT_OFF = "data/meshes/elephant.off"


def bar_rungs():
    rungs = []
    for name, volume, tets, quick in (("10k", "1e-3", 10307, True), ("84k", "1e-4", 83741, True),
                                      ("781k", "1e-5", 781257, False),
                                      ("3.8M", "2e-6", 3800000, False)):
        mesh = Mesh(f"bar_4x1x1-pq1.4a{volume}", BAR_POLY, f"-pq1.4a{volume}", tets)
        rungs.append(Rung(name, mesh=mesh, size=tets, quick=quick))
    return tuple(rungs)


def elephant_rungs():
    # The first rung is the scene's own mesh recipe (scripts/fetch-meshes.sh: -pq1.5, no
    # volume bound: 43,123 tets); the others bound the tet volume (in the .off's units,
    # before the scene's scale of 1.5), chosen for the tet counts of the ladder.
    rungs = []
    for name, switches, tets, quick in (("43k", "-pq1.5", 43123, True),
                                        ("147k", "-pq1.5a2e-6", 147136, True),
                                        ("398k", "-pq1.5a4e-7", 398137, False),
                                        ("1.5M", "-pq1.5a7.3e-8", 1515713, False)):
        mesh = Mesh(f"elephant{switches}", ELEPHANT_OFF, switches, tets)
        rungs.append(Rung(name, mesh=mesh, size=tets, quick=quick))
    return tuple(rungs)


BAR_FAST = Scene(
    "bar-fast", "configs/twisted_bar.yaml",
    sets=("bodies.0.material.E=1e5", "bodies.0.material.nu=0.4",
          f"boundary_conditions.0.motion.0.rotate.angular_velocity={-PI!r}",
          f"boundary_conditions.1.motion.0.rotate.angular_velocity={PI!r}"),
    frames=8, frame_rate=40, rungs=bar_rungs())  # 8 steps of 0.025 s
BAR_STIFF = Scene(
    "bar-stiff", "configs/twisted_bar.yaml",
    sets=("bodies.0.material.E=1e7", "bodies.0.material.nu=0.45",
          f"boundary_conditions.0.motion.0.rotate.angular_velocity={-0.1 * PI!r}",
          f"boundary_conditions.1.motion.0.rotate.angular_velocity={0.1 * PI!r}"),
    frames=4, frame_rate=40, rungs=bar_rungs())
ELEPHANT = Scene("elephant", "configs/elephant_drop.yaml", frames=12, frame_rate=24,
                 rungs=elephant_rungs(), fetch=("elephant.off",))

LADDER_TABLE = ("scene", "rung", "method", "ranks", "tets", "unknowns", "steps", "s_per_step",
                "outer_per_step", "inner_per_step", "halvings", "max_rss_MB", "rss_MB_per_rank",
                "setup_s", "mesh_read_s", "partition_s", "distribute_s", "frame_write_s",
                "checkpoint_write_s", "reductions_per_step", "messages_per_step",
                "message_bytes_per_step", "load_before", "load_after", "note")

FEM_LADDER = Benchmark(
    "fem-ladder", "FEM size ladder",
    "time per step, iterations, dt halvings, peak memory per rank, set-up, frame and "
    "checkpoint write time, MPI reductions and messages per step of every FEM method on the "
    "twisted bar (fast: E 1e5, nu 0.4, ends at -/+pi rad/s, 8 steps of 0.025 s; stiff: E 1e7, "
    "nu 0.45, -/+0.1 pi rad/s, 4 steps; TetGen -pq1.4a<V> meshes of configs/meshes/"
    "bar_4x1x1.poly, V = 1e-3 ... 2e-6) and the elephant drop (12 frames of 1/24 s: the "
    "first 10, and frames 5-12, the impact; TetGen -pq1.5a<V> meshes "
    "of CGAL's elephant.off), on 1 and 2 ranks",
    scenes=[BAR_FAST, BAR_STIFF, ELEPHANT], methods=FEM_METHODS, ranks=(1, 2),
    windows=(Window("f1_10", 1, 10), Window("f5_12", 5, 12)),
    checkpoint_every_steps=4, table=LADDER_TABLE + (
        "s_per_step_f1_10", "s_per_step_f5_12", "outer_per_step_f5_12", "inner_per_step_f5_12",
        "halvings_f5_12"),
    plots=("ladder",), replaces="scripts/bench-fem-ladder.sh")

# ---------------------------------------------------------------------------- MPM
MPM_METHODS = [
    Method("newton", ("solver.method=newton", "mpm.matrix_free=false"), title="PN-PCG"),
    Method("newton-mf", ("solver.method=newton", "mpm.matrix_free=true"), title="PN-PCG(MF)"),
    Method("newton-mg", ("solver.method=newton_mg", "mpm.matrix_free=false"), title="PN-MGPCG"),
    Method("lbfgs", ("solver.method=lbfgs", "mpm.matrix_free=false"), title="LBFGS-H"),
    Method("hot", ("solver.method=hot", "mpm.matrix_free=false"), title="HOT"),
    Method("hotx", ("solver.method=hot", "mpm.matrix_free=false"),
           ("-hot_mg_coarse_ksp_type", "preonly", "-hot_mg_coarse_pc_type", "redundant",
            "-hot_mg_coarse_redundant_pc_type", "cholesky"),
           title="HOT, the coarsest level by sparse Cholesky (redundant on every rank)",
           optional=True),
]

MPM_DXS = ((0.015, 30720), (0.0075, 245760), (0.005, 829440))


def mpm_rungs(optional_above=None):
    """The twisting bar's grid spacings (HOT's dx 0.015 m, then 1/2 and 1/3 of it) with the
    particles each gives; optional_above: the rungs after the first run only when named
    (--only dx=...)."""
    return tuple(Rung(f"dx{dx}", (f"mpm.dx={dx}",), size=n, labels=(("dx", str(dx)),),
                      quick=dx >= 0.0075, optional=bool(optional_above) and k > 0)
                 for k, (dx, n) in enumerate(MPM_DXS))


MPM_LADDER = Benchmark(
    "mpm-ladder", "MPM size ladder (HOT's twisting bar)",
    "time per step, iterations and peak memory per rank of every MPM method on "
    "configs/hot_twisting_bar.yaml at dx 0.015, 0.0075 and 0.005 m (about 30k, 245k and "
    "830k particles), the first frame (1/48 s: the first CFL steps), 1 and 2 ranks",
    scenes=[Scene("twisting-bar", "configs/hot_twisting_bar.yaml", frames=1, frame_rate=48,
                  discretization="mpm", rungs=mpm_rungs())],
    methods=MPM_METHODS, ranks=(1, 2),
    table=("rung", "method", "ranks", "particles", "steps", "s_per_step",
           "us_per_step_particle", "outer_per_step", "inner_per_step", "init_per_step", "halvings", "max_rss_MB", "rss_MB_per_rank",
           "setup_s", "reductions_per_step", "messages_per_step", "load_before", "load_after",
           "note"),
    plots=("ladder",), replaces="(new)")

E_MIDS = ("1e5", "1e6", "1e7", "1e8", "1e9", "1e10")
MPM_PHASES = ("t_Hessian", "t_Assembly", "t_LinearSolve", "t_LineSearch", "t_InitializerSetUp",
              "t_HierarchyBuild", "t_GalerkinProduct", "t_InitializerApply", "t_VCycle", "t_P2G",
              "t_G2P")
MPM_SWEEP = Benchmark(
    "mpm", "MPM methods and the stiffness sweep (HOT's twisting bar, Fig. 20)",
    "where an implicit MPM step's time goes: PN-PCG, PN-PCG(MF), PN-MGPCG, LBFGS-H and HOT on "
    "configs/hot_twisting_bar_coarse.yaml (dx 0.015, 30720 particles), the middle box's E_mid "
    "1e5, 1e7, 1e9 Pa (the whole Fig. 20 sweep with --only E_mid=1e5,1e6,1e7,1e8,1e9,1e10), "
    "the first 4 of 48 frames (8 steps), 1 and 2 ranks, 150 s per run at most (also at dx "
    "0.0075 and 0.005 with --only dx=0.015,0.0075,0.005; HOT with the coarsest level by "
    "sparse Cholesky with --only method=hotx); P2G and G2P particles/s "
    "(bench/mpm_transfer_bench)",
    scenes=[Scene(f"E{e}", "configs/hot_twisting_bar_coarse.yaml",
                  sets=(f"bodies.1.material.E={e}",), frame_rate=48, discretization="mpm",
                  labels=(("E_mid", e),), optional=e not in ("1e5", "1e7", "1e9"),
                  rungs=mpm_rungs(optional_above=0.015))
            for e in E_MIDS],
    methods=MPM_METHODS, ranks=(1, 2), frames=4, time_limit=150, write_frames=False,
    programs=(Program("transfer-dx0.015", "mpm_transfer_bench", ("--dx", "0.015", "--reps", "10"),
                      parser="mpm_transfer", labels=(("dx", 0.015),)),
              Program("transfer-dx0.0075", "mpm_transfer_bench", ("--dx", "0.0075", "--reps", "10"),
                      parser="mpm_transfer", labels=(("dx", 0.0075),))),
    table=("E_mid", "dx", "particles", "method", "ranks", "steps", "s_per_step",
           "us_per_step_particle", "outer_per_step", "inner_per_step", "init_per_step",
           "halvings", "max_rss_MB") + MPM_PHASES + (
           "p2g_particles_per_s", "g2p_particles_per_s", "stencil_particles_per_s",
           "load_before", "note"),
    plots=("sweep", "sizes"), replaces="scripts/bench-mpm.sh",
    quick={"scenes": ("E1e5",), "frames": 1, "time_limit": 120})

MPM_FULL = Benchmark(
    "mpm-full", "HOT's twisting bar in full (E_mid 1e8, dx 0.015, 48 frames), PN-PCG",
    "the whole scene of HOT's comparison on 2 ranks (HOT's reference PN-PCG: 358.4 s on a "
    "2-core machine); bench-mpm.sh's HOT_FULL=1",
    scenes=[Scene("full", "configs/hot_twisting_bar_coarse.yaml", frame_rate=48,
                  discretization="mpm")],
    methods=[MPM_METHODS[0]], ranks=(2,), write_frames=False,
    table=("method", "ranks", "steps", "step_s_total", "s_per_step", "outer_per_step",
           "inner_per_step", "wall_s", "load_before", "load_after", "note"),
    replaces="scripts/bench-mpm.sh (HOT_FULL=1)", quick={"frames": 1})

# ---------------------------------------------------------------------------- FEM (bench-fem.sh)
FEM_PHASES = ("t_Energy", "t_Gradient", "t_Hessian", "t_Assembly", "t_LinearSolve",
              "t_LineSearch", "t_InitializerSetUp", "t_InitializerApply")
FEM = Benchmark(
    "fem", "FEM: where a step's time goes, PN-PCG against LBFGS-H",
    "time per step, outer and inner iterations, L-BFGS initializer applications and the "
    "phase split of configs/twisted_bar.yaml (first 40 of 200 frames) and "
    "configs/elephant_drop.yaml (first 12 of 48: free fall, then the impact), newton and "
    "lbfgs, 1 and 2 ranks; element kernel throughput (bench/fem_kernel_bench, one core)",
    scenes=[Scene("twisted_bar", "configs/twisted_bar.yaml", frames=40),
            Scene("elephant_drop", "configs/elephant_drop.yaml", frames=12,
                  fetch=("elephant.1.node",))],
    methods=[Method("newton", ("solver.method=newton",), title="PN-PCG"),
             Method("lbfgs", ("solver.method=lbfgs",), title="LBFGS-H")],
    ranks=(1, 2), write_frames=False, metrics=("hessian_rate",),
    programs=(Program("kernel-twisted_bar", "fem_kernel_bench",
                      ("configs/twisted_bar.yaml", "--reps", "10"), parser="fem_kernel"),
              Program("kernel-elephant_drop", "fem_kernel_bench",
                      ("configs/elephant_drop.yaml", "--reps", "10"), parser="fem_kernel")),
    table=("scene", "method", "ranks", "nodes", "tets", "steps", "s_per_step", "outer_per_step",
           "inner_per_step", "init_per_step", "halvings") + FEM_PHASES + (
           "hessian_tets_per_s_per_core", "energy_gradient_tets_per_s", "hessian_tets_per_s", "total_tets_per_s",
           "load_before", "note"),
    replaces="scripts/bench-fem.sh", quick={"frames": 2})

# ---------------------------------------------------------------------------- DOT (bench-dot.sh)
# A DOT variant's name says its options: dot (DOT's defaults: subdomains sized by
# dot.subdomain_nodes, the coarse space, the refresh), then an optional K (K subdomains in
# all, K / ranks per rank), then suffixes in any order.
DOT_SUFFIXES = (
    (r"n(\d+)", lambda v: ("-dot_subdomain_nodes", v)),
    (r"ov(\d+)", lambda v: ("-dot_overlap", v)),
    (r"lag(\d+)", lambda v: ("-dot_refactor_every", v)),
    (r"k(\d+)", lambda v: ("-dot_krylov_its", v)),
    (r"1lvl", lambda: ("-dot_coarse", "none")),
    (r"avg", lambda: ("-dot_merge", "average")),
    (r"norefresh", lambda: ("-dot_refresh_contacts", "0", "-dot_refresh_stall", "0",
                            "-dot_refresh_at_cap", "0")),
)


def dot_variant(name, optional=False):
    """The Method of a DOT variant name, dot[-K][-nN][-ovN][-lagN][-kN][-1lvl][-avg]
    [-norefresh] (-dot_subdomain_nodes, -dot_overlap, -dot_refactor_every, -dot_krylov_its,
    -dot_coarse none, -dot_merge average, no refresh of any kind), or None if name is not
    one."""
    parts = name.split("-")
    if parts[0] != "dot":
        return None
    parts = parts[1:]
    all_subdomains = int(parts.pop(0)) if parts and parts[0].isdigit() else None
    options = ()
    for part in parts:
        for pattern, make in DOT_SUFFIXES:
            m = re.fullmatch(pattern, part)
            if m:
                options += make(*m.groups())
                break
        else:
            return None
    labels = (("variant", "-".join(parts)),)
    if all_subdomains is None:
        return Method(name, ("solver.method=dot",), options, title="DOT" + (
            f" ({' '.join(options)})" if options else ", its defaults"),
            labels=labels, optional=optional)
    k = all_subdomains
    return Method(name, ("solver.method=dot",), options,
                  title=f"DOT, {k} subdomains" + (f" ({' '.join(options)})" if options else ""),
                  labels=(("subdomains_in_all", k),) + labels, optional=optional,
                  rank_sets=lambda ranks: (f"dot.subdomains_per_rank={max(1, k // ranks)}",))


def dot_skip(scene, rung, method, ranks):
    k = dict(method.labels).get("subdomains_in_all")
    if k is not None and k % ranks:
        return f"{k} subdomains do not split over {ranks} ranks"
    return None


STIFF = ("bodies.0.material.E=1e7", "bodies.0.material.nu=0.45")
FAST = (f"boundary_conditions.0.motion.0.rotate.angular_velocity={-PI!r}",
        f"boundary_conditions.1.motion.0.rotate.angular_velocity={PI!r}")


def dot_bar_scenes():
    """The bars, each also stiff (E 1e7, nu 0.45), fast (the handles at -/+pi rad/s) and
    both: twisted_bar (the default), bar17k (the DOT reference code's bar17K twist) and
    bar84k, bar781k (TetGen -pq1.4a1e-4 and a1e-5 meshes of configs/meshes/bar_4x1x1.poly,
    the FEM ladder's rungs, made and cached)."""
    bases = (("twisted_bar", "configs/twisted_bar.yaml", None),
             ("bar17k", "configs/dot_bar17k_twist.yaml", None),
             ("bar84k", "configs/twisted_bar.yaml", bar_rungs()[1]),
             ("bar781k", "configs/twisted_bar.yaml", bar_rungs()[2]))
    scenes = []
    for base, config, rung in bases:
        for suffix, sets in (("", ()), ("_stiff", STIFF), ("_fast", FAST),
                             ("_stiff_fast", STIFF + FAST)):
            rungs = (dataclasses.replace(rung, quick=True),) if rung else (BASE_RUNG,)
            scenes.append(Scene(base + suffix, config, sets=sets, rungs=rungs,
                                optional=(base, suffix) != ("twisted_bar", "")))
    return scenes


DOT_BARS = dot_bar_scenes()
DOT = Benchmark(
    "dot", "DOT against PN-PCG, PN-direct, LBFGS-H and LBFGS-PD",
    "DOT (Li et al. 2019) with 1, 2, 4, 8 subdomains in all against PN-PCG (Jacobi, GAMG), "
    "PN with a direct solve (MUMPS Cholesky: the DOT paper's baseline), LBFGS-H and LBFGS-PD "
    "on configs/twisted_bar.yaml and configs/elephant_drop.yaml, the first 12 frames, 1 and "
    "2 ranks; with --only scene=...: bar17k, bar84k, bar781k and each bar's _stiff, _fast and "
    "_stiff_fast; with --only method=...: DOT's defaults (dot) and any variant "
    "dot[-K][-nN][-ovN][-lagN][-kN][-1lvl][-avg][-norefresh]",
    scenes=DOT_BARS[:1]
    + [Scene("elephant_drop", "configs/elephant_drop.yaml", fetch=("elephant.1.node",))]
    + DOT_BARS[1:],
    methods=[Method("pn-pcg", ("solver.method=newton",)),
             Method("pn-gamg", ("solver.method=newton",), ("-newton_pc_type", "gamg")),
             Method("pn-direct", ("solver.method=newton",),
                    ("-newton_ksp_type", "preonly", "-newton_pc_type", "cholesky",
                     "-newton_pc_factor_mat_solver_type", "mumps")),
             Method("lbfgs-h", ("solver.method=lbfgs",)),
             Method("lbfgs-pd", ("solver.method=lbfgs", "solver.initializer=projective_dynamics"))]
    + [dot_variant(f"dot-{k}") for k in (1, 2, 4, 8)]
    + [dot_variant(name, optional=True) for name in (
        "dot", "dot-2-ov1", "dot-2-lag4", "dot-2-ov1-lag4", "dot-4-ov1", "dot-8-ov1",
        "dot-2-1lvl-avg-norefresh")],
    method_factory=dot_variant,
    ranks=(1, 2), frames=12, write_frames=False, skip=dot_skip,
    table=("scene", "method", "ranks", "subdomains_in_all", "steps", "halvings", "s_per_step",
           "outer_per_step", "inner_per_step", "refreshes_per_step", "t_Hessian",
           "t_SubdomainFactor", "t_CoarseFactor", "t_SubdomainSolve", "t_SubdomainMerge",
           "t_CoarseSolve", "t_LineSearch", "t_LinearSolve", "cpu_s", "max_rss_MB",
           "load_before", "note"),
    plots=("dot_iterations",), replaces="scripts/bench-dot.sh",
    quick={"scenes": ("twisted_bar",), "frames": 2})


# ---------------------------------------------------------------------------- async (bench-async.sh)
ASYNC = Benchmark(
    "async", "Schroeder et al. 2010, Table 2, on optistep",
    "seconds and steps (substeps) per frame of backward Euler (one Newton step per 1/24 s "
    "frame), semi-implicit (Sec. 3.1, at its CFL step) and asynchronous evolution (Secs. 4-5, "
    "async.epsilon 0 ... 1) on the sphere drop, the sphere with a sliver tet and the armadillo "
    "drop, the first frame, 1 and 2 ranks",
    scenes=[Scene("sphere_drop", "configs/sphere_drop.yaml", frame_rate=24),
            Scene("sphere_drop_sliver", "configs/sphere_drop_sliver.yaml", frame_rate=24),
            Scene("armadillo_drop", "configs/armadillo_drop.yaml", frame_rate=24,
                  fetch=("armadillo_mesh3.1.node",))],
    methods=[Method("newton", ("integrator=backward_euler",)),
             Method("semi_implicit", ("integrator=semi_implicit",))]
    + [Method(f"async-eps{e}", ("integrator=async", f"async.epsilon={e}"),
              labels=(("epsilon", e),)) for e in ("0", "0.25", "0.5", "0.75", "1")],
    ranks=(1, 2), frames=1, metrics=("async",),
    table=("scene", "method", "ranks", "s_per_frame", "steps_per_frame", "substeps_s_per_frame",
           "implicit_s_per_frame", "newton_per_frame", "cg_per_frame", "load_before", "note"),
    replaces="scripts/bench-async.sh", quick={"scenes": ("sphere_drop",)})

# ---------------------------------------------------------------------------- contact
CONSTRAINT = Benchmark(
    "constraint", "Penalty against constraint ground on the sphere drop",
    "constraint collisions (gradient projection, Gast et al. 2015 Sec. 3.2) against the "
    "penalty ground (Sec. 5.2) on configs/sphere_drop.yaml, 12 frames (the ball meets the "
    "ground in frame 4), 1 and 2 ranks: s/frame, Newton and CG iterations per step, the "
    "lowest node at the end (the penalty's depth; 0 for the constraint)",
    scenes=[Scene("sphere_drop", "configs/sphere_drop.yaml", frame_rate=24)],
    methods=[Method(m, (f"collision_objects.0.method={m}",)) for m in ("penalty", "constraint")],
    ranks=(1, 2), frames=12, metrics=("lowest_y",),
    table=("method", "ranks", "s_per_frame", "outer_per_step", "inner_per_step", "lowest_y_m",
           "load_before", "note"),
    replaces="scripts/bench-constraint.sh", quick={"frames": 2})

CONTACT = Benchmark(
    "contact", "Self-contact detection's share of the step (two spheres)",
    "t_ContactDetection and t_ContactTree against the step time, contact evaluations and the "
    "ones the line search's guard skipped (Gast et al. 2015, Sec. 5.3; the target: "
    "detection under 20%) on configs/two_spheres.yaml (24 frames), 1 and 2 ranks, 3 repeats",
    scenes=[Scene("two_spheres", "configs/two_spheres.yaml")],
    ranks=(1, 2), repeats=3, metrics=("contact",), write_frames=False,
    table=("ranks", "repeat", "step_s_total", "detection_s", "detection_share", "tree_s",
           "contact_evaluations", "contact_skips", "load_before", "note"),
    replaces="scripts/bench-contact.sh", quick={"repeats": 1, "frames": 2})

CONTACT_SQUEEZE = Benchmark(
    "contact-squeeze", "The armadillo squeeze (Gast et al. 2015, Fig. 13)",
    "configs/armadillo_squeeze.yaml at 1, 2, 4 and 8 steps per 1/24 s frame, 8 frames (the "
    "cubes touch the hands in frame 3), 1 and 2 ranks: s/frame, Newton iterations per step "
    "(mean, max), detection's share, tree rebuilds, and penetration (scripts/contact-report.py: "
    "worst and mean over frames, % of the body's largest extent; the target: under 1%). "
    "The paper: 46, 58, 88, 117 s per frame single-threaded on its finer mesh",
    scenes=[Scene(f"spf{k}", "configs/armadillo_squeeze.yaml", sets=(f"time.dt={1 / (24 * k)!r}",),
                  frame_rate=24, labels=(("steps_per_frame", k),),
                  fetch=("armadillo_coarse.1.node",)) for k in (1, 2, 4, 8)],
    ranks=(1, 2), frames=8, metrics=("contact", "penetration"),
    table=("steps_per_frame", "ranks", "s_per_frame", "outer_per_step", "outer_max",
           "detection_share", "tree_s", "object_depth_worst_pct", "object_depth_mean_pct",
           "self_depth_worst_pct", "self_depth_mean_pct", "load_before", "note"),
    replaces="scripts/bench-contact-squeeze.sh",
    quick={"scenes": ("spf1",), "frames": 2, "ranks": (2,)})

# ---------------------------------------------------------------------------- checkpoint
CHECKPOINT = Benchmark(
    "checkpoint", "Checkpoint write and read throughput (1M-particle MPM state)",
    "bench/checkpoint_bench on 2 ranks: a snow box of 50^3 cells x 8 particles thrown onto a "
    "floor, 1 step, then 3 checkpoint writes (collective HDF5, row hashes, flush, fsync, "
    "rename) and 3 restarts from the file; GB/s and the write as a share of a step",
    scenes=[], methods=[],
    programs=(Program("checkpoint", "checkpoint_bench",
                      ("--cells", "50", "--ppc", "8", "--steps", "1", "--reps", "3", "--dir", "{out}/ckpt"),
                      ranks=2, parser="checkpoint",
                      quick_args=("--cells", "10", "--ppc", "8", "--steps", "1", "--reps", "1",
                                  "--dir", "{out}/ckpt")),),
    table=("scene", "ranks", "particles", "checkpoint_MB", "write_GB_per_s", "read_GB_per_s",
           "checkpoint_over_step", "load_before", "note"),
    replaces="scripts/bench-checkpoint.sh")

# ---------------------------------------------------------------------------- XPBD suite
XPBD_CHAIN = Benchmark(
    "xpbd-chain", "XPBD hanging chain at equal work (Macklin et al. 2019, Sec. 6.1, Figs. 3-4)",
    "n substeps x 100/n iterations per 1/60 s frame, n = 1 ... 100, 2 s, light (bottom 1 kg) "
    "and heavy (1e5 kg) chain: the constraint error (mean max |C|/l0 over the second second) "
    "and the top constraint's force over the carried weight",
    scenes=[Scene(f"bottom{b}", "configs/hanging_chain.yaml",
                  sets=(f"chains.0.masses.0.mass={b}",), labels=(("bottom_kg", b),))
            for b in ("1", "1e5")],
    methods=[Method(f"{n}x{100 // n}", (f"xpbd.substeps={n}", f"xpbd.iterations={100 // n}"),
                    labels=(("substeps", n), ("iterations", 100 // n)))
             for n in (1, 2, 5, 10, 20, 50, 100)],
    ranks=(1,), metrics=("chain",), write_frames=False, part_of="xpbd",
    table=("bottom_kg", "method", "mean_max_strain", "force_over_weight", "load_before", "note"),
    plots=("chain",), replaces="scripts/bench-xpbd.sh (1)",
    quick={"methods": ("1x100", "100x1")})

LONG_CHAIN = ("chains.0.count=100000", "chains.0.masses=[]", "xpbd.substeps=10")
XPBD_PROJECTIONS = Benchmark(
    "xpbd-projections", "XPBD distance-constraint projections per second per core",
    "a chain of 100000 particles, 10 substeps x 1 iteration, 20 frames, 1 rank (target 1e7/s)",
    scenes=[Scene("long_chain", "configs/hanging_chain.yaml", sets=LONG_CHAIN, frames=20)],
    ranks=(1,), metrics=("xpbd",), write_frames=False, part_of="xpbd",
    table=("scene", "steps", "step_s_total", "projections_per_s", "load_before", "note"),
    replaces="scripts/bench-xpbd.sh (2)", quick={"frames": 2})

XPBD_PARTICLES = Benchmark(
    "xpbd-particles", "XPBD chains and cloths from 1 to 2 ranks (METIS split, colored GS)",
    "wall per frame on 1 and 2 ranks of the 100000-particle chain (20 frames) and "
    "configs/hanging_cloth.yaml (441 particles, 60 frames)",
    scenes=[Scene("long_chain", "configs/hanging_chain.yaml", sets=LONG_CHAIN, frames=20),
            Scene("cloth", "configs/hanging_cloth.yaml", frames=60)],
    ranks=(1, 2), write_frames=False, part_of="xpbd",
    table=("scene", "ranks", "s_per_frame", "s_per_step", "load_before", "note"),
    replaces="scripts/bench-xpbd.sh (4b)", quick={"frames": 2})

XPBD_SNH = ("integrator=xpbd", "bodies.0.material.model=stable_neo_hookean")


def _xpbd_elephant_skip(scene, rung, method, ranks):
    if ranks == 1 and method.name != "xpbd-400":
        return "1 rank only for the 1 -> 2 rank efficiency of xpbd-400"
    return None


XPBD_ELEPHANT = Benchmark(
    "xpbd-elephant", "Elephant drop: backward Euler against XPBD",
    "configs/elephant_drop.yaml, 8 frames of 1/24 s, 2 ranks: newton (PN-PCG) at the frame "
    "step against XPBD (stable Neo-Hookean) at 10, 40, 100, 400 substeps: wall per frame, max "
    "|J - 1| over the frames, tet-constraint projections per second per rank; XPBD 400 also on "
    "1 rank (the 1 -> 2 rank efficiency)",
    scenes=[Scene("elephant", "configs/elephant_drop.yaml", frames=8, frame_rate=24,
                  fetch=("elephant.1.node",))],
    methods=[Method("newton", ("solver.method=newton",))]
    + [Method(f"xpbd-{n}", XPBD_SNH + (f"xpbd.substeps={n}",), labels=(("substeps", n),))
       for n in (10, 40, 100, 400)],
    ranks=(1, 2), skip=_xpbd_elephant_skip, metrics=("max_volume_change", "xpbd"), part_of="xpbd",
    table=("method", "ranks", "s_per_frame", "max_volume_change", "projections_per_s_per_rank",
           "load_before", "note"),
    replaces="scripts/bench-xpbd.sh (3, 4)", quick={"frames": 1, "methods": ("xpbd-10",),
                                                    "ranks": (2,)})

XPBD_CLOTH = Benchmark(
    "xpbd-cloth", "XPBD hanging cloth energy (Macklin et al. 2019, Fig. 6)",
    "configs/hanging_cloth.yaml (k = 1e7 N/m) started horizontal, 3 s of 1/60 s frames, 1 "
    "substep x 40 iterations against 40 x 1: total energy after 1 and 3 s, its springs' part, "
    "kinetic + gravitational (E0 = 439 x 0.001 x 9.81 x 1.5 = 6.46 J at rest), max |C|/l0",
    scenes=[Scene("cloth", "configs/hanging_cloth.yaml",
                  sets=("cloths.0.transform.rotate={axis: [1, 0, 0], angle_deg: 90}",))],
    methods=[Method(f"{n}x{i}", (f"xpbd.substeps={n}", f"xpbd.iterations={i}"))
             for n, i in ((1, 40), (40, 1))],
    ranks=(1,), metrics=("cloth",), write_frames=False, part_of="xpbd",
    table=("method", "energy_1s_J", "energy_3s_J", "elastic_energy_3s_J",
           "motion_energy_3s_J", "stretch_energy_3s_J", "max_strain_3s", "step_s_total", "load_before", "note"),
    plots=("cloth_energy",), replaces="scripts/bench-xpbd.sh (5)", quick={"frames": 2})


def _order_skip(scene, rung, method, ranks):
    n = dict(method.labels)["substeps"]
    if scene.name == "stretched_cube":
        return None if n == 100 and ranks == 2 else "the cube runs 100 substeps on 2 ranks"
    return None if n != 100 else "the elephant runs 400 and 800 substeps"


XPBD_ORDER = Benchmark(
    "xpbd-order", "xpbd.order: coloring against Jacobi",
    "configs/elephant_drop_xpbd.yaml, 4 frames of free fall (max |J - 1| is the constraint "
    "error) on 1 and 2 ranks, coloring at 400 substeps, Jacobi at 400 and 800; and "
    "configs/stretched_cube.yaml under XPBD (stable Neo-Hookean, 100 substeps, 24 frames) on 2 "
    "ranks: wall per frame, halo exchanges per step, max |J - 1|",
    scenes=[Scene("elephant_drop_xpbd", "configs/elephant_drop_xpbd.yaml", frames=4,
                  sets=("integrator=xpbd",), fetch=("elephant.1.node",)),
            Scene("stretched_cube", "configs/stretched_cube.yaml", frames=24, sets=XPBD_SNH)],
    methods=[Method(f"{o}-{n}", (f"xpbd.order={o}", f"xpbd.substeps={n}"),
                    labels=(("order", o), ("substeps", n)))
             for o, n in (("coloring", 400), ("jacobi", 400), ("jacobi", 800),
                          ("coloring", 100), ("jacobi", 100))],
    ranks=(1, 2), skip=_order_skip, metrics=("xpbd",), write_frames=False, part_of="xpbd",
    table=("scene", "method", "ranks", "s_per_frame", "halo_exchanges_per_step",
           "max_volume_change_column", "load_before", "note"),
    replaces="scripts/bench-xpbd.sh (6)",
    quick={"scenes": ("stretched_cube",), "frames": 2})

# ---------------------------------------------------------------------------- smoke
# The machinery on tiny scenes, in seconds (tests/perf/test_bench.py runs them): a cube
# ladder of two TetGen meshes of configs/meshes/cube.poly, and the MPM smoke box.
CUBE_POLY = "configs/meshes/cube.poly"
SMOKE = Benchmark(
    "smoke", "Smoke test of the benchmark machinery (FEM)",
    "tests/data/smoke.yaml with the cube of configs/meshes/cube.poly (tetgen -pq1.4a0.01 and "
    "a0.002) lifted above the ground, 2 steps, newton, lbfgs, the FEM multigrid and DOT, 1 and "
    "2 ranks",
    scenes=[Scene("cube", "tests/data/smoke.yaml", frame_rate=25,
                  sets=("bodies.0.transform.translate=[0, 0.55, 0]",),
                  rungs=tuple(Rung(f"a{v}", mesh=Mesh(f"cube-pq1.4a{v}", CUBE_POLY, f"-pq1.4a{v}", t),
                                   size=t) for v, t in (("0.01", 560), ("0.002", 1242))))],
    methods=[Method("newton", ("solver.method=newton",)), Method("lbfgs", ("solver.method=lbfgs",)),
             Method("newton-mg", ("solver.method=newton_mg",), optional=True),
             dot_variant("dot", optional=True)],
    ranks=(1, 2), frames=2, checkpoint_every_steps=1, windows=(Window("f2_2", 2, 2),),
    table=LADDER_TABLE, plots=("ladder",), replaces="(tests)")
SMOKE_MPM = Benchmark(
    "smoke-mpm", "Smoke test of the benchmark machinery (MPM)",
    "tests/perf/smoke_mpm.yaml (4096 particles), 1 frame, newton, 1 and 2 ranks",
    scenes=[Scene("box", "tests/perf/smoke_mpm.yaml", frames=1, discretization="mpm",
                  rungs=(Rung("dx0.05", ("mpm.dx=0.05",), size=512),
                         Rung("dx0.025", ("mpm.dx=0.025",), size=4096)))],
    methods=[Method("newton", ("solver.method=newton",))], ranks=(1, 2),
    plots=("ladder",), replaces="(tests)")

# ---------------------------------------------------------------------------- examples
# The meshes configs/ reads from data/meshes (scripts/fetch-meshes.sh names).
EXAMPLE_FETCH = {
    "armadillo_drop": ("armadillo_mesh3.1.node",),
    "armadillo_squeeze": ("armadillo_coarse.1.node",),
    "armadillo_drop_mpm": ("armadillo.off",),
    "elephant_drop": ("elephant.1.node",),
    "elephant_drop_xpbd": ("elephant.1.node",),
}
EXAMPLE_MPM = ("armadillo_drop_mpm", "hot_twisting_bar", "hot_twisting_bar_coarse", "snowball")
EXAMPLE_NAMES = sorted(os.path.splitext(f)[0] for f in os.listdir(in_root("configs")) if f.endswith(".yaml"))

EXAMPLES = Benchmark(
    "examples", "Every scene of configs/ as given, to its last frame",
    "each configs/*.yaml without an override, to its last frame: whether it ends (a step that "
    "still fails after time.max_dt_halvings ends a run with exit 2, `exit` and `note`), "
    "seconds per frame, steps and dt halvings; the README's scenes as a user first runs them",
    scenes=[Scene(n, f"configs/{n}.yaml", fetch=EXAMPLE_FETCH.get(n, ()),
                  discretization="mpm" if n in EXAMPLE_MPM else "fem") for n in EXAMPLE_NAMES],
    methods=[Method("as-given", title="the scene's own integrator and minimizer")], ranks=(2,),
    table=("scene", "ranks", "exit", "steps", "halvings", "s_per_frame", "load_before", "note"),
    replaces="(new)", quick={"scenes": ("constraint_ball_drop", "cantilever_quasi_static")})

BENCHMARKS = [FEM_LADDER, MPM_LADDER, MPM_SWEEP, MPM_FULL, FEM, DOT, ASYNC, CONSTRAINT, CONTACT,
              CONTACT_SQUEEZE, CHECKPOINT, XPBD_CHAIN, XPBD_PROJECTIONS, XPBD_PARTICLES,
              XPBD_ELEPHANT, XPBD_CLOTH, XPBD_ORDER, SMOKE, SMOKE_MPM, EXAMPLES]
BY_NAME = {b.name: b for b in BENCHMARKS}
SUITES = {"xpbd": [b.name for b in BENCHMARKS if b.part_of == "xpbd"]}


def lookup(name):
    """[Benchmark] of a benchmark or suite name; KeyError if unknown."""
    if name in SUITES:
        return [BY_NAME[n] for n in SUITES[name]]
    return [BY_NAME[name]]
