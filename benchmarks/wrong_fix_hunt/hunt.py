#!/usr/bin/env python3
"""Wrong-fix hunt harness: check, fix (safe / all), run original vs fixed on JAX.

A fix marked safe must never change what a program computes, and unit tests only cover the shapes
someone thought of; this runs every generated adversarial program (see generate.py) before and
after `jaxloopfix check --fix` [--unsafe-fixes], on CPU, with and without x64, and reports each fix
whose program gives different dtypes, shapes or values, or raises.

Usage:
    python benchmarks/wrong_fix_hunt/hunt.py [SRC] [--progs DIR] [--out FILE] [--workers N] [--only SUBSTR ...]

SRC is the jaxloopfix source tree under test (default: this repository).  By default a copy of
SRC/jaxloopfix is frozen first (another engineer may be editing it) and run with
`python -m jaxloopfix`; working copies are kept in `snapshots/<hash>` beside the --out file.
With --live and the default SRC the installed `jaxloopfix` CLI is used.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SRC = str(HERE.parents[1])  # the repository root (benchmarks/wrong_fix_hunt/ -> ../..)
DEFAULT_OUT_DIR = Path(tempfile.gettempdir()) / "jlf-hunt"
CATEGORIES = {
    "intred": "integer reductions",
    "dtypechg": "output dtype differs",
    "promo": "promotion corners",
    "static": "static number args",
    "pyscalar": "Python-scalar carries",
    "shape": "shape corners",
    "prec": "precision",
    "mech": "rewrite mechanics",
}


# ----------------------------------------------------------------------------- tool invocation
NO_VERIFY = False
SNAPSHOT: str | None = None  # a frozen copy of the tree under test (set in main unless --live)


def tool_cmd(src: str) -> tuple[list[str], dict]:
    env = dict(os.environ)
    env.pop("JAXLOOPFIX_OUTPUT_FORMAT", None)
    if SNAPSHOT is None and os.path.realpath(src) == os.path.realpath(DEFAULT_SRC) and shutil.which("jaxloopfix"):
        return [shutil.which("jaxloopfix")], env
    env["PYTHONPATH"] = (SNAPSHOT or src) + os.pathsep + env.get("PYTHONPATH", "")
    return [sys.executable, "-m", "jaxloopfix"], env


def run_tool(src: str, args: list[str], cwd: str, timeout: float = 300) -> subprocess.CompletedProcess:
    cmd, env = tool_cmd(src)
    return subprocess.run(cmd + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


SMOKE = """import jax
import jax.numpy as jnp


@jax.jit
def f(xs: jax.Array):
    acc = jnp.zeros(xs.shape[1:])
    for t in range(xs.shape[0]):
        acc = acc + xs[t]
    return acc
"""


OUT_DIR = DEFAULT_OUT_DIR  # the --out file's folder: scratch space and snapshots live here (set in main)
SNAPSHOTS = OUT_DIR / "snapshots"  # every working snapshot, by hash, kept for later runs


def _smoke(src: str, root: Path) -> tuple[bool, str]:
    global SNAPSHOT
    SNAPSHOT = str(root)
    smoke = Path(tempfile.mkdtemp(prefix="smoke_", dir=str(OUT_DIR)))
    (smoke / "smoke.py").write_text(SMOKE)
    p = run_tool(src, ["check", "--no-cache", "--isolated", "--output-format", "json", "--exit-zero", "smoke.py"],
                 cwd=str(smoke))
    shutil.rmtree(smoke, ignore_errors=True)
    try:
        return p.returncode == 0 and len(json.loads(p.stdout)) == 1, p.stderr[-300:]
    except json.JSONDecodeError:
        return False, p.stderr[-300:]


def take_snapshot(src: str, dest: Path, fallback: bool = True) -> str:
    """Copy SRC/jaxloopfix (another engineer may be editing it), so that one run sees one version of
    the tool; check that the copy works, retrying while it does not.  A working snapshot is kept in
    snapshots/<hash>; when SRC stays broken, the newest kept snapshot is used (said loudly)."""
    import hashlib

    global SNAPSHOT
    if (Path(src) / "jaxloopfix" / "__init__.py").exists() and Path(src).resolve().parent == SNAPSHOTS.resolve():
        ok, err = _smoke(src, Path(src))  # a kept snapshot given as SRC: use it as it is
        if ok:
            return Path(src).name
    for attempt in range(6):
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(Path(src) / "jaxloopfix", dest / "jaxloopfix", ignore=shutil.ignore_patterns("__pycache__"))
        ok, err = _smoke(src, dest)
        if ok:
            digest = hashlib.sha256()
            for f in sorted((dest / "jaxloopfix").rglob("*.py")):
                digest.update(f.read_bytes())
            sha = digest.hexdigest()[:16]
            keep = SNAPSHOTS / sha
            if not keep.exists():
                shutil.copytree(dest, keep)
            SNAPSHOT = str(keep)
            return sha
        print(f"snapshot attempt {attempt}: smoke check failed: {err.strip()[:200]}", flush=True)
        time.sleep(10)
    kept = sorted(SNAPSHOTS.glob("*/jaxloopfix"), key=lambda q: q.stat().st_mtime) if SNAPSHOTS.exists() else []
    if fallback and kept:
        SNAPSHOT = str(kept[-1].parent)
        print(f"WARNING: {src} is broken right now; using the newest kept snapshot {SNAPSHOT}", flush=True)
        return kept[-1].parent.name + " (fallback: live tree broken)"
    raise SystemExit("could not snapshot a working jaxloopfix from " + src)


def _loop_record(d: dict) -> dict:
    """What the hunt keeps of one finding in `check`'s JSON."""
    fix = d.get("fix")
    return {
        "code": d.get("code"),
        "row": d.get("location", {}).get("row"),
        "message": d.get("message"),
        "fix": None if fix is None else fix.get("applicability"),
        "fix_message": None if fix is None else fix.get("message"),
        "no_fix_reason": d.get("no_fix_reason"),
    }


def check_json(src: str, path: Path) -> tuple[list[dict], str | None]:
    """Diagnostics of one program: rule, fix applicability and message per reported loop."""
    err = None
    for attempt in range(3):
        p = run_tool(src, ["check", "--no-cache", "--isolated", "--output-format", "json", "--exit-zero", path.name],
                     cwd=str(path.parent))
        try:
            diags = json.loads(p.stdout)
            if p.returncode == 0 and isinstance(diags, list):
                break
        except json.JSONDecodeError:
            pass
        err = f"check failed (rc {p.returncode}): {(p.stderr or p.stdout)[-400:]}"
        time.sleep(3)
    else:
        return [], err
    loops = []
    for d in diags:
        loops.append(_loop_record(d))
    return loops, None


def fixed_copy(src: str, path: Path, dest_dir: Path, unsafe: bool) -> tuple[Path, str | None]:
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / path.name
    args = ["check", "--no-cache", "--isolated", "--fix", "--exit-zero", dest.name]
    if unsafe:
        args.insert(3, "--unsafe-fixes")
    err = None
    for attempt in range(3):
        shutil.copyfile(path, dest)
        p = run_tool(src, args, cwd=str(dest_dir))
        if p.returncode == 0:
            return dest, None
        err = f"fix failed (rc {p.returncode}): {(p.stderr or p.stdout)[-400:]}"
        time.sleep(3)
    return dest, err


def batch_prepass(src: str, progs: list[Path], work: Path) -> dict[str, dict] | None:
    """Check and fix every program in three tool runs (one per mode) instead of three per program.
    None when a run fails (each program then runs the tool on its own)."""
    dirs = {k: work / "batch" / k for k in ("orig", "safe", "all")}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
        for prog in progs:
            shutil.copyfile(prog, d / prog.name)
    names = [p.name for p in progs]
    p = run_tool(src, ["check", "--no-cache", "--isolated", "--jobs", "2", "--output-format", "json", "--exit-zero",
                       *names], cwd=str(dirs["orig"]), timeout=900)
    try:
        diags = json.loads(p.stdout)
    except json.JSONDecodeError:
        print(f"batch check failed (rc {p.returncode}): {p.stderr[-300:]}; checking programs one by one")
        return None
    if p.returncode != 0:
        return None
    for mode, extra in (("safe", []), ("all", ["--unsafe-fixes"])):
        q = run_tool(src, ["check", "--no-cache", "--isolated", "--jobs", "2", "--fix", *extra, "--exit-zero", *names],
                     cwd=str(dirs[mode]), timeout=900)
        if q.returncode != 0:
            print(f"batch fix ({mode}) failed (rc {q.returncode}): {q.stderr[-300:]}; fixing programs one by one")
            return None
    out: dict[str, dict] = {prog.stem: {"loops": [], "safe": dirs["safe"] / prog.name, "all": dirs["all"] / prog.name}
                            for prog in progs}
    for d in diags:
        stem = Path(d.get("filename", "")).stem
        if stem not in out:
            continue
        out[stem]["loops"].append(_loop_record(d))
    return out


# ----------------------------------------------------------------------------- runtime comparison
def _tolerance(dtype) -> tuple[float, float] | None:
    import jax.numpy as jnp

    dt = jnp.dtype(dtype)
    if dt in (jnp.dtype(jnp.bfloat16),):
        return 3e-2, 3e-2
    if dt in (jnp.dtype(jnp.float16),):
        return 1e-2, 1e-2
    if dt in (jnp.dtype(jnp.float32), jnp.dtype(jnp.complex64)):
        return 2e-5, 2e-5
    if dt in (jnp.dtype(jnp.float64), jnp.dtype(jnp.complex128)):
        return 1e-12, 1e-12
    return None  # exact (ints, bools)


def compare(ref, got) -> str | None:
    """None when equal; otherwise why not."""
    import numpy as np
    import jax
    import jax.numpy as jnp

    sa, sb = jax.tree_util.tree_structure(ref), jax.tree_util.tree_structure(got)
    if sa != sb:
        return f"pytree structure {sa} vs {sb}"
    for i, (a, b) in enumerate(zip(jax.tree_util.tree_leaves(ref), jax.tree_util.tree_leaves(got))):
        a_dt = getattr(a, "dtype", type(a).__name__)
        b_dt = getattr(b, "dtype", type(b).__name__)
        a_sh, b_sh = np.shape(a), np.shape(b)
        if a_sh != b_sh:
            return f"leaf {i}: shape {a_sh} vs {b_sh}"
        if str(a_dt) != str(b_dt):
            return f"leaf {i}: dtype {a_dt} vs {b_dt}"
        x = np.asarray(jnp.asarray(a).astype(jnp.float64) if jnp.asarray(a).dtype == jnp.bfloat16 else a)
        y = np.asarray(jnp.asarray(b).astype(jnp.float64) if jnp.asarray(b).dtype == jnp.bfloat16 else b)
        tol = _tolerance(jnp.asarray(a).dtype) if hasattr(a, "dtype") or isinstance(a, float) else None
        if isinstance(a, float):
            tol = (1e-12, 1e-12)
        if tol is None:
            if not np.array_equal(x, y):
                bad = np.argwhere(np.asarray(x != y).reshape(np.shape(x)))
                return f"leaf {i}: {a_dt} values differ (exact compare) at {bad[:3].tolist()}: {np.ravel(x)[:4]} vs {np.ravel(y)[:4]}"
        else:
            rtol, atol = tol
            scale = max(1.0, float(np.nanmax(np.abs(x))) if np.size(x) and np.isfinite(np.nanmax(np.abs(x))) else 1.0)
            if not np.allclose(x, y, rtol=rtol, atol=atol * scale, equal_nan=True):
                diff = np.nanmax(np.abs(x.astype(np.complex128) - y.astype(np.complex128))) if np.size(x) else 0
                return f"leaf {i}: {a_dt} values differ, max |diff| {diff:.3g} (scale {scale:.3g}, rtol {rtol:g})"
    return None


def weak_note(ref, got) -> str | None:
    """Weak-type differences are reported as a note, not as a wrong result."""
    import jax

    for i, (a, b) in enumerate(zip(jax.tree_util.tree_leaves(ref), jax.tree_util.tree_leaves(got))):
        wa, wb = getattr(a, "weak_type", None), getattr(b, "weak_type", None)
        if wa is not None and wb is not None and wa != wb:
            return f"leaf {i}: weak_type {wa} vs {wb}"
    return None


def _load(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _short_exc(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    text = " ".join(text.split())
    text = text.replace("scan body function carry input and carry output must have equal types, but they differ: ",
                        "scan carry mismatch: ").replace(
        " Revise the function so that all output types match the corresponding input types.", "")
    return text[:400]


def run_one(orig: str, variants: dict[str, str], x64: bool) -> dict:
    """Runs in a fresh interpreter: import original and variants, call FUNC on every case."""
    import warnings

    warnings.filterwarnings("ignore")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    jax.config.update("jax_enable_x64", x64)
    import jax.numpy as jnp  # noqa: F401

    tag = f"{'x64' if x64 else 'x32'}_{os.getpid()}"
    out: dict = {"cases": [], "import_errors": {}}
    try:
        base = _load(orig, f"hunt_orig_{tag}")
    except Exception as e:  # noqa: BLE001
        out["import_errors"]["orig"] = _short_exc(e)
        return out
    mods = {}
    for label, path in variants.items():
        try:
            mods[label] = _load(path, f"hunt_{label}_{tag}")
        except Exception as e:  # noqa: BLE001
            mods[label] = e
    func_name = base.FUNC
    for k, case in enumerate(base.CASES):
        rec: dict = {"case": k}
        try:
            args, kwargs = case()
            ref = getattr(base, func_name)(*args, **kwargs)
            ref = jax.tree_util.tree_map(lambda v: v.block_until_ready() if hasattr(v, "block_until_ready") else v, ref)
        except Exception as e:  # noqa: BLE001
            rec["original"] = "raises: " + _short_exc(e)
            out["cases"].append(rec)
            continue
        rec["shapes"] = jax.tree_util.tree_map(
            lambda v: f"{getattr(v, 'dtype', type(v).__name__)}{list(getattr(v, 'shape', ()))}", (args, kwargs))
        rec["shapes"] = str(rec["shapes"])[:200]
        for label, mod in mods.items():
            if isinstance(mod, Exception):
                rec[label] = "wrong: import raises: " + _short_exc(mod)
                continue
            try:
                args, kwargs = case()
                got = getattr(mod, func_name)(*args, **kwargs)
            except Exception as e:  # noqa: BLE001
                rec[label] = "wrong: raises: " + _short_exc(e)
                continue
            try:
                why = compare(ref, got)
            except Exception as e:  # noqa: BLE001
                why = "compare failed: " + _short_exc(e)
            if why is None:
                note = weak_note(ref, got)
                rec[label] = "equal" if note is None else f"equal (note: {note})"
            else:
                rec[label] = "wrong: " + why
        out["cases"].append(rec)
    return out


def runtime(orig: Path, variants: dict[str, Path], x64: bool, timeout: float = 240) -> dict:
    payload = json.dumps({"orig": str(orig), "variants": {k: str(v) for k, v in variants.items()}, "x64": x64})
    env = dict(os.environ, JAX_PLATFORMS="cpu", XLA_FLAGS="--xla_force_host_platform_device_count=1",
               OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3")
    try:
        p = subprocess.run([sys.executable, __file__, "--run-one", payload], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=str(orig.parent))
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout}s", "cases": []}
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("HUNTJSON "):
            return json.loads(line[len("HUNTJSON "):])
    return {"error": f"runner failed rc {p.returncode}: {p.stderr[-500:]}", "cases": []}


def verify(src: str, path: Path, x64: bool, timeout: float = 300) -> dict:
    with tempfile.TemporaryDirectory(prefix="jlfhuntv_") as d:
        dest = Path(d) / path.name
        shutil.copyfile(path, dest)
        args = ["verify", "--no-measure", "--no-grad", "--isolated", "--timeout", "200", dest.name]
        if x64:
            args.insert(1, "--x64")
        try:
            p = run_tool(src, args, cwd=d, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"rc": None, "caught": False, "summary": "verify timed out"}
    text = " ".join((p.stdout + " " + p.stderr).split())
    return {"rc": p.returncode, "caught": p.returncode == 1, "x64": x64, "summary": text[:400]}


# ----------------------------------------------------------------------------- one program
def process(src: str, prog: Path, work: Path, pre: dict | None = None) -> dict:
    t0 = time.time()
    name = prog.stem
    category = name.split("_", 1)[0]
    rec: dict = {"path": str(prog), "name": name, "category": CATEGORIES.get(category, category)}
    try:
        if pre is not None:
            loops, err = pre["loops"], None
        else:
            loops, err = check_json(src, prog)
        rec["loops"] = loops
        if err:
            rec["check_error"] = err
        orig_dir = work / "orig"
        orig_dir.mkdir(parents=True, exist_ok=True)
        orig = orig_dir / prog.name
        shutil.copyfile(prog, orig)
        variants: dict[str, Path] = {}
        has_safe = any(l["fix"] == "safe" for l in loops)
        has_unsafe = any(l["fix"] == "unsafe" for l in loops)
        if has_safe:
            safe, err = (pre["safe"], None) if pre is not None else fixed_copy(src, prog, work / "safe", unsafe=False)
            if err:
                rec["fix_error_safe"] = err
            if safe.read_text() != prog.read_text():
                variants["safe"] = safe
            else:
                rec["note_safe"] = "safe fix reported but file unchanged"
        if has_unsafe or has_safe:
            allf, err = (pre["all"], None) if pre is not None else fixed_copy(src, prog, work / "all", unsafe=True)
            if err:
                rec["fix_error_all"] = err
            if allf.read_text() != prog.read_text() and (
                "safe" not in variants or allf.read_text() != variants["safe"].read_text()
            ):
                variants["all"] = allf
        rec["variants"] = sorted(variants)
        rec["runs"] = {}
        if variants:
            for x64 in (False, True):
                rec["runs"]["x64" if x64 else "x32"] = runtime(orig, variants, x64)
        judge(rec)
        # verify on wrong fixes
        rec["verify"] = None
        if (rec["wrong_unsafe"] or rec["wrong_safe"]) and not NO_VERIFY:
            modes = {m for v in ("safe", "all") for m in rec["wrong_modes"].get(v, [])}
            x64 = "x64" in modes and "x32" not in modes
            rec["verify"] = verify(src, prog, x64)
    except Exception:  # noqa: BLE001
        rec["harness_error"] = traceback.format_exc()[-1500:]
    rec["seconds"] = round(time.time() - t0, 1)
    return rec


def judge(rec: dict) -> None:
    """Per-loop verdicts from the per-case results of the safe and all-fixes variants."""
    wrong: dict[str, list[str]] = {"safe": [], "all": []}
    wrong_modes: dict[str, list[str]] = {"safe": [], "all": []}
    ran = {"safe": 0, "all": 0}
    skipped = 0
    for mode, run in rec.get("runs", {}).items():
        for label, err in run.get("import_errors", {}).items():
            wrong["safe"].append(f"[{mode}] original import: {err}")
        if run.get("error"):
            rec.setdefault("runtime_errors", []).append(f"[{mode}] {run['error']}")
        for case in run.get("cases", []):
            if "original" in case:
                skipped += 1
                continue
            for label in ("safe", "all"):
                verdict = case.get(label)
                if verdict is None:
                    continue
                ran[label] += 1
                if not verdict.startswith("equal"):
                    wrong[label].append(f"[{mode} case {case['case']}] {verdict[len('wrong: '):]}")
                    if mode not in wrong_modes[label]:
                        wrong_modes[label].append(mode)
    rec["skipped_cases"] = skipped
    rec["wrong_modes"] = wrong_modes
    # the all-fixes copy also contains the safe fixes: a mismatch there that the safe copy shares is the safe fix's
    safe_loops = [l for l in rec["loops"] if l["fix"] == "safe"]
    unsafe_loops = [l for l in rec["loops"] if l["fix"] == "unsafe"]
    wrong_safe = bool(wrong["safe"])
    if not rec["variants"].__contains__("safe") and safe_loops and wrong["all"] and not unsafe_loops:
        wrong_safe = True  # safe fixes only, identical copies: the all run is the safe run
        wrong["safe"] = wrong["all"]
        wrong_modes["safe"] = wrong_modes["all"]
    wrong_unsafe = bool(wrong["all"]) and not wrong_safe and bool(unsafe_loops)
    if wrong_safe and unsafe_loops and wrong["all"]:
        # can't separate; report the unsafe ones as ambiguous
        rec["unsafe_ambiguous"] = True
    for l in rec["loops"]:
        if l["fix"] == "safe":
            l["verdict"] = ("wrong: " + wrong["safe"][0]) if wrong_safe else ("equal" if ran["safe"] or ran["all"] else "not run")
        elif l["fix"] == "unsafe":
            if wrong_unsafe:
                l["verdict"] = "wrong: " + wrong["all"][0]
            elif rec.get("unsafe_ambiguous"):
                l["verdict"] = "unknown (a safe fix in the same file is wrong)"
            else:
                l["verdict"] = "equal" if ran["all"] else "not run"
        else:
            l["verdict"] = "refused"
    rec["wrong_safe"] = wrong["safe"] if wrong_safe else []
    rec["wrong_unsafe"] = wrong["all"] if wrong_unsafe else []
    if not ran["safe"] and not ran["all"] and rec["variants"]:
        rec["note_not_run"] = "no case ran (original raised on every case or runner failed)"


# ----------------------------------------------------------------------------- summary
def observed_cause(reason: str) -> tuple[str, str | None]:
    """(kind, dtype-or-shape seen) from a mismatch: `dtype`, `shape`, `values`, `raises`."""
    import re

    m = re.search(r"output carry component has type (\w+)\[([^\]]*)\], so the (\w+) do", reason)
    if m:
        return ("carry" if m.group(3) == "dtypes" else "shape"), m.group(1)
    m = re.search(r"dtype (\S+) vs (\S+)", reason)
    if m:
        return "dtype", m.group(2)
    if "shape" in reason:
        return "shape", None
    if "values differ" in reason:
        return "values", None
    return "raises", None


def names_cause(message: str | None, reason: str) -> str:
    """Does the unsafe fix's message name what went wrong?  `exact`: it names the assumption and the
    dtype the rewrite met; `generic`: it names the kind of assumption (carry type, index dtype,
    shape); `no`: it names something else."""
    if not message:
        return "no"
    m = message.lower()
    kind, seen = observed_cause(reason)
    if kind in ("carry", "dtype"):
        generic = any(w in m for w in ("dtype", "integer", "weakly", "promotion", "keeps its"))
        if not generic:
            return "no"
        return "exact" if seen and f"`{seen}`" in message else "generic"
    if kind == "shape":
        return "generic" if "shape" in m or "broadcast" in m else "no"
    if kind == "raises" and "leading axis sizes" in reason:
        return "generic" if "equal lengths" in m or "same length" in m else "no"
    if kind == "raises" and ("'list'" in reason or "'range'" in reason or "list" in reason):
        return "generic" if "list of arrays" in m or "rather than a list" in m else "no"
    if kind == "values":
        return "generic" if any(w in m for w in ("round", "precision", "weak", "overflow", "pure")) else "no"
    return "no"


def summarize(records: list[dict]) -> str:
    lines = []
    counts = {"safe": 0, "unsafe": 0, "refused": 0}
    per_cat: dict[str, dict[str, int]] = {}
    for r in records:
        cat = r["category"]
        c = per_cat.setdefault(cat, {"progs": 0, "safe": 0, "unsafe": 0, "refused": 0, "wrong_safe": 0,
                                      "wrong_unsafe": 0, "no_loop": 0})
        c["progs"] += 1
        if not r.get("loops"):
            c["no_loop"] += 1
        for l in r.get("loops", []):
            k = l["fix"] if l["fix"] in ("safe", "unsafe") else "refused"
            counts[k] += 1
            c[k] += 1
        c["wrong_safe"] += bool(r.get("wrong_safe"))
        c["wrong_unsafe"] += bool(r.get("wrong_unsafe"))
    header = f"{'category':28s} {'progs':>5s} {'safe':>5s} {'unsafe':>6s} {'refused':>7s} {'noloop':>6s} {'WRONGsafe':>9s} {'wrongUnsafe':>11s}"
    lines.append(header)
    tot = {k: 0 for k in ("progs", "safe", "unsafe", "refused", "no_loop", "wrong_safe", "wrong_unsafe")}
    for cat, c in per_cat.items():
        lines.append(f"{cat:28s} {c['progs']:5d} {c['safe']:5d} {c['unsafe']:6d} {c['refused']:7d} {c['no_loop']:6d} "
                     f"{c['wrong_safe']:9d} {c['wrong_unsafe']:11d}")
        for k in tot:
            tot[k] += c[k]
    lines.append(f"{'TOTAL':28s} {tot['progs']:5d} {tot['safe']:5d} {tot['unsafe']:6d} {tot['refused']:7d} "
                 f"{tot['no_loop']:6d} {tot['wrong_safe']:9d} {tot['wrong_unsafe']:11d}")
    lines.append("")
    lines.append("WRONG SAFE FIXES:")
    for r in records:
        if r.get("wrong_safe"):
            v = r.get("verify") or {}
            lines.append(f"  {r['name']}: {r['wrong_safe'][0][:170]}  (modes {','.join(r['wrong_modes']['safe'])}; "
                         f"verify {'caught' if v.get('caught') else 'missed'} rc={v.get('rc')})")
    lines.append("")
    lines.append("WRONG UNSAFE FIXES (message names cause? / verify caught?):")
    for r in records:
        if r.get("wrong_unsafe"):
            msgs = " | ".join(l["fix_message"] or "" for l in r["loops"] if l["fix"] == "unsafe")
            v = r.get("verify") or {}
            lines.append(f"  {r['name']}: {r['wrong_unsafe'][0][:120]}  names-cause={names_cause(msgs, r['wrong_unsafe'][0])}"
                         f" verify={'caught' if v.get('caught') else 'missed'}(rc={v.get('rc')})")
    tally = {"exact": 0, "generic": 0, "no": 0}
    for r in records:
        if r.get("wrong_unsafe"):
            msgs = " | ".join(l["fix_message"] or "" for l in r["loops"] if l["fix"] == "unsafe")
            tally[names_cause(msgs, r["wrong_unsafe"][0])] += 1
    lines.append(f"  message names the cause: exact (assumption + dtype met) {tally['exact']}, "
                 f"generic (kind of assumption) {tally['generic']}, no {tally['no']}")
    problems = [r for r in records if r.get("harness_error") or r.get("check_error") or r.get("runtime_errors")
                or r.get("fix_error_safe") or r.get("fix_error_all")]
    if problems:
        lines.append("")
        lines.append("HARNESS/TOOL ERRORS:")
        for r in problems:
            why = r.get("harness_error") or r.get("check_error") or r.get("fix_error_safe") or r.get("fix_error_all") or r.get("runtime_errors")
            lines.append(f"  {r['name']}: {str(why)[-200:]}")
    noruns = [r["name"] for r in records if r.get("note_not_run")]
    if noruns:
        lines.append("")
        lines.append("fixed but no case ran (original raises): " + ", ".join(noruns))
    caught = sum(1 for r in records if (r.get("verify") or {}).get("caught"))
    total_v = sum(1 for r in records if r.get("verify"))
    lines.append("")
    lines.append(f"verify runs on wrong fixes: {total_v}, caught (exit 1 mismatch): {caught}")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) >= 3 and sys.argv[1] == "--run-one":
        payload = json.loads(sys.argv[2])
        result = run_one(payload["orig"], payload["variants"], payload["x64"])
        print("HUNTJSON " + json.dumps(result))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", nargs="?", default=DEFAULT_SRC, help="jaxloopfix source tree (default: this repository)")
    ap.add_argument("--progs", default=str(DEFAULT_OUT_DIR / "progs"), help="programs from generate.py (default %(default)s)")
    ap.add_argument("--out", default=str(DEFAULT_OUT_DIR / "results.json"),
                    help="results JSON; snapshots/ and scratch folders go beside it (default %(default)s)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=None, help="substrings of program names to run")
    ap.add_argument("--per-program", action="store_true", help="run check/fix once per program (default: batched)")
    ap.add_argument("--live", action="store_true",
                    help="run the tree in place (default: a frozen copy taken at start, so one run sees one version)")
    ap.add_argument("--no-verify", action="store_true", help="skip `jaxloopfix verify` on wrong fixes (faster)")
    ap.add_argument("--summary-only", action="store_true", help="print the summary of an existing --out file")
    opts = ap.parse_args()
    global NO_VERIFY, OUT_DIR, SNAPSHOTS
    NO_VERIFY = opts.no_verify
    OUT_DIR = Path(opts.out).resolve().parent
    SNAPSHOTS = OUT_DIR / "snapshots"
    if opts.summary_only:
        data = json.loads(Path(opts.out).read_text())
        print(summarize(data["programs"]))
        print(f"\n{len(data['programs'])} programs; tool {data.get('tool_sha256')}; {data.get('seconds')}s")
        return
    progs = sorted(Path(opts.progs).glob("*.py"))
    if not progs:
        raise SystemExit(f"no programs in {opts.progs}: run benchmarks/wrong_fix_hunt/generate.py --out {opts.progs}")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    if opts.only:
        progs = [p for p in progs if any(s in p.stem for s in opts.only)]
    work = Path(tempfile.mkdtemp(prefix="work_", dir=str(OUT_DIR)))
    t0 = time.time()
    version = "live"
    if not opts.live:
        version = take_snapshot(opts.src, work / "snapshot")
        print(f"jaxloopfix snapshot of {opts.src}: sha256 {version}", flush=True)
    records = []
    pre = None if opts.per_program else batch_prepass(opts.src, progs, work)
    print(f"checked and fixed {len(progs)} programs in {time.time() - t0:.0f}s "
          f"({'batched' if pre is not None else 'one by one'})", flush=True)
    with cf.ThreadPoolExecutor(max_workers=opts.workers) as pool:
        futures = {pool.submit(process, opts.src, p, work / p.stem, (pre or {}).get(p.stem)): p for p in progs}
        for n, fut in enumerate(cf.as_completed(futures), 1):
            r = fut.result()
            records.append(r)
            flag = " WRONG-SAFE" if r.get("wrong_safe") else (" wrong-unsafe" if r.get("wrong_unsafe") else "")
            print(f"[{n}/{len(progs)} {time.time() - t0:6.0f}s] {r['name']} "
                  f"{[l['fix'] or 'refused' for l in r.get('loops', [])]}{flag}", flush=True)
    records.sort(key=lambda r: r["name"])
    Path(opts.out).write_text(json.dumps({"src": opts.src, "tool_sha256": version, "seconds": round(time.time() - t0), "programs": records},
                                         indent=1))
    shutil.rmtree(work, ignore_errors=True)
    print()
    print(summarize(records))
    print(f"\n{len(records)} programs in {time.time() - t0:.0f}s; results in {opts.out}")


if __name__ == "__main__":
    main()
