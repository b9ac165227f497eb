"""The verify subprocess: run the original and the rewritten function on the same inputs and compare.

Usage: `python -m jaxloopfix.verify.worker` with one JSON job on stdin; it
writes one JSON result on stdout and exits 0. It imports and runs user code,
so everything user code does is contained: exceptions become a result with
status "error", and anything written to stdout (print, C extensions) is sent
to stderr at the file-descriptor level so the result stays parseable.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import json
import functools
import linecache
import math
import os
import sys
import traceback
from dataclasses import dataclass, replace
from typing import Any, Callable

MAX_MESSAGE = 2000
MAX_INPUT_TEXT = 400  # longer descriptions of one argument are summarised
LIBRARY_MARKERS = (
    f"{os.sep}jax{os.sep}",
    f"{os.sep}jaxlib{os.sep}",
    f"{os.sep}jaxloopfix{os.sep}",
    f"{os.sep}site-packages{os.sep}",
    f"{os.sep}lib{os.sep}python",
)


class StepError(Exception):
    """A step of the verification failed in user code; `message` says which step, `exc` is what it raised."""

    def __init__(self, message: str, exc: BaseException | None = None):
        super().__init__(message)
        self.message = message
        self.exc = exc


# ---------------------------------------------------------------- messages


@dataclass
class UserFiles:
    """What counts as user code when naming the frame an exception came from."""

    paths: set[str]
    dirs: tuple[str, ...]

    def owns(self, filename: str) -> bool:
        if filename in self.paths or filename.startswith("<rewritten "):
            return True
        real = os.path.realpath(filename)
        return any(real.startswith(d) for d in self.dirs) and not _is_library(real)


def _is_library(filename: str) -> bool:
    return any(marker in filename for marker in LIBRARY_MARKERS) or filename.startswith("<frozen ")


def _user_frame(exc: BaseException, user: UserFiles) -> traceback.FrameSummary | None:
    """The innermost frame in user code; failing that, the innermost frame outside JAX and the standard library."""
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        if user.owns(frame.filename):
            return frame
    for frame in reversed(frames):
        if not _is_library(frame.filename):
            return frame
    return None


def describe(exc: BaseException, user: UserFiles) -> str:
    """`Type: message (at file:line)`, shortened; follows `raise ... from` to the user's own exception."""
    while isinstance(exc, StepError) and exc.exc is not None:
        exc = exc.exc
    if exc.__cause__ is not None and type(exc).__name__ == "InputError":
        exc = exc.__cause__
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + " ..."
    frame = _user_frame(exc, user)
    if frame is not None:
        text += f" (at {frame.filename}:{frame.lineno})"
    return text


# ---------------------------------------------------------------- loading user code


def import_user_module(job: dict):
    """Import the module from its file under its own name, parents first, so relative imports and globals work."""
    name, path = job["module_name"], job["module_path"]
    parent = name.rpartition(".")[0]
    parent_error: BaseException | None = None
    if parent:
        try:
            importlib.import_module(parent)
        except Exception as exc:  # the module itself may still import; if not, this is the cause
            parent_error = exc
    existing = sys.modules.get(name)
    if existing is not None and os.path.realpath(getattr(existing, "__file__", "") or "") == os.path.realpath(path):
        return existing
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as module {name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if parent_error is not None and isinstance(exc, ImportError):
            raise parent_error from None  # a failed package import shows up as a confusing circular import
        raise
    return module


def rewritten_filename(function: str, unroll: str) -> str:
    return f"<rewritten {function} unroll={unroll}>"


def _plain(fn: Any) -> Any:
    """The function under `staticmethod`/`classmethod`, which is what gets called with explicit arguments."""
    return fn.__func__ if isinstance(fn, (staticmethod, classmethod)) else fn


def original_function(module, job: dict) -> Callable | None:
    """The module-level function, or the method as stored in its class (`Class.__dict__`, not bound)."""
    owner = job.get("owner")
    if not owner:
        return getattr(module, job["function"], None)
    cls = getattr(module, owner, None)
    if cls is None:
        return None
    try:
        return _plain(inspect.getattr_static(cls, job["function"]))
    except AttributeError:
        return None


def build_rewritten(module, function: str, source: str, unroll: str) -> Callable:
    """Exec the rewrite in a copy of the module's globals, so it sees the same names without touching the module.

    A method's rewrite is exec'd at module level, as a plain function taking `self` first.
    """
    filename = rewritten_filename(function, unroll)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(module.__dict__)
    original = namespace.get(function)
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace.get(function)
    if fn is None or fn is original:
        raise NameError(f"the rewritten source does not define {function!r}")
    return _plain(fn)


def receiver(module, job: dict) -> tuple[bool, Any, str | None]:
    """(bind, value, why not): what a method gets as `self`/`cls` when the inputs are built here.

    A class method gets its class. A method whose body never uses `self` gets None, which
    it cannot tell apart from an instance. A method that reads `self` needs a real instance,
    which only an input factory can supply.
    """
    kind = job.get("method_kind")
    if not job.get("owner") or kind in (None, "staticmethod"):
        return False, None, None
    if kind == "classmethod":
        return True, getattr(module, job["owner"]), None
    if job.get("reads_self"):
        label = f"{job['owner']}.{job['function']}"
        return False, None, (
            f"`{label}` reads `self`, and verify does not construct instances; give an input factory "
            f"(`--example MODULE:FUNCTION`) that returns the instance as the first argument"
        )
    return True, None, None


# ---------------------------------------------------------------- running and comparing


def _fresh(tree):
    """Copies of the array leaves, so a function that donates its inputs cannot spoil them for the other one."""
    import jax
    import jax.numpy as jnp

    def copy(leaf):
        if isinstance(leaf, jax.Array):
            try:
                return jnp.array(leaf, copy=True)
            except Exception:
                return leaf
        return leaf

    return jax.tree_util.tree_map(copy, tree)


def call(fn: Callable, case) -> Any:
    import jax

    return jax.block_until_ready(fn(*_fresh(case.args), **_fresh(case.kwargs)))


def _is_floating(leaf: Any) -> bool:
    import jax.numpy as jnp
    import numpy as np

    try:
        return bool(jnp.issubdtype(getattr(leaf, "dtype", None) or np.result_type(leaf), jnp.floating))
    except Exception:
        return False


def _float_array(leaf: Any) -> bool:
    import jax
    import numpy as np

    return isinstance(leaf, (jax.Array, np.ndarray)) and _is_floating(leaf)


def _float_leaves(args: tuple) -> list[int]:
    """Positions, among the flattened positional arguments, of the floating-point arrays."""
    import jax

    return [i for i, leaf in enumerate(jax.tree_util.tree_leaves(args)) if _float_array(leaf)]


def gradient(fn: Callable, case) -> Any:
    """Gradient of sum(sin(floating outputs)) with respect to every floating array among the positional arguments.

    sin keeps every output element's sensitivity distinct and bounded. Leaves that are not
    floating arrays (integers, keys, Python values, in a pytree or alone) are held fixed, so a
    state that mixes a PRNG key with float buffers still gets its buffers' gradients.
    """
    import jax
    import jax.numpy as jnp

    kwargs = _fresh(case.kwargs)
    flat, treedef = jax.tree_util.tree_flatten(_fresh(case.args))
    positions = _float_leaves(case.args)

    def loss(*floats):
        leaves = list(flat)
        for i, value in zip(positions, floats):
            leaves[i] = value
        out = fn(*jax.tree_util.tree_unflatten(treedef, leaves), **kwargs)
        return sum(jnp.sum(jnp.sin(leaf)) for leaf in jax.tree_util.tree_leaves(out) if _is_floating(leaf))

    return jax.block_until_ready(jax.grad(loss, tuple(range(len(positions))))(*[flat[i] for i in positions]))


def grad_skip_reason(expected: Any, case) -> str | None:
    import jax

    leaves = jax.tree_util.tree_leaves(expected)
    if not leaves:
        return "the function returns no arrays"
    if not any(_is_floating(leaf) for leaf in leaves):
        return "no output is floating point"
    if not _float_leaves(case.args):
        return "no positional argument holds a floating-point array"
    return None


class NotEquivalent(Exception):
    """The original ran on a case and the rewrite raised: the two are not equivalent on it."""

    def __init__(self, case, exc: BaseException):
        super().__init__(case.label)
        self.case = case
        self.exc = exc


def describe_inputs(fn: Callable, case) -> str:
    """`xs: f32[5,4], w: f32[4,4], n=5`: what a case passes, by parameter name, with shapes."""
    import inspect

    import jax

    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()]
    except (TypeError, ValueError):
        names = []

    def one(value: Any) -> str:
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        if shape is not None and dtype is not None:
            short = str(dtype).replace("float", "f").replace("int", "i").replace("bool", "b")
            return f"{short}[{','.join(str(d) for d in shape)}]"
        return repr(value) if isinstance(value, (int, float, bool, str, type(None))) else type(value).__name__

    def text(value: Any) -> str:
        leaves = jax.tree_util.tree_leaves(value)
        if len(leaves) == 1 and leaves[0] is value:
            return one(value)
        shown = str(jax.tree_util.tree_map(one, value)).replace("'", "")
        if len(shown) > MAX_INPUT_TEXT or "\n" in shown:  # a model object: its repr would bury the shapes
            arrays = sum(1 for leaf in leaves if getattr(leaf, "shape", None) is not None)
            return f"{type(value).__name__}({arrays} arrays)"
        return shown

    parts = []
    for i, value in enumerate(case.args):
        name = names[i] if i < len(names) else f"arg{i}"
        parts.append(f"{name}={text(value)}" if i in case.static_argnums else f"{name}: {text(value)}")
    parts.extend(f"{k}={text(v)}" for k, v in case.kwargs.items())
    return ", ".join(parts)


def _widened(value: Any) -> Any:
    """Floating leaves as float64 (complex as complex128), the rest as they are."""
    import jax
    import jax.numpy as jnp

    def widen(leaf: Any) -> Any:
        dtype = getattr(leaf, "dtype", None)
        if dtype is not None and jnp.issubdtype(dtype, jnp.complexfloating):
            return jnp.asarray(leaf, jnp.complex128)
        if dtype is not None and jnp.issubdtype(dtype, jnp.floating):
            return jnp.asarray(leaf, jnp.float64)
        return leaf

    return jax.tree_util.tree_map(widen, value)


def against_reference(original: Callable, case, expected: Any, actual: Any, fixed):
    """(comparison, errors) judged against the original run in float64, or None when no
    reference can be computed (the function fails in float64, or its structure differs)."""
    import jax
    import numpy as np

    try:
        with x64_enabled():
            reference = jax.block_until_ready(original(*_widened(_fresh(case.args)), **_widened(_fresh(case.kwargs))))
            reference = jax.tree_util.tree_map(np.asarray, reference)
    except Exception:  # noqa: BLE001 - no reference: the fixed tolerance stands
        return None
    return _judged(expected, actual, reference, fixed, "error")


def _judged(expected: Any, actual: Any, reference: Any, fixed, what: str):
    """`compare_with_reference`'s verdict with the fixed comparison's figures and a note of both errors."""
    import jax

    from jaxloopfix.verify.compare import compare_with_reference

    if jax.tree_util.tree_structure(reference) != jax.tree_util.tree_structure(expected):
        return None
    comparison, errors = compare_with_reference(expected, actual, reference)
    comparison.max_abs, comparison.max_rel, comparison.where = fixed.max_abs, fixed.max_rel, fixed.where
    note = f"{what} against a float64 reference: rewrite {errors.rewrite:.3g}, loop {errors.loop:.3g}"
    comparison.reason = note if comparison.equal else f"{fixed.reason}; {note}"
    return comparison, {"loop": errors.loop, "rewrite": errors.rewrite}


def raises_under_trace(exc: BaseException) -> bool:
    """Whether `exc` is JAX refusing a Python value of a tracer (`if x > 0`, `range(n)`, `float(x)`,
    traced slice bounds): the failure JLF003-JLF006 report and their fixes remove. The function
    runs without `jit`, where its values are concrete."""
    import jax

    refusals = tuple(
        getattr(jax.errors, name)
        for name in ("ConcretizationTypeError", "TracerBoolConversionError", "TracerIntegerConversionError", "TracerArrayConversionError")
        if hasattr(jax.errors, name)
    )
    if isinstance(exc, refusals):
        return True
    return isinstance(exc, IndexError) and "static" in str(exc) and "slice" in str(exc).lower()


@contextlib.contextmanager
def _without_jit():
    import jax

    with jax.disable_jit():
        yield


def _eager(original: Callable, case, under_jit: BaseException) -> tuple[Any, str]:
    """The original run without `jit` as the reference for a rewrite that makes it traceable."""
    try:
        with _without_jit():
            expected = call(original, case)
    except Exception as exc:
        raise StepError(f"{case.label}: the original function raised without jit too", exc) from exc
    return expected, f"the original raises {type(under_jit).__name__} under jit; compared with it run without jit"


def check_case(original: Callable, rewritten: Callable, case, want_grad: bool) -> dict:
    """Outputs (and gradients) of both versions on one case; raises StepError naming the version that failed."""
    from jaxloopfix.verify.compare import compare_trees

    eager = None
    try:
        expected = call(original, case)
    except Exception as exc:
        if not raises_under_trace(exc):
            raise StepError(f"{case.label}: the original function raised", exc) from exc
        expected, eager = _eager(original, case, exc)
    try:
        actual = call(rewritten, case)
    except Exception as exc:
        raise NotEquivalent(case, exc) from exc
    outputs = compare_trees(expected, actual)
    result = {
        "label": case.label, "inputs": describe_inputs(original, case), "outputs": outputs,
        "gradients": None, "gradients_skipped": None, "eager": eager,
    }
    if not outputs.equal and outputs.max_abs == outputs.max_abs and "expected" in outputs.reason:
        judged = against_reference(original, case, expected, actual, outputs)
        if judged is not None:
            result["outputs"], result["reference"] = judged
    if not want_grad:
        result["gradients_skipped"] = "gradients not requested"
        return result
    reason = grad_skip_reason(expected, case)
    if reason:
        result["gradients_skipped"] = reason
        return result
    try:
        if eager:
            with _without_jit():
                expected_grad = gradient(original, case)
        else:
            expected_grad = gradient(original, case)
    except Exception as exc:
        result["gradients_skipped"] = f"the original's gradient raised {type(exc).__name__}: {str(exc)[:300]}"
        return result
    try:
        actual_grad = gradient(rewritten, case)
    except Exception as exc:
        if eager:
            # Under jit the original had no gradient either (it did not trace): nothing is lost.
            result["gradients_skipped"] = (
                f"the original has no gradient under jit and the rewrite's raised {type(exc).__name__}: {str(exc)[:200]}"
            )
            return result
        raise StepError(f"{case.label}: the rewritten function's gradient raised", exc) from exc
    result["gradients"] = compare_trees(expected_grad, actual_grad, scale=10)
    gradients = result["gradients"]
    if not gradients.equal and gradients.max_abs == gradients.max_abs and "expected" in gradients.reason:
        judged = gradients_against_reference(original, case, expected_grad, actual_grad, gradients)
        if judged is not None:
            result["gradients"], result["gradients_reference"] = judged
    return result


def gradients_against_reference(original: Callable, case, expected: Any, actual: Any, fixed):
    """`against_reference` for gradients: the original's gradient in float64 decides where the
    two float32 gradients differ by more than the fixed tolerance (a regrouped recurrence with
    growing factors moves both by more than a few ulps)."""
    import jax
    import numpy as np

    try:
        with x64_enabled():
            widened = replace(case, args=_widened(_fresh(case.args)), kwargs=_widened(_fresh(case.kwargs)))
            reference = jax.tree_util.tree_map(np.asarray, gradient(original, widened))
    except Exception:  # noqa: BLE001 - no reference: the fixed tolerance stands
        return None
    return _judged(expected, actual, reference, fixed, "gradient error")


# ---------------------------------------------------------------- result


def empty_result(status: str, message: str, source: str | None = None) -> dict:
    return {
        "status": status,
        "message": message,
        "input_source": source,
        "cases": [],
        "max_abs": 0.0,
        "max_rel": 0.0,
        "where": "",
        "timings": None,
        "unroll": None,
    }


def _comparisons(cases: list[dict]):
    for case in cases:
        for part in ("outputs", "gradients"):
            if case[part] is not None:
                yield case["label"], part, case[part]


def _worse(value: float) -> float:
    return math.inf if math.isnan(value) else value


@contextlib.contextmanager
def x64_enabled():
    """jax_enable_x64 on for the duration, restored after."""
    import jax

    before = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", before)


def family_check(
    original: Callable, rewritten: Callable, case, required: bool, user: UserFiles, what: str
) -> tuple[list[dict], str | None]:
    """A family of inputs whose role depends on the evidence for it: a required one raises
    NotEquivalent or returns its comparison like any case; an advisory one turns a difference
    into a note starting with `what`. An original that itself rejects the family leaves it out.
    Cases labelled "x64 on" run with jax_enable_x64 (see `x64_policy`)."""
    try:
        with x64_enabled() if getattr(case, "x64", False) else contextlib.nullcontext():
            checked = check_case(original, rewritten, case, False)
    except StepError:
        return [], None
    except NotEquivalent as exc:
        if required:
            raise
        return [], (
            f"{what} ({describe_inputs(original, case)}) the rewrite raised "
            f"{' '.join(line.strip() for line in describe(exc.exc, user).splitlines()[:3] if line.strip())[:300]}"
        )
    if required or checked["outputs"].equal:
        return [checked], None
    return [], f"{what} the outputs differ: {checked['outputs'].reason}"


X64_FAMILY = "with x64 on and NumPy scalars for float arguments"


def _family_hint(label: str) -> str:
    """What to do when the rewrite differs only on a family of inputs the user may never pass."""
    if "x64 on" in label:
        return (
            ". With x64 off it is equal; with x64 on (and NumPy scalars for float arguments) promotions "
            "differ. If the function never runs with x64 on, that family does not concern it"
        )
    from jaxloopfix.verify.inputs import LIST_LABEL

    if LIST_LABEL in label:
        return (
            ". The loop also runs on Python lists of arrays there (layer weights often come as one) and the "
            "rewrite does not; if the function is only ever given arrays, give the inputs it is called with "
            "(`example_inputs()` in the module, `jaxloopfix record -- pytest`, or `--example MODULE:FUNCTION`)"
        )
    if "with a batch axis" not in label:
        return ""
    return (
        ". The loop accepts these arrays with a batch axis and the rewrite does not; a carry shaped from the "
        "inputs (`jnp.zeros(xs.shape[1:])`) instead of a constant keeps both alike. If the function is never "
        "called with one, give the inputs it is called with (`example_inputs()` in the module, or "
        "`--example MODULE:FUNCTION`)"
    )


def summarize(result: dict, cases: list[dict]) -> dict:
    """Status, message and worst difference over every comparison made; the first difference decides a mismatch."""
    comparisons = list(_comparisons(cases))
    result["cases"] = [{**c, "outputs": c["outputs"].to_json(), "gradients": c["gradients"] and c["gradients"].to_json()} for c in cases]
    if comparisons:
        result["max_abs"] = max((c.max_abs for *_, c in comparisons), key=_worse)
        result["max_rel"] = max((c.max_rel for *_, c in comparisons), key=_worse)
        label, part, worst = max(comparisons, key=lambda item: _worse(item[2].max_rel))
        result["where"] = f"{label} {part} {worst.where}".strip()
    differing = [(label, part, c) for label, part, c in comparisons if not c.equal]
    if differing:
        label, part, first = differing[0]
        result["status"] = "mismatch"
        result["message"] = f"{label} {part}: {first.reason}" + _family_hint(label)
        result["where"] = f"{label} {part} {first.where}".strip()
        return result
    result["status"] = "equivalent"
    graded = sum(1 for c in cases if c["gradients"] is not None)
    skipped = sorted({c["gradients_skipped"] for c in cases if c["gradients_skipped"]})
    message = f"equal on {len(cases)} case(s) ({', '.join(c['label'] for c in cases)}); gradients compared on {graded}"
    if skipped:
        message += f" (skipped: {'; '.join(skipped)})"
    eager = sorted({c["eager"] for c in cases if c.get("eager")})
    if eager:
        message += f" ({'; '.join(eager)})"
    judged = [c["reference"] for c in cases if c.get("reference")]
    if judged:
        message += (
            f"; {len(judged)} case(s) beyond the fixed tolerance are within the loop's own error against a float64 "
            f"reference (rewrite {max(j['rewrite'] for j in judged):.3g}, loop {max(j['loop'] for j in judged):.3g})"
        )
    result["message"] = message
    return result


# ---------------------------------------------------------------- timings


def with_static(run: Callable, subject: Any, case) -> Any:
    """`run(subject, args, kwargs)`, adding `static_argnums=` only where `run` takes it (measure works it out itself)."""
    try:
        takes_static = "static_argnums" in inspect.signature(run).parameters
    except (TypeError, ValueError):
        takes_static = False
    extra = {"static_argnums": case.static_argnums} if takes_static else {}
    return run(subject, _fresh(case.args), _fresh(case.kwargs), **extra)


# `job["rewritten"]` key of the `lax.associative_scan` form (`variants.ASSOCIATIVE_VARIANT`).
ASSOCIATIVE_KEY = 0


def _regrouped_differs(original: Callable, regrouped: Callable, name: str, cases: list, want_grad: bool) -> str | None:
    """Why a form that regroups the arithmetic (the associative scan, hoisted input products)
    may not be written: it must be equivalent on every case (None: it is)."""
    checked = []
    try:
        for one in cases:
            checked.append(check_case(original, regrouped, one, want_grad))
    except (NotEquivalent, StepError) as exc:
        return f"the {name} form was left out: it raised on {getattr(exc, 'case', one).label}"
    summary = summarize(empty_result("equivalent", "", ""), checked)
    if summary["status"] != "equivalent":
        return f"the {name} form was left out: {summary['message']}"
    return None


def input_elements(case) -> int:
    """How many numbers a case passes: its arrays' sizes, 1 per scalar."""
    import jax
    import numpy as np

    leaves = jax.tree_util.tree_leaves((case.args, case.kwargs))
    return sum(int(np.size(leaf)) if hasattr(leaf, "shape") else 1 for leaf in leaves)


def timing_case(cases: list):
    """The case to time and tune on: the largest inputs, with x64 off.

    Why: the fastest form depends on the trip count (a scan step's fixed cost dominates a short
    loop), so timings on the 5-step case say nothing about the user's 1,000 steps; the last case
    built is a small edge case (size-1 axes, NumPy scalars), not the largest. Ties keep the first.
    """
    plain = [case for case in cases if not getattr(case, "x64", False)] or cases
    return max(plain, key=input_elements)


def timings(
    job: dict, module, original: Callable, rewritten: Callable, case, user: UserFiles, cases: list | None = None
) -> tuple[Any, Any]:
    """Timings of both versions on `case` (see `timing_case`), and the unroll sweep if asked; failures become {"error": ...}."""
    try:
        from jaxloopfix.verify import measure as measuring
    except Exception as exc:
        error = {"error": f"timings unavailable: {type(exc).__name__}: {exc}"}
        return error, (error if job.get("tune_unroll") else None)

    def guarded(run: Callable, *args) -> Any:
        try:
            return run(*args)
        except Exception as exc:
            return {"error": describe(exc, user)}

    times = {
        "original": guarded(lambda: with_static(measuring.measure, original, case)),
        "rewritten": guarded(lambda: with_static(measuring.measure, rewritten, case)),
        "case": case.label,
    }
    if not job.get("tune_unroll"):
        return times, None

    def tune() -> Any:
        sources = sorted(job["rewritten"].items(), key=lambda kv: int(kv[0]))
        versions = {int(k): build_rewritten(module, job["function"], src, k) for k, src in sources}
        from jaxloopfix.verify.variants import variant_name

        excluded = []
        # The associative form and hoisted products regroup the arithmetic: each is written only
        # if it too is equivalent on every case (the scan's unroll factors compute the same steps).
        for key in [k for k in versions if k <= ASSOCIATIVE_KEY]:
            why = _regrouped_differs(original, versions[key], variant_name(key), cases or [case], bool(job.get("grad", True)))
            if why is not None:
                excluded.append(why)
                del versions[key]
        tuned = with_static(measuring.tune_unroll, versions, case)
        if excluded:
            tuned["excluded"] = "; ".join(excluded)
        elif ASSOCIATIVE_KEY in versions:
            tuned["associative"] = "equivalent on every case"
        return tuned

    return times, guarded(tune)


# ---------------------------------------------------------------- Haiku functions

HAIKU_OUTSIDE_TRANSFORM = "hk.transform"


def under_haiku(original: Callable, rewritten: Callable, case) -> tuple[Callable, Callable] | None:
    """Both versions under `hk.transform` with the original's parameters, when the original needs a transform.

    A Haiku function creates its modules when called, so it runs only inside `hk.transform`. Both
    versions get the parameters the original initialises (the rewrite keeps every module outside
    the loop, so their names match) and the same apply key. None when no transform is needed
    (always when the user's code never imported Haiku: then nothing can ask for a transform).
    """
    if "haiku" not in sys.modules:
        return None
    try:
        call(original, case)
        return None
    except Exception as exc:
        if HAIKU_OUTSIDE_TRANSFORM not in str(exc):
            return None
    import haiku as hk
    import jax

    init_key, apply_key = jax.random.split(jax.random.PRNGKey(0))
    first = hk.transform(original)
    params = first.init(init_key, *_fresh(case.args), **_fresh(case.kwargs))

    def applied(fn: Callable) -> Callable:
        transformed = hk.transform(fn)

        @functools.wraps(fn)
        def run(*args, **kwargs):
            return transformed.apply(params, apply_key, *args, **kwargs)

        return run

    return applied(original), applied(rewritten)


# ---------------------------------------------------------------- through the module's entry points


def through_callers(module, job: dict) -> tuple[str, Callable, Callable, list] | None:
    """(caller, original, rewritten, cases): the first function the module's `example_inputs()` names
    that runs the target, as it is and with the rewrite swapped in (see `through_caller`). None when
    the target has examples of its own, or no named function reaches it."""
    from jaxloopfix.verify import through_caller as via
    from jaxloopfix.verify.inputs import caller_examples, from_module_examples

    function, owner = job["function"], job.get("owner")
    if not owner and from_module_examples(module, function):
        return None
    callers = caller_examples(module, function)
    target = via.innermost(via.stored(module, owner, function)) if callers else None
    if target is None:
        return None
    try:
        code, added = via.rewritten_code(module, function, job["rewritten"]["1"], rewritten_filename(function, "1"))
        swap = via.Swap(target, code, added)
    except Exception:  # noqa: BLE001 - no swap possible: verify the function itself instead
        return None
    for caller, cases in callers:
        if not cases:
            continue
        entry = getattr(module, caller)
        original = via.fresh(entry)
        try:
            call(original, cases[0])
        except Exception:  # noqa: BLE001 - the caller fails on its own example: try the next
            continue
        reached = [False]
        try:
            call(via.swapped(entry, swap, reached), cases[0])
        except Exception:  # noqa: BLE001 - judged by check_case when the rewrite ran
            pass
        if reached[0]:
            return caller, original, via.swapped(entry, swap, [False]), cases
    return None


# ---------------------------------------------------------------- loop coverage


def _raw(fn: Callable) -> Callable:
    """The Python function under jit and `functools.partial`, so running it executes the loop's lines."""
    from jaxloopfix.verify.inputs import python_function

    if isinstance(fn, functools.partial):
        return functools.partial(_raw(fn.func), *fn.args, **fn.keywords)
    return python_function(fn)


def lines_run(fn: Callable, case, path: str, unwrap: bool = True) -> set[int]:
    """Lines of `path` that one eager call of the plain Python function executes (its jit cache cannot skip them).

    `unwrap=False` calls `fn` itself: a Haiku function must run inside its transform.
    """
    real = os.path.realpath(path)
    seen: set[int] = set()
    files: dict[str, bool] = {}

    def tracer(frame, event, arg):
        filename = frame.f_code.co_filename
        mine = files.get(filename)
        if mine is None:
            mine = files[filename] = os.path.realpath(filename) == real
        if not mine:
            return None
        if event == "line":
            seen.add(frame.f_lineno)
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        call(_raw(fn) if unwrap else fn, case)
    except Exception:
        pass  # the checked call reports failures; here only the lines matter
    finally:
        sys.settrace(previous)
    return seen


def uncovered(loops: list, runs: list[set[int]]) -> list[int]:
    """First lines of the loops whose body ran in no case (a loop header alone also runs for zero steps)."""
    missing = []
    for first, last in loops:
        body = range(first + 1, last + 1) if last > first else range(first, first + 1)
        if not any(line in seen for seen in runs for line in body):
            missing.append(first)
    return missing


def covering_cases(job: dict, original: Callable, rewritten: Callable, source, cases, build, unwrap: bool = True):
    """Cases that run every fixed loop; failing that, retry with each boolean default flipped (a flag that selects the loop).

    Returns (source, cases, missing lines, flips used).
    """
    from jaxloopfix.verify.inputs import boolean_defaults

    loops = job.get("loops") or []
    if not loops or not cases:
        return source, cases, [], {}
    path = job["module_path"]
    missing = uncovered(loops, [lines_run(original, c, path, unwrap) for c in cases])
    if not missing or source in ("factory", "recorded") or source.startswith("example_inputs()"):
        return source, cases, missing, {}
    for flips in boolean_defaults(original):
        flipped_source, flipped = build(flips)
        if not flipped:
            continue
        still = uncovered(loops, [lines_run(original, c, path, unwrap) for c in flipped])
        if not still:
            return flipped_source, flipped, [], flips
    return source, cases, missing, {}


# ---------------------------------------------------------------- the job


def user_files(job: dict) -> UserFiles:
    dirs = tuple(os.path.join(os.path.realpath(d), "") for d in job.get("sys_path") or [])
    return UserFiles({job.get("module_path", "")}, dirs)


def verify(job: dict) -> dict:
    """Every step of one verification; a failure in user code ends it with status "error" naming the step."""
    from jaxloopfix.verify.inputs import LIST_LABEL, InputError, NoInputs, build_cases, numpy_scalars

    user = user_files(job)
    for entry in reversed(job.get("sys_path") or []):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    function = job["function"]
    label = f"{job['owner']}.{function}" if job.get("owner") else function
    try:
        module = import_user_module(job)
    except BaseException as exc:
        return empty_result("error", f"importing {job['module_name']} raised {describe(exc, user)}")
    original = original_function(module, job)
    if original is None:
        return empty_result("error", f"module {job['module_name']} has no function {label!r}")
    try:
        rewritten = build_rewritten(module, function, job["rewritten"]["1"], "1")
    except BaseException as exc:
        return empty_result("error", f"the rewritten source (unroll=1) failed: {describe(exc, user)}")
    inputs = job.get("inputs") or {}
    try:
        route = None if inputs.get("factory") or inputs.get("recorded") else through_callers(module, job)
    except InputError as exc:
        return empty_result("error", f"{exc}: {describe(exc, user)}" if exc.__cause__ else str(exc), "example_inputs()")
    if route is not None:
        caller, original, rewritten, cases = route
        source = f"example_inputs() through `{caller}`"
    elif not inputs.get("factory"):
        bind, value, why_not = receiver(module, job)
        if why_not:
            return empty_result("unverified", why_not)
        if bind:
            original, rewritten = functools.partial(original, value), functools.partial(rewritten, value)

    def build(flips: dict) -> tuple:
        if route is not None:
            return source, cases
        return build_cases(
            original, inputs, job.get("lengths") or [5, 9], bool(job.get("x64")), rewritten, flips=flips,
            module=module, function=function if not job.get("owner") else None,
        )

    try:
        source, cases = build({})
    except InputError as exc:
        return empty_result("error", f"{exc}: {describe(exc, user)}" if exc.__cause__ else str(exc), "factory")
    except NoInputs as exc:
        return empty_result("error", str(exc))
    if not cases:
        return empty_result(
            "unverified",
            "no inputs found: no input factory (`--example MODULE:FUNCTION`), no array annotations to build "
            "inputs from, and no synthesized candidate (arrays of the ranks and dtypes the body suggests, "
            "lowest rank first, and scalars per parameter) that the original accepts",
            source,
        )
    transformed = None if route is not None else under_haiku(original, rewritten, cases[0])
    if transformed is not None:
        original, rewritten = transformed
    try:
        source, cases, missing, flips = covering_cases(
            job, original, rewritten, source, cases, build, unwrap=transformed is None and route is None
        )
    except InputError as exc:
        return empty_result("error", str(exc), source)
    if missing:
        where = ", ".join(f"line {line}" for line in missing)
        return empty_result(
            "unverified",
            f"the loop at {where} did not run on the inputs found ({describe_inputs(original, cases[0])}); "
            "equal outputs would say nothing about the rewrite. Give an input factory (`--example "
            "MODULE:FUNCTION`) whose inputs reach it",
            source,
        )
    results = []
    advisories: list[str] = []
    try:
        for case in cases:
            if case.label.endswith(LIST_LABEL):
                # The original takes a list there; a fix that breaks on one is not cleared by guesses.
                results.extend(family_check(original, rewritten, case, True, user, "as lists")[0])
                continue
            results.append(check_case(original, rewritten, case, bool(job.get("grad", True))))
        scalars = numpy_scalars(cases[0], original)
        if scalars is not None:
            # Required, like any case the original accepts; an original that rejects them leaves it out.
            results.extend(family_check(original, rewritten, scalars, True, user, "with NumPy scalars")[0])
        family = job.get("x64_family") or "required"
        if not job.get("x64") and family != "off":
            checked, advisory = family_check(
                original, rewritten, numpy_scalars(cases[0], original, x64=True), family == "required", user, X64_FAMILY
            )
            results.extend(checked)
            if advisory:
                advisories.append(f"{advisory}; this does not block the fix: {job.get('x64_evidence') or family}")
    except NotEquivalent as exc:
        result = summarize(empty_result("mismatch", "", source), results)
        if result["status"] == "mismatch":
            return result  # an earlier case already differs: that difference comes first
        result["status"] = "mismatch"
        result["message"] = (
            f"not equivalent for inputs of shape {describe_inputs(original, exc.case)} ({exc.case.label}): "
            f"the original runs and the rewritten function raised {describe(exc.exc, user)}"
            + _family_hint(exc.case.label)
        )
        return result
    except StepError as exc:
        result = summarize(empty_result("error", "", source), results)
        result["status"], result["message"] = "error", f"{exc.message}: {describe(exc, user)}"
        return result
    result = summarize(empty_result("equivalent", "", source), results)
    if advisories:
        result["advisories"] = advisories
        result["message"] += "; " + "; ".join(advisories)
    if transformed is not None and result["status"] == "equivalent":
        result["message"] += "; both run under hk.transform with the original's parameters"
    if route is not None and result["status"] == "equivalent":
        result["message"] += f"; `{label}` ran with the rewrite in place of its code, called by `{route[0]}`"
    if job.get("measure") and result["status"] == "equivalent" and route is None:
        result["timings"], result["unroll"] = timings(job, module, original, rewritten, timing_case(cases), user, cases)
    return result


def run_job(job: dict) -> dict:
    """Configure JAX from the job before anything imports it, then verify at highest matmul precision."""
    if job.get("platform"):
        os.environ["JAX_PLATFORMS"] = str(job["platform"])
    import jax

    if job.get("x64"):
        jax.config.update("jax_enable_x64", True)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(jax.default_matmul_precision("highest"))
        except ValueError:  # JAX before 0.4.24 names it by its dtype only
            stack.enter_context(jax.default_matmul_precision("float32"))
        return verify(job)


# ---------------------------------------------------------------- process plumbing


def _protect_stdout():
    """Point fd 1 (and sys.stdout) at stderr for everything user code does; return a handle on the real stdout."""
    sys.stdout.flush()
    real = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return real


def _json_default(value: Any) -> Any:
    """numpy scalars and arrays from measure(); anything else as its repr."""
    for attr in ("item", "tolist"):
        if hasattr(value, attr):
            try:
                return getattr(value, attr)()
            except Exception:
                pass
    return repr(value)


def main() -> int:
    real_stdout = _protect_stdout()
    try:
        job = json.loads(sys.stdin.read())
        result = run_job(job)
    except BaseException as exc:  # never crash: the parent always gets a result
        result = empty_result("error", f"verify worker failed: {type(exc).__name__}: {exc}")
        traceback.print_exc(file=sys.stderr)
    try:
        text = json.dumps(result, default=_json_default)
    except Exception as exc:
        text = json.dumps(empty_result("error", f"verify worker could not encode its result: {exc}"))
    real_stdout.write(text + "\n")
    real_stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
