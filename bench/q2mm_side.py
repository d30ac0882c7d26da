#!/usr/bin/env python3
"""The q2mm half of `bench/compare-q2mm`: q2mm's own frequency objectives, timed.

Two subcommands:

  run      (needs the benchmark venv with q2mm 5.0.0a2, JAX, OpenMM, SciPy)
           For CH3F and the nine rh-enamide structures, builds q2mm's benchmark frequency
           objective with q2mm's own classes and measures, per MM backend (q2mm's JAX engine on
           the CPU, q2mm's OpenMM engine on a chosen platform): the starting score, the time of
           one objective evaluation, the time of one gradient as q2mm's L-BFGS-B fit takes it,
           and a whole L-BFGS-B fit with q2mm's defaults (capped in wall time).
  compare  (standard library only)
           Reads the JSON written by `run` and a JSON of the same schema written by the
           hessfit half, and prints both side by side with q2mm/hessfit ratios.

The objective is q2mm's benchmark objective: QM frequencies above 50 cm^-1, each with weight
0.001, paired by position with the MM frequencies above 50 cm^-1 of the starting force field
(computed once, per backend), loss = sum (w (qm - mm))^2.

Written against q2mm 5.0.0a2 (the release `pip install --pre q2mm` gives); later q2mm versions
reorganised this API. See bench/README.md for what each number means.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SN2_DIR = REPO / "examples" / "data" / "sn2"
RH_DIR = REPO / "examples" / "data" / "rh-enamide"
GOLDEN_DIR = REPO / "tests" / "data" / "goldens"

SCHEMA = "hessfit-bench-compare-q2mm/1"
FREQ_THRESHOLD = 50.0  # cm^-1, q2mm's benchmark cut for "real" modes
FREQ_WEIGHT = 0.001  # q2mm's benchmark weight per frequency
Q2MM_API_VERSION = "5.0.0a2"

# q2mm's CH3F benchmark golden (ch3f_jax_harmonic_gpu_lbfgsb.json, "seminario").
CH3F_GOLDEN_FILE = GOLDEN_DIR / "ch3f-benchmark-results" / "ch3f_jax_harmonic_gpu_lbfgsb.json"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------
# Small numeric helpers (no NumPy needed for these)
# --------------------------------------------------------------------------------------------


def summarize(samples: list[float]) -> dict:
    return {
        "median": statistics.median(samples),
        "min": min(samples),
        "max": max(samples),
        "repeats": len(samples),
        "samples": samples,
    }


def timed_repeats(fn, repeats: int, budget_s: float, min_repeats: int = 1) -> list[float]:
    """Call fn() up to `repeats` times, stopping early once `budget_s` is spent (>= min_repeats)."""
    samples: list[float] = []
    start = time.perf_counter()
    while len(samples) < repeats:
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
        if len(samples) >= min_repeats and time.perf_counter() - start >= budget_s:
            break
    return samples


def natural_key(name: str) -> list:
    return [int(s) if s.isdigit() else s for s in re.split(r"(\d+)", name)]


# --------------------------------------------------------------------------------------------
# run: building q2mm's objectives
# --------------------------------------------------------------------------------------------


class System:
    """One training set as q2mm sees it: molecules, QM frequencies per molecule, start FF."""

    def __init__(self, key, molecules, qm_freqs, forcefield, notes):
        self.key = key
        self.molecules = molecules
        self.qm_freqs = qm_freqs  # per molecule: sorted QM frequencies above the threshold
        self.forcefield = forcefield
        self.notes = notes


def qm_frequencies_from_hessian(np, hessian_au, symbols):
    """Harmonic frequencies (cm^-1) of a Cartesian Hessian in Hartree/Bohr^2, unprojected.

    Mass-weighted with q2mm's masses and unit constants, the same conversion q2mm's OpenMM
    engine applies to MM Hessians: nu = sign(l) sqrt(|l|) / (2 pi c), l the eigenvalues of
    M^-1/2 H M^-1/2 in SI units.
    """
    from q2mm.constants import AMU_TO_KG, BOHR_TO_ANG, HARTREE_TO_J, MASSES, SPEED_OF_LIGHT_MS

    bohr_m = BOHR_TO_ANG * 1e-10
    h_si = np.asarray(hessian_au) * HARTREE_TO_J / bohr_m**2
    m = np.repeat([MASSES[s] * AMU_TO_KG for s in symbols], 3)
    lam = np.linalg.eigvalsh(h_si / np.sqrt(np.outer(m, m)))
    return np.sign(lam) * np.sqrt(np.abs(lam)) / (2.0 * math.pi * SPEED_OF_LIGHT_MS * 100.0)


def real_sorted(np, freqs):
    f = np.asarray(freqs, dtype=float)
    return np.sort(f[f > FREQ_THRESHOLD])


def read_ch3f_start_file(path: Path) -> dict:
    """The shared CH3F start (kcal/mol, A, deg; E = k (x - x0)^2): {('bond', 'C', 'F'): (k, x0)}."""
    out = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if parts and parts[0] == "bond":
            out[("bond", *sorted(parts[1:3]))] = (float(parts[3]), float(parts[4]))
        elif parts and parts[0] == "angle":
            outer = sorted([parts[1], parts[3]])
            out[("angle", outer[0], parts[2], outer[1])] = (float(parts[4]), float(parts[5]))
    return out


def load_ch3f(np) -> System:
    """q2mm's CH3F benchmark system (q2mm.diagnostics.benchmark.run_benchmark's recipe)."""
    from q2mm.backends.mm.jax_engine import _ANGLE_K_CONV, _BOND_K_CONV
    from q2mm.models.molecule import Q2MMMolecule
    from q2mm.models.seminario import estimate_force_constants

    # q2mm's CH3F benchmark reads the xyz with bond_tolerance=1.5 (TS-style detection).
    mol = Q2MMMolecule.from_xyz(SN2_DIR / "ch3f-optimized.xyz", bond_tolerance=1.5)
    qm = real_sorted(np, np.loadtxt(SN2_DIR / "ch3f-frequencies.txt"))
    hessian = np.load(SN2_DIR / "ch3f-hessian.npy")
    ff = estimate_force_constants(mol.with_hessian(hessian))

    # Cross-check q2mm's own Seminario against the start the hessfit half reads
    # (examples/data/sn2/ch3f-seminario-start.txt, q2mm's newer kcal/mol units). In 5.0.0a2 the
    # force field holds MM3 units (mdyn/A, mdyn*A/rad^2); its JAX engine converts them with
    # _BOND_K_CONV / _ANGLE_K_CONV to the kcal/mol, E = k (x - x0)^2 form of the file.
    shared = read_ch3f_start_file(SN2_DIR / "ch3f-seminario-start.txt")
    worst = 0.0
    for b in ff.bonds:
        k, x0 = shared[("bond", *b.key)]
        worst = max(worst, abs(b.force_constant * _BOND_K_CONV - k) / abs(k), abs(b.equilibrium - x0) / x0)
    for a in ff.angles:
        k, x0 = shared[("angle", *a.key)]
        worst = max(worst, abs(a.force_constant * _ANGLE_K_CONV - k) / abs(k), abs(a.equilibrium - x0) / x0)
    notes = {
        "structure": "examples/data/sn2/ch3f-optimized.xyz (Q2MMMolecule.from_xyz, bond_tolerance=1.5)",
        "qm_frequencies": "examples/data/sn2/ch3f-frequencies.txt, those above 50 cm^-1",
        "start": "q2mm's Seminario: estimate_force_constants(molecule.with_hessian(ch3f-hessian.npy))",
        "start_vs_shared_start_file_max_rel_diff": worst,
    }
    return System("ch3f", [mol], [qm], ff, notes)


def load_rh_enamide(np, start: str) -> System:
    """q2mm's rh-enamide benchmark system: nine structures from the .mmo, Jaguar Hessians."""
    from q2mm import constants as co
    from q2mm.models.forcefield import ForceField
    from q2mm.models.molecule import Q2MMMolecule
    from q2mm.models.seminario import estimate_force_constants
    from q2mm.parsers import JaguarIn, MacroModel

    jaguar_gz = sorted((RH_DIR / "jaguar").glob("*.01.in.gz"), key=lambda p: natural_key(p.name))
    molecules, zmat_worst = [], 0.0
    # q2mm's parsers open plain files; the repository stores these gzip-compressed.
    with tempfile.TemporaryDirectory(prefix="q2mm-side-") as tmp:
        tmp = Path(tmp)

        def plain(gz: Path) -> Path:
            out = tmp / gz.name[: -len(".gz")]
            with gzip.open(gz, "rb") as src:
                out.write_bytes(src.read())
            return out

        structures = MacroModel(str(plain(RH_DIR / "rh_enamide_training_set.mmo.gz"))).structures
        if len(structures) != len(jaguar_gz) or not structures:
            raise SystemExit(f"rh-enamide: {len(structures)} .mmo structures but {len(jaguar_gz)} Jaguar inputs")
        for st, gz in zip(structures, jaguar_gz):
            path = plain(gz)
            # 5.0.0a2's JaguarIn.get_hessian multiplies the Hartree/Bohr^2 &hess block by
            # constants.HESSIAN_CONVERSION (to kJ/mol/A^2), while Q2MMMolecule.hessian and the
            # Seminario code take Hartree/Bohr^2 (q2mm later fixed this "double conversion").
            hessian = JaguarIn(str(path)).get_hessian(len(st.atoms)) / co.HESSIAN_CONVERSION
            # Guard the pairing of .mmo structures with Jaguar files: same atoms, same frame.
            text = path.read_text()
            zmat = text.split("&zmat", 1)[1].split("&", 1)[0].split("\n")
            rows = [r.split() for r in zmat if len(r.split()) >= 4]
            xyz = np.array([[float(v) for v in r[1:4]] for r in rows])
            mmo_xyz = np.array([a.coords for a in st.atoms])
            if xyz.shape != mmo_xyz.shape:
                raise SystemExit(f"rh-enamide: {gz.name} has {len(xyz)} atoms, the .mmo structure {len(mmo_xyz)}")
            zmat_worst = max(zmat_worst, float(np.abs(xyz - mmo_xyz).max()))
            molecules.append(Q2MMMolecule.from_structure(st, hessian=hessian))
    if zmat_worst > 1e-3:
        raise SystemExit(f"rh-enamide: .mmo and Jaguar coordinates differ by {zmat_worst} A: files out of order")

    qm = [real_sorted(np, qm_frequencies_from_hessian(np, m.hessian, m.symbols)) for m in molecules]
    if start == "q2mm-seminario":
        # As q2mm's rh-enamide benchmark loader: the MM3* file as template (mm3.fld is
        # byte-identical to rh_hyd_enamide_start.fld), then q2mm's Seminario over all nine.
        template = ForceField.from_mm3_fld(str(RH_DIR / "ff" / "mm3.fld"))
        ff = estimate_force_constants(molecules, forcefield=template)
        start_note = "q2mm's Seminario over the nine Hessians, template ff/mm3.fld (= ff/rh_hyd_enamide_start.fld)"
    elif start == "seminario-fld":
        ff = ForceField.from_mm3_fld(str(RH_DIR / "ff" / "rh_hyd_enamide_seminario.fld"))
        start_note = "ff/rh_hyd_enamide_seminario.fld as read by ForceField.from_mm3_fld"
    else:
        raise SystemExit(f"unknown rh-enamide start {start!r}")

    term_matching = _count_unmatched(molecules, ff)
    notes = {
        "structures": "examples/data/rh-enamide/rh_enamide_training_set.mmo.gz (Q2MMMolecule.from_structure)",
        "hessians": "examples/data/rh-enamide/jaguar/*.01.in.gz (JaguarIn.get_hessian / HESSIAN_CONVERSION)",
        "qm_frequencies": "from each Hessian, unprojected, q2mm's masses; those above 50 cm^-1",
        "start": start_note,
        "mmo_vs_jaguar_max_coordinate_diff_A": zmat_worst,
        "term_matching": term_matching,
    }
    return System("rh-enamide", molecules, qm, ff, notes)


def _count_unmatched(molecules, ff) -> dict:
    """How q2mm 5.0.0a2 maps this training set's terms onto its parameters.

    Its force field holds only the .fld's OPT-substructure rows. A term whose .mmo row is not
    among them is matched by atom types (env_id), else by elements alone (ff.match_bond /
    match_angle), else left out of the MM model. Torsions are read but neither engine
    evaluates them.
    """
    counts = {}
    for kind, params, match in (("bonds", ff.bonds, ff.match_bond), ("angles", ff.angles, ff.match_angle)):
        rows = {p.ff_row for p in params}
        c = {"total": 0, "by_fld_row": 0, "by_atom_types": 0, "by_elements_only": 0, "left_out": 0}
        for m in molecules:
            for t in getattr(m, kind):
                c["total"] += 1
                p = match(t.elements, env_id=t.env_id, ff_row=t.ff_row)
                if p is None:
                    c["left_out"] += 1
                elif t.ff_row in rows:
                    c["by_fld_row"] += 1
                elif p.env_id == t.env_id:
                    c["by_atom_types"] += 1
                else:
                    c["by_elements_only"] += 1
        counts[kind] = c
    counts["torsion_parameters_not_evaluated"] = len(ff.torsions)
    return counts


def make_engine(backend: str, openmm_platform: str):
    if backend == "jax":
        from q2mm.backends.mm.jax_engine import JaxEngine

        return JaxEngine()
    if backend == "openmm":
        from q2mm.backends.mm.openmm import OpenMMEngine

        return OpenMMEngine(openmm_platform)
    raise SystemExit(f"unknown backend {backend!r}")


def build_reference(np, system: System, engine, ff):
    """q2mm's pairing: k-th QM frequency above 50 with the k-th MM one of the start FF."""
    from q2mm.optimizers.objective import ReferenceData

    ref = ReferenceData()
    for i, mol in enumerate(system.molecules):
        mm = engine.frequencies(mol, ff)
        mm_idx = sorted(j for j, f in enumerate(mm) if f > FREQ_THRESHOLD)
        qm = system.qm_freqs[i]
        for k in range(min(len(qm), len(mm_idx))):
            ref.add_frequency(float(qm[k]), data_idx=mm_idx[k], weight=FREQ_WEIGHT, molecule_idx=i)
    return ref


class FitTimeLimit(Exception):
    pass


def capped_objective_class():
    from q2mm.optimizers.objective import ObjectiveFunction

    class CappedObjective(ObjectiveFunction):
        """q2mm's ObjectiveFunction that refuses to evaluate once its deadline has passed."""

        deadline = math.inf
        t_start = 0.0

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.trace = []  # (s since t_start, score) of every evaluation

        def __call__(self, param_vector):
            if time.perf_counter() > self.deadline:
                raise FitTimeLimit()
            score = super().__call__(param_vector)
            self.trace.append((time.perf_counter() - self.t_start, score))
            return score

        def reset(self):
            super().reset()
            self.trace = []

    return CappedObjective


def best_so_far_trace(trace, max_points=400):
    """[t_s, best score so far] after each evaluation, thinned to at most max_points rows."""
    rows, best = [], math.inf
    for t, f in trace:
        best = min(best, f)
        rows.append([round(t, 4), best])
    if len(rows) > max_points:
        step = len(rows) / max_points
        rows = [rows[int(i * step)] for i in range(max_points)] + [rows[-1]]
    return rows


def fd_gradient(np, objective, x, f0, eps, bounds):
    """The gradient exactly as SciPy's L-BFGS-B forms it when given no jac (q2mm's default):
    2-point forward differences, absolute step eps, steps reversed at upper bounds; f0 reused."""
    lb = np.array([b[0] for b in bounds], dtype=float)
    ub = np.array([b[1] for b in bounds], dtype=float)
    try:
        from scipy.optimize._numdiff import approx_derivative
    except ImportError:  # pragma: no cover - SciPy moved its private helper
        g = np.empty_like(x)
        for i in range(len(x)):
            h = eps if x[i] + eps <= ub[i] else -eps
            xp = x.copy()
            xp[i] += h
            g[i] = (objective(xp) - f0) / h
        return g
    return approx_derivative(objective, x, method="2-point", abs_step=eps, f0=f0, bounds=(lb, ub))


def measure(np, system: System, backend: str, args) -> dict:
    from q2mm.optimizers.objective import ObjectiveFunction
    from q2mm.optimizers.scipy_opt import ScipyOptimizer

    engine = make_engine(backend, args.openmm_platform)
    label = "jax-cpu" if backend == "jax" else f"openmm-{args.openmm_platform}"
    log(f"[{system.key} / {label}] building the reference (MM frequencies of the start, once)")
    t0 = time.perf_counter()
    ref = build_reference(np, system, engine, system.forcefield)
    t_ref = time.perf_counter() - t0
    n_obs = ref.n_observations

    obj = ObjectiveFunction(system.forcefield.copy(), engine, system.molecules, ref)
    x0 = obj.forcefield.get_param_vector().copy()
    n_params = len(x0)
    bounds = obj.forcefield.get_bounds()
    outside = [i for i, (lo, hi) in enumerate(bounds) if not lo <= x0[i] <= hi]

    t0 = time.perf_counter()
    f0 = obj(x0)
    first_call = time.perf_counter() - t0  # includes context creation / JIT compilation
    rmsd = math.sqrt(f0 / n_obs) / FREQ_WEIGHT
    rec = {
        "system": system.key,
        "tool": "q2mm",
        "backend": label,
        "engine": engine.name,
        "n_molecules": len(system.molecules),
        "n_atoms": sum(m.n_atoms for m in system.molecules),
        "n_params": n_params,
        "n_observations": n_obs,
        "n_params_outside_default_bounds": len(outside),
        "start_score": f0,
        "start_rmsd_cm1": rmsd,
        "reference_build_s": t_ref,
        "first_eval_s": first_call,
        "system_notes": system.notes,
    }
    log(f"  start score {f0:.6f} (RMSD {rmsd:.2f} cm^-1), {n_params} parameters, {n_obs} frequencies")

    evals = timed_repeats(lambda: obj(x0), args.eval_repeats, args.eval_budget, min_repeats=3)
    rec["eval_s"] = summarize(evals)
    log(f"  evaluation: median {rec['eval_s']['median'] * 1e3:.2f} ms over {len(evals)}")

    # Does q2mm offer an exact gradient for this objective? (JaxEngine has jax.grad of the energy.)
    try:
        obj.gradient(x0)
        rec["analytic_gradient"] = {"available": True}
    except Exception as exc:  # q2mm raises for every non-energy reference
        rec["analytic_gradient"] = {"available": False, "reason": f"{type(exc).__name__}: {exc}"}

    eps = ScipyOptimizer().eps
    grads = timed_repeats(lambda: fd_gradient(np, obj, x0, f0, eps, bounds), args.grad_repeats, args.grad_budget)
    rec["grad_s"] = summarize(grads)
    rec["grad_s"]["method"] = (
        f"SciPy L-BFGS-B finite differences (q2mm's jac=None default): 2-point forward, "
        f"absolute step {eps}, {n_params} objective evaluations per gradient"
    )
    rec["grad_s"]["evaluations_per_gradient"] = n_params
    log(f"  gradient: median {rec['grad_s']['median']:.3f} s over {len(grads)}")

    if args.no_fit:
        rec["fit"] = None
        return rec

    Capped = capped_objective_class()
    fit_obj = Capped(system.forcefield.copy(), engine, system.molecules, ref)
    # q2mm's benchmark settings (run_benchmark): L-BFGS-B, maxiter 10000, otherwise the
    # ScipyOptimizer defaults (ftol 1e-8, eps 1e-3, ForceField.get_bounds(), divergence stop).
    opt = ScipyOptimizer(method="L-BFGS-B", maxiter=10_000, verbose=False)
    log(f"  fit: L-BFGS-B, q2mm defaults, cap {args.fit_cap:.0f} s")
    t0 = time.perf_counter()
    fit_obj.t_start = t0
    fit_obj.deadline = t0 + args.fit_cap
    try:
        res = opt.optimize(fit_obj)
        wall = time.perf_counter() - t0
        fit = {
            "capped": False,
            "wall_s": wall,
            "evaluations": res.n_evaluations,
            "iterations": res.n_iterations,
            "initial_score": res.initial_score,
            "final_score": res.final_score,
            "converged": bool(res.success),
            "message": res.message,
        }
    except FitTimeLimit:
        wall = time.perf_counter() - t0
        hist = list(fit_obj.history)
        fit = {
            "capped": True,
            "wall_s": wall,
            "evaluations": fit_obj.n_eval,
            "iterations": None,
            "initial_score": hist[0] if hist else None,
            "final_score": min(hist) if hist else None,  # best point evaluated before the cap
            "converged": False,
            "message": f"stopped by the {args.fit_cap:.0f} s cap; final_score is the best evaluated",
        }
    fit["cap_s"] = args.fit_cap
    fit["method"] = "L-BFGS-B (ScipyOptimizer: maxiter 10000, ftol 1e-8, eps 1e-3, default bounds)"
    fit["evaluations_per_s"] = fit["evaluations"] / wall if wall > 0 else None
    fit["best_score_trace"] = best_so_far_trace(fit_obj.trace)  # [s since fit start, best score]
    rec["fit"] = fit
    log(
        f"  fit: {wall:.1f} s, {fit['evaluations']} evaluations, score {fit['initial_score']:.6g} -> "
        f"{fit['final_score']:.6g}{' (CAPPED)' if fit['capped'] else ''}"
    )
    return rec


def ch3f_golden():
    try:
        d = json.loads(CH3F_GOLDEN_FILE.read_text())
        return {"score": d["seminario"]["score"], "rmsd_cm1": d["seminario"]["rmsd"], "file": str(CH3F_GOLDEN_FILE.relative_to(REPO))}
    except (OSError, KeyError, ValueError):
        return None


def environment() -> dict:
    from importlib import metadata

    versions = {}
    for pkg in ("q2mm", "jax", "jaxlib", "openmm", "scipy", "numpy"):
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            versions[pkg] = None
    cpu = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "versions": versions,
        "python": platform.python_version(),
        "machine": {"nproc": os.cpu_count(), "cpu": cpu, "platform": platform.platform()},
    }


def cmd_run(args) -> int:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # q2mm's JAX backend on the CPU, as asked
    try:
        import numpy as np
        import q2mm  # noqa: F401
        from q2mm.parsers import JaguarIn, MacroModel  # noqa: F401  (5.0.0a2 layout)
        from q2mm.optimizers.objective import ObjectiveFunction  # noqa: F401
    except ImportError as exc:
        raise SystemExit(
            f"q2mm_side.py: cannot import q2mm's {Q2MM_API_VERSION} API ({exc}); run it with the "
            "benchmark venv: bench/compare-q2mm sets it up"
        )
    import logging

    logging.getLogger("q2mm").setLevel(logging.ERROR)  # Seminario warnings per TS bond
    env = environment()
    if env["versions"]["q2mm"] != Q2MM_API_VERSION:
        log(f"warning: q2mm {env['versions']['q2mm']} installed; this script was written against {Q2MM_API_VERSION}")

    load_avg_start = os.getloadavg()
    started = datetime.now(timezone.utc)
    records = []
    for key in args.systems:
        log(f"loading {key}")
        t0 = time.perf_counter()
        system = load_ch3f(np) if key == "ch3f" else load_rh_enamide(np, args.rh_start)
        log(f"  loaded in {time.perf_counter() - t0:.1f} s")
        for backend in args.backends:
            rec = measure(np, system, backend, args)
            if key == "ch3f":
                gold = ch3f_golden()
                if gold:
                    rec["golden"] = gold
                    rec["start_score_rel_diff_to_golden"] = abs(rec["start_score"] - gold["score"]) / gold["score"]
            records.append(rec)
            if args.json:  # keep what is done so far if a later case is interrupted
                write_json(args.json, env, args, started, load_avg_start, records, partial=True)

    out = write_json(args.json, env, args, started, load_avg_start, records, partial=False) if args.json else None
    print(format_q2mm_table(records, env))
    if out:
        log(f"wrote {out}")
    return 0


def write_json(path, env, args, started, load_avg_start, records, partial):
    doc = {
        "schema": SCHEMA,
        "tool": "q2mm",
        "partial": partial,
        "started_utc": started.isoformat(timespec="seconds"),
        "finished_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "load_average_start": list(load_avg_start),
        "load_average_end": list(os.getloadavg()),
        **env,
        "settings": {
            "systems": args.systems,
            "backends": args.backends,
            "openmm_platform": args.openmm_platform,
            "rh_start": args.rh_start,
            "eval_repeats": args.eval_repeats,
            "eval_budget_s": args.eval_budget,
            "grad_repeats": args.grad_repeats,
            "grad_budget_s": args.grad_budget,
            "fit_cap_s": None if args.no_fit else args.fit_cap,
            "objective": "QM frequencies > 50 cm^-1, weight 0.001, paired by position with the start's "
            "MM frequencies > 50 cm^-1; loss sum (w (qm - mm))^2",
        },
        "records": records,
    }
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(path)
    return path


# --------------------------------------------------------------------------------------------
# Tables (shared by run and compare; standard library only)
# --------------------------------------------------------------------------------------------


def _ms(x):
    return "-" if x is None else f"{x * 1e3:.3g}"


def _s(x):
    return "-" if x is None else f"{x:.3g}"


def _g(x):
    return "-" if x is None else f"{x:.6g}"


def _fit(rec, key):
    fit = rec.get("fit") or {}
    return fit.get(key)


def format_q2mm_table(records, env) -> str:
    v = env["versions"] if env else {}
    lines = [
        f"q2mm {v.get('q2mm')} (jax {v.get('jax')}, openmm {v.get('openmm')}, scipy {v.get('scipy')}); "
        "times are medians; gradient = SciPy 2-point finite differences as q2mm's L-BFGS-B takes it",
        "",
        "| system | backend | params | freqs | start score | start RMSD cm^-1 | eval ms | gradient s | evals/grad "
        "| fit s | fit evals | final score | capped |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in records:
        lines.append(
            f"| {r['system']} | {r['backend']} | {r['n_params']} | {r['n_observations']} | {r['start_score']:.6g} "
            f"| {r['start_rmsd_cm1']:.2f} | {_ms(r['eval_s']['median'])} | {_s(r['grad_s']['median'])} "
            f"| {r['grad_s']['evaluations_per_gradient']} | {_s(_fit(r, 'wall_s'))} | {_fit(r, 'evaluations') or '-'} "
            f"| {_g(_fit(r, 'final_score'))} | {'yes' if _fit(r, 'capped') else ('no' if r.get('fit') else '-')} |"
        )
    golden = [r for r in records if r.get("golden")]
    for r in golden:
        lines.append(
            f"\nCH3F start ({r['backend']}): score {r['start_score']:.6f}, RMSD {r['start_rmsd_cm1']:.2f} cm^-1; "
            f"q2mm golden {r['golden']['score']:.6f} / {r['golden']['rmsd_cm1']:.2f} "
            f"(relative difference {r['start_score_rel_diff_to_golden']:.1e})"
        )
    return "\n".join(lines)


def _ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.3g}x"


def format_comparison(q2mm_doc, hessfit_doc) -> str:
    """q2mm records side by side with hessfit's, ratio = q2mm / hessfit (higher: hessfit faster)."""
    hf_by_system = {}
    for r in hessfit_doc.get("records", []):
        hf_by_system.setdefault(r["system"], r)
    lines = [
        "| system | q2mm backend | eval ms q2mm / hessfit (ratio) | gradient s q2mm / hessfit (ratio) "
        "| fit s q2mm / hessfit (ratio) | final score q2mm / hessfit | start score q2mm / hessfit |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in q2mm_doc.get("records", []):
        h = hf_by_system.get(r["system"])
        if h is None:
            lines.append(f"| {r['system']} | {r['backend']} | no hessfit record | | | | |")
            continue
        qe, he = r["eval_s"]["median"], h["eval_s"]["median"]
        qg, hg = r["grad_s"]["median"], h["grad_s"]["median"]
        qf, hf = _fit(r, "wall_s"), _fit(h, "wall_s")
        capped = " (q2mm capped)" if _fit(r, "capped") else ""
        lines.append(
            f"| {r['system']} | {r['backend']} | {_ms(qe)} / {_ms(he)} ({_ratio(qe, he)}) "
            f"| {_s(qg)} / {_s(hg)} ({_ratio(qg, hg)}) | {_s(qf)} / {_s(hf)} ({_ratio(qf, hf)}){capped} "
            f"| {_g(_fit(r, 'final_score'))} / {_g(_fit(h, 'final_score'))} "
            f"| {_g(r['start_score'])} / {_g(h['start_score'])} |"
        )
    return "\n".join(lines)


def cmd_compare(args) -> int:
    docs = []
    for name in (args.q2mm_json, args.hessfit_json):
        try:
            docs.append(json.loads(Path(name).read_text()))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"q2mm_side.py compare: {name}: {exc}")
    q, h = docs
    for doc, name in ((q, args.q2mm_json), (h, args.hessfit_json)):
        if doc.get("schema") != SCHEMA:
            raise SystemExit(f"{name}: schema {doc.get('schema')!r}, expected {SCHEMA!r}")
    print(format_q2mm_table(q["records"], q))
    print()
    print(format_comparison(q, h))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run q2mm's objectives and fits (benchmark venv)")
    r.add_argument("--json", metavar="FILE", help="write every number here (also rewritten after each case)")
    r.add_argument("--systems", default="ch3f,rh-enamide", type=lambda s: s.split(","), help="ch3f,rh-enamide")
    r.add_argument("--backends", default="jax,openmm", type=lambda s: s.split(","), help="jax,openmm")
    r.add_argument("--openmm-platform", default="CPU", help="OpenMM platform for q2mm's OpenMM engine (CPU, Reference)")
    r.add_argument("--rh-start", default="q2mm-seminario", choices=("q2mm-seminario", "seminario-fld"))
    r.add_argument("--eval-repeats", type=int, default=20, help="objective evaluations timed (at most)")
    r.add_argument("--eval-budget", type=float, default=20.0, help="stop timing evaluations after this many s (>= 3 runs)")
    r.add_argument("--grad-repeats", type=int, default=3, help="gradients timed (at most)")
    r.add_argument("--grad-budget", type=float, default=60.0, help="stop timing gradients after this many s (>= 1 run)")
    r.add_argument("--fit-cap", type=float, default=600.0, help="wall-time cap of each fit in s")
    r.add_argument("--no-fit", action="store_true", help="skip the fits")
    c = sub.add_parser("compare", help="print q2mm and hessfit JSON side by side")
    c.add_argument("q2mm_json")
    c.add_argument("hessfit_json")
    args = p.parse_args(argv)
    if args.cmd == "run":
        for s in args.systems:
            if s not in ("ch3f", "rh-enamide"):
                p.error(f"unknown system {s!r}")
        for b in args.backends:
            if b not in ("jax", "openmm"):
                p.error(f"unknown backend {b!r}")
        return cmd_run(args)
    if args.cmd == "compare":
        return cmd_compare(args)
    p.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
