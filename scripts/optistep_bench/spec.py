"""The vocabulary benchmarks are declared in (optistep_bench.benchmarks): scenes, sizes
(rungs), methods, rank counts and the runs they expand to.

A Benchmark is data: every run is one element of scenes x rungs x methods x ranks x
repeats (minus what `skip` leaves out), each an `optistep run` of the scene's config with
the --set overrides and PETSc options of the benchmark, the scene, the rung and the method,
in that order (a later --set of the same key wins). Programs are the bench/ executables
(micro-benchmarks) a benchmark also runs. Labels become CSV columns.
"""
import dataclasses
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass(frozen=True)
class Mesh:
    """A TetGen mesh the benchmark makes and caches (optistep_bench.meshes): `tetgen
    <switches> <source>`, source a .poly or .off of the repository (or data/)."""
    name: str          # cache folder name, e.g. "bar_4x1x1-pq1.4a1e-4"
    source: str        # relative to the repository root
    switches: str      # e.g. "-pq1.4a1e-4" (tetgen's -Q is added)
    approx_tets: int   # what the switches give (documentation and the dry run's estimate)


@dataclass(frozen=True)
class Rung:
    """One size of a ladder: its --set overrides and, for tet meshes, the mesh that replaces
    bodies.<body>.mesh."""
    name: str
    sets: tuple = ()
    mesh: Optional[Mesh] = None
    body: int = 0
    size: int = 0       # approximate tets or particles (labels, estimates)
    quick: bool = True  # part of --quick
    labels: tuple = ()  # (("dx", "0.0075"),): CSV columns
    optional: bool = False  # run only when --only rung=<name> (or one of its labels) asks

    def all_sets(self, mesh_path=None):
        sets = list(self.sets)
        if self.mesh is not None:
            sets.append(f"bodies.{self.body}.mesh={mesh_path or '<' + self.mesh.name + '>'}")
        return sets


BASE_RUNG = Rung("scene")  # the scene as its config has it


@dataclass(frozen=True)
class Scene:
    """A config and the overrides that make it this benchmark's scene."""
    name: str
    config: str                # relative to the repository root
    sets: tuple = ()
    options: tuple = ()        # PETSc options
    frames: Optional[int] = None
    frame_rate: float = 0.0    # needed by windows
    rungs: tuple = (BASE_RUNG,)
    labels: tuple = ()         # (("E_mid", "1e5"), ...): CSV columns
    discretization: str = "fem"
    fetch: tuple = ()          # scripts/fetch-meshes.sh arguments the config's mesh needs
    optional: bool = False     # run only when --only scene=<name> asks for it


@dataclass(frozen=True)
class Method:
    """What solves the steps: --set overrides (solver.method=..., integrator=...) and PETSc
    options. `pending` names a capability not on main yet (the run is listed, tried, and
    recorded as refused if optistep does not know it)."""
    name: str
    sets: tuple = ()
    options: tuple = ()
    title: str = ""
    pending: str = ""
    labels: tuple = ()
    optional: bool = False     # run only when --only method=<name> asks for it
    rank_sets: Optional[Callable] = None  # ranks -> further --set overrides (DOT's K/ranks)


@dataclass(frozen=True)
class Window:
    """A span of frames (first..last, 1-based, inclusive) whose steps are summarized apart:
    columns <column>_<name> for s_per_step, outer_per_step, inner_per_step, halvings."""
    name: str
    first: int
    last: int


@dataclass(frozen=True)
class Program:
    """A bench/ executable (a CMake target, a Google Benchmark program) run once per
    benchmark: its console output is kept as output.txt, its JSON (the runner adds
    --benchmark_out) as benchmark.json, which collect.PROGRAM_PARSERS[parser] reads."""
    name: str
    target: str
    args: tuple = ()           # "{out}" is replaced by the program's run folder
    ranks: int = 1
    parser: str = ""
    labels: tuple = ()
    quick_args: Optional[tuple] = None  # args under --quick


@dataclass
class Benchmark:
    name: str
    title: str
    about: str                       # what it measures and where its figures come from
    scenes: list
    methods: list = dataclasses.field(default_factory=lambda: [Method("scene")])
    ranks: tuple = (1, 2)
    sets: tuple = ()                 # every run
    options: tuple = ()              # every run (PETSc options)
    frames: Optional[int] = None     # time.frames unless the scene sets its own
    repeats: int = 1
    skip: Optional[Callable] = None  # (scene, rung, method, ranks) -> reason or None
    metrics: tuple = ()              # collect.METRICS names: extra columns
    windows: tuple = ()
    table: tuple = ()                # the record's columns (CSV holds all)
    plots: tuple = ()                # plots.PLOTS names
    programs: tuple = ()
    time_limit: Optional[float] = None  # seconds per run; a run cut off keeps its steps
    quick: dict = field(default_factory=dict)  # overrides under --quick: frames, ranks,
    #                                            scenes/methods (names), repeats
    replaces: str = ""               # the scripts/bench-*.sh it took over
    write_frames: bool = True        # False: output.every large (runs that time steps only)
    checkpoint_every_steps: int = 0  # > 0: checkpoints written (their time is measured)
    part_of: str = ""                # suite name (several benchmarks under one command)
    method_factory: Optional[Callable] = None  # name -> Method or None: the methods a
    #                                            --only method=NAME may name beyond those declared


@dataclass
class RunSpec:
    """One run of a benchmark, resolved: what the runner executes and the collector labels."""
    benchmark: str
    name: str              # folder name under the benchmark's out folder
    scene: Scene
    rung: Rung
    method: Method
    ranks: int
    repeat: int
    frames: Optional[int]
    sets: list
    options: list
    mesh: Optional[Mesh]
    labels: dict
    time_limit: Optional[float]
    metrics: tuple
    windows: tuple
    skipped: str = ""


def slug(text):
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", str(text)).strip("_")


def expand(bench, ranks=None, quick=False, frames=None, only=(), repeats=None, time_limit=None):
    """The runs of bench: [RunSpec]. ranks/frames override the declaration; quick applies
    bench.quick (and keeps only rungs marked quick); only is [(label, {values})]: a run is
    kept when each named label has one of the values (optional scenes and methods only run
    when named so)."""
    q = bench.quick if quick else {}
    rank_list = list(ranks or q.get("ranks") or bench.ranks)
    repeats = repeats or q.get("repeats", bench.repeats)
    asked = {}
    for key, values in only:
        asked.setdefault(key, set()).update(values)
    def named(kind, item):  # an optional scene or method runs when a filter names it
        return item.name in asked.get(kind, ()) or any(
            str(v) in asked.get(k, ()) for k, v in item.labels)

    scenes = [s for s in bench.scenes if (not q.get("scenes") or s.name in q["scenes"])
              and (not s.optional or named("scene", s))]
    methods = [m for m in bench.methods if (not q.get("methods") or m.name in q["methods"])
               and (not m.optional or named("method", m))]
    methods += made_methods(bench, asked.get("method", ()))
    runs = []
    for scene in scenes:
        rungs = [r for r in scene.rungs if (r.quick or not quick)
                 and (not r.optional or named("rung", r))]
        for rung in rungs:
            for method in methods:
                for r in rank_list:
                    for k in range(repeats):
                        runs.append(_resolve(bench, scene, rung, method, r, k, q, frames,
                                             repeats, time_limit))
    for key, values in asked.items():
        runs = [run for run in runs if str(run.labels.get(key)) in values]
    return runs


def made_methods(bench, names):
    """The methods bench.method_factory makes for the names a filter asks for that no
    declared method has (sorted by name; names it does not know are left out)."""
    declared = {m.name for m in bench.methods}
    made = []
    for name in sorted(set(names) - declared):
        method = bench.method_factory(name) if bench.method_factory else None
        if method is not None:
            made.append(method)
    return made


def unknown_methods(bench, names):
    """The names in names that are neither declared methods of bench nor made by its
    method_factory."""
    known = {m.name for m in bench.methods} | {m.name for m in made_methods(bench, names)}
    return sorted(set(names) - known)


def label_names(bench):
    """The labels a run of bench carries (what --only can select on)."""
    names = ["scene", "rung", "method", "ranks", "repeat"]
    for s in bench.scenes:
        names += [k for k, _ in s.labels if k not in names]
        for r in s.rungs:
            names += [k for k, _ in r.labels if k not in names]
    for m in bench.methods:
        names += [k for k, _ in m.labels if k not in names]
    return names


def _resolve(bench, scene, rung, method, ranks, repeat, q, frames, repeats, time_limit):
    n_frames = frames or q.get("frames") or scene.frames or bench.frames
    parts = [scene.name] + ([rung.name] if rung is not BASE_RUNG else []) + [method.name,
                                                                              f"np{ranks}"]
    if repeats > 1:
        parts.append(f"r{repeat + 1}")
    sets = list(bench.sets) + list(scene.sets) + rung.all_sets() + list(method.sets)
    if method.rank_sets:
        sets += list(method.rank_sets(ranks))
    if n_frames:
        sets.append(f"time.frames={n_frames}")
    if not bench.write_frames:
        sets.append("output.every=1000000")
    if bench.checkpoint_every_steps:
        sets.append(f"output.checkpoint_every_steps={bench.checkpoint_every_steps}")
    labels = {"benchmark": bench.name, "scene": scene.name, "rung": rung.name,
              "method": method.name, "ranks": ranks, "repeat": repeat + 1}
    labels.update(dict(scene.labels))
    labels.update(dict(rung.labels))
    labels.update(dict(method.labels))
    if rung.size:
        labels["nominal_size"] = rung.size
    run = RunSpec(benchmark=bench.name, name=slug("-".join(parts)), scene=scene, rung=rung,
                  method=method, ranks=ranks, repeat=repeat + 1, frames=n_frames, sets=sets,
                  options=list(bench.options) + list(scene.options) + list(method.options),
                  mesh=rung.mesh, labels=labels,
                  time_limit=time_limit or q.get("time_limit", bench.time_limit),
                  metrics=bench.metrics, windows=bench.windows)
    if bench.skip:
        run.skipped = bench.skip(scene, rung, method, ranks) or ""
    return run


def resolve_mesh_sets(run, mesh_path):
    """run.sets with the rung's mesh placeholder replaced by the made mesh's path."""
    placeholder = f"bodies.{run.rung.body}.mesh=<{run.mesh.name}>"
    return [f"bodies.{run.rung.body}.mesh={mesh_path}" if s == placeholder else s
            for s in run.sets]


def repo_path(root, rel):
    return rel if os.path.isabs(rel) else os.path.join(root, rel)
