"""Runtime loop recorder for the oracle: which `for` loops run while a JAX trace is active, how
many times they turn, and what they iterate.

Loaded at interpreter start by `site/sitecustomize.py` (so pytest workers and other subprocesses
record too) when ORACLE_ROOTS and ORACLE_OUT are set. Standard library only; never raises into
the measured program.

How it works
------------
* `sys.settrace` (and `threading.settrace`) with a global function that returns None for every
  code object that is not inside a measured root or holds no `for` header line (the set of lines
  of the code object, from `co_lines()`, against the `for` header lines found by `ast`). Only
  frames of code with a loop get line events.
* A loop *execution* starts when its header line is hit from outside the loop. An *iteration* is
  counted at each step from a header line into the loop body (so `break` and multi-line headers
  count right); single-line loops use header hits - 1.
* At the start of an execution the frame's locals are searched for a `jax.core.Tracer` (one
  level into lists, tuples, dicts, and the attributes of `self`). No tracer: the execution is
  ignored (not traced).
* Kind: `Tracer.__iter__` is wrapped so that iterating a tracer (directly, or through zip /
  enumerate / reversed / list) marks the loop whose header is being evaluated: `tracer-rows`.
  Otherwise the iter expression is evaluated at the header with a side-effect-free evaluator
  (names, attributes held in an instance's `__dict__`, constant subscripts of containers,
  `range/len/zip/enumerate/reversed`, `dict.items()`...) and the loop target's value is read on
  the first iteration.
"""

from __future__ import annotations

import ast
import atexit
import builtins
import json
import os
import sys
import threading
import time
import types

ROOTS_ENV = "ORACLE_ROOTS"  # JSON {name: path}
OUT_ENV = "ORACLE_OUT"  # directory for <pid>.jsonl
FLUSH_SECONDS = 20.0
SHALLOW = 32  # items looked at in a container

_orig_iter = None
_tracer_cls = None
_awaiting: dict[int, "Exec"] = {}
paused = False  # a driver sets this while it traces only to choose inputs (drive_fixtures.py)


# ---------------------------------------------------------------- static analysis


class Loop:
    __slots__ = (
        "line", "end", "body_start", "body_end", "header_lines", "single", "targets", "iter_node",
        "bases", "iter_src", "dict_call", "stores",
    )


INDEX_FUNCS = {
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice",
    "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "take", "take_along_axis",
    "index_in_dim", "slice_in_dim",
}


def _names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _base_ok(node) -> bool:
    # a name, or an attribute chain on a name (self.x, self.params.w)
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _subscript_bases(loop: ast.For, loopvars: set[str]) -> list:
    """Expressions subscripted (or `.at[]`-indexed, dynamic-sliced, taken) with the loop variable."""
    out, seen = [], set()

    def add(node):
        if isinstance(node, ast.Attribute) and node.attr == "at":
            node = node.value
        if _base_ok(node):
            k = ast.dump(node)
            if k not in seen:
                seen.add(k)
                out.append(node)

    for stmt in loop.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Subscript) and _names(n.slice) & loopvars:
                add(n.value)
            elif isinstance(n, ast.Call) and n.args:
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
                if name in INDEX_FUNCS and any(_names(a) & loopvars for a in list(n.args[1:]) + [k.value for k in n.keywords]):
                    add(n.args[0])
    return out


MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "appendleft"}


def _body_stores(loop: ast.For) -> tuple:
    """Names the body binds or mutates (assignment targets, subscript / `.at` stores, receivers of
    `.append()`-like calls) and `self` attributes it assigns: where a carry or a computed array
    lands. Read at the end of each execution to see whether they hold arrays."""
    names, attrs = set(), set()

    def target(t):
        if isinstance(t, ast.Name):
            names.add(t.id)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                target(e)
        elif isinstance(t, ast.Starred):
            target(t.value)
        elif isinstance(t, (ast.Subscript, ast.Attribute)):
            base = t.value if isinstance(t, ast.Subscript) else t
            if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self":
                attrs.add(base.attr)
            elif isinstance(base, ast.Name):
                names.add(base.id)

    for stmt in loop.body:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Assign):
                for t in n.targets:
                    target(t)
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
                target(n.target)
            elif isinstance(n, ast.NamedExpr):
                target(n.target)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MUTATORS:
                target(n.func.value if not isinstance(n.func.value, ast.Attribute) else n.func.value)
    return tuple(sorted(names)), tuple(sorted(attrs))


def analyse_source(text: str) -> dict[int, Loop]:
    tree = ast.parse(text)
    loops: dict[int, Loop] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.For, ast.AsyncFor)) or not node.body:
            continue
        lp = Loop()
        lp.line = node.lineno
        lp.end = node.end_lineno
        lp.body_start = node.body[0].lineno
        lp.body_end = node.body[-1].end_lineno
        lp.single = lp.body_start <= node.lineno
        last_header = max(node.lineno, lp.body_start - 1) if not lp.single else node.lineno
        lp.header_lines = frozenset(range(node.lineno, last_header + 1))
        lp.targets = [n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)]
        lp.iter_node = node.iter
        lp.bases = _subscript_bases(node, set(lp.targets))
        lp.stores = _body_stores(node)
        try:
            lp.iter_src = ast.unparse(node.iter)[:120]
        except Exception:  # noqa: BLE001
            lp.iter_src = "?"
        it = node.iter
        lp.dict_call = (
            isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr in ("items", "values", "keys")
        )
        loops.setdefault(lp.line, lp)
    return loops


# ---------------------------------------------------------------- safe evaluation


class Unsafe(Exception):
    pass


class Wrap:
    """zip/enumerate/reversed of evaluated arguments, not built (building would iterate)."""

    __slots__ = ("kind", "args")

    def __init__(self, kind, args):
        self.kind, self.args = kind, args


SAFE_BUILTINS = {"range", "len", "zip", "enumerate", "reversed", "int", "min", "max", "list", "tuple", "sorted", "abs"}
SAFE_ATTRS = {"shape", "ndim", "size", "dtype"}
CONTAINERS = (list, tuple, dict, str, range)


def _is_tracer(v) -> bool:
    return _tracer_cls is not None and isinstance(v, _tracer_cls)


def seval(node, loc, glb, depth=0):
    if depth > 12:
        raise Unsafe
    t = type(node)
    if t is ast.Constant:
        return node.value
    if t is ast.Name:
        n = node.id
        if n in loc:
            return loc[n]
        if n in glb:
            return glb[n]
        if n in SAFE_BUILTINS:
            return getattr(builtins, n)
        raise Unsafe
    if t is ast.Attribute:
        obj = seval(node.value, loc, glb, depth + 1)
        a = node.attr
        if isinstance(obj, types.ModuleType):
            return getattr(obj, a)
        if a in SAFE_ATTRS and hasattr(type(obj), "__array_priority__") or (a in SAFE_ATTRS and _is_tracer(obj)):
            return getattr(obj, a)
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict) and a in d:
            return d[a]
        raise Unsafe
    if t is ast.Subscript:
        base = seval(node.value, loc, glb, depth + 1)
        if type(base) not in CONTAINERS and not (isinstance(base, tuple)):
            raise Unsafe
        key = seval(node.slice, loc, glb, depth + 1)
        return base[key]
    if t is ast.Slice:
        return slice(
            None if node.lower is None else seval(node.lower, loc, glb, depth + 1),
            None if node.upper is None else seval(node.upper, loc, glb, depth + 1),
            None if node.step is None else seval(node.step, loc, glb, depth + 1),
        )
    if t is ast.Tuple:
        return tuple(seval(e, loc, glb, depth + 1) for e in node.elts)
    if t is ast.UnaryOp and type(node.op) is ast.USub:
        v = seval(node.operand, loc, glb, depth + 1)
        if type(v) is not int:
            raise Unsafe
        return -v
    if t is ast.BinOp:
        a = seval(node.left, loc, glb, depth + 1)
        b = seval(node.right, loc, glb, depth + 1)
        if type(a) is not int or type(b) is not int:
            raise Unsafe
        op = type(node.op)
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        if op is ast.FloorDiv and b:
            return a // b
        raise Unsafe
    if t is ast.Call:
        if node.keywords:
            raise Unsafe
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("items", "keys", "values") and not node.args:
            obj = seval(f.value, loc, glb, depth + 1)
            if isinstance(obj, dict):
                return getattr(obj, f.attr)()
            raise Unsafe
        fn = seval(f, loc, glb, depth + 1)
        args = [seval(a, loc, glb, depth + 1) for a in node.args]
        if fn is range:
            if all(type(a) is int for a in args):
                return range(*args)
            raise Unsafe
        if fn is len:
            if len(args) == 1 and (type(args[0]) in CONTAINERS or _is_tracer(args[0]) or hasattr(args[0], "__array_priority__")):
                return len(args[0])
            raise Unsafe
        if fn in (zip, enumerate, reversed):
            return Wrap(fn.__name__, args)
        if fn in (list, tuple, sorted) and len(args) == 1:
            a = args[0]
            if type(a) in CONTAINERS or isinstance(a, (type({}.keys()), type({}.values()), type({}.items()))):
                return fn(a)
            if isinstance(a, Wrap):
                return a
            raise Unsafe
        if fn in (int, abs, min, max) and args and all(type(a) is int for a in args):
            return fn(*args)
        raise Unsafe
    raise Unsafe


# ---------------------------------------------------------------- runtime classification


def _tracers_in(loc) -> list:
    """Tracers among the locals, one level into containers and `self`'s attributes."""
    found = []
    for k, v in list(loc.items())[:200]:
        if _is_tracer(v):
            found.append(v)
            continue
        tv = type(v)
        if tv is list or tv is tuple:
            for e in v[:SHALLOW]:
                if _is_tracer(e):
                    found.append(e)
        elif tv is dict:
            for i, e in enumerate(v.values()):
                if i >= SHALLOW:
                    break
                if _is_tracer(e):
                    found.append(e)
        elif k == "self":
            d = getattr(v, "__dict__", None)
            if isinstance(d, dict):
                for i, e in enumerate(d.values()):
                    if i >= SHALLOW * 2:
                        break
                    if _is_tracer(e):
                        found.append(e)
                    elif type(e) in (list, tuple):
                        for x in e[:SHALLOW]:
                            if _is_tracer(x):
                                found.append(x)
    return found


def _any_tracer(loc) -> bool:
    return bool(_tracers_in(loc))


_jax_array_cls = None


def _is_jax_array(v) -> bool:
    return _jax_array_cls is not None and isinstance(v, _jax_array_cls)


def _is_arraylike(v) -> bool:
    return _is_tracer(v) or (hasattr(v, "shape") and hasattr(v, "dtype") and not isinstance(v, type))


def _leaf_kind(values) -> str:
    """Kind from the loop target's values on the first iteration."""
    flat = []
    for v in values:
        if type(v) is tuple and len(v) <= 4:
            flat.extend(v)
        else:
            flat.append(v)
    kinds = set()
    for v in flat:
        if isinstance(v, bool):
            kinds.add("ints")
        elif _is_arraylike(v):
            kinds.add("container-of-arrays")
        elif isinstance(v, (int, float)):
            kinds.add("ints")
        elif isinstance(v, str):
            kinds.add("strings")
        elif isinstance(v, (list, tuple, dict)) and v and any(_is_arraylike(x) for x in (v.values() if isinstance(v, dict) else v)):
            kinds.add("container-of-arrays")
        elif callable(v):
            kinds.add("container-of-modules/callables")
        else:
            kinds.add("other")
    for k in ("container-of-arrays", "container-of-modules/callables", "strings", "other", "ints"):
        if k in kinds:
            return k
    return "other"


def _range_axis(frame, loop, r: range) -> str:
    loc = frame.f_locals
    glb = frame.f_globals
    base = None
    for b in loop.bases:
        try:
            v = seval(b, loc, glb)
        except Exception:  # noqa: BLE001
            continue
        if _is_tracer(v):
            base = "tracer"
            break
        if _is_jax_array(v):
            base = "concrete-jax-array"
    if base is None:
        return "static-range"
    dims = set()
    arrays = _tracers_in(loc)
    if base != "tracer":
        arrays += [v for v in list(loc.values())[:200] if _is_jax_array(v)]
    for t in arrays:
        try:
            dims.update(d for d in t.shape if type(d) is int)
        except Exception:  # noqa: BLE001
            pass
    cands = {len(r)}
    if r.step > 0:
        cands.add(r.stop)
    else:
        cands.add(r.start + 1)
    if not cands & dims:
        return "static-range"
    return ("array-axis-range", "") if base == "tracer" else ("array-axis-range", "concrete-jax-array")


def _holds_array(v) -> bool:
    if _is_tracer(v) or _is_jax_array(v):
        return True
    tv = type(v)
    if tv is list or tv is tuple:
        return any(_is_tracer(e) or _is_jax_array(e) for e in v[:SHALLOW])
    if tv is dict:
        return any(_is_tracer(e) or _is_jax_array(e) for i, e in enumerate(v.values()) if i < SHALLOW)
    return False


def body_arrays(frame, loop) -> bool:
    """After an execution: does a name the body stored to (or a `self` attribute it assigned) hold
    a Tracer or a jax.Array (one level into a list / tuple / dict)? I.e. the loop carried or
    computed arrays."""
    try:
        loc = frame.f_locals
        names, attrs = loop.stores
        for n in names:
            if n in loc and _holds_array(loc[n]):
                return True
        if attrs and "self" in loc:
            d = getattr(loc["self"], "__dict__", None)
            if isinstance(d, dict):
                return any(a in d and _holds_array(d[a]) for a in attrs)
    except Exception:  # noqa: BLE001
        pass
    return False


def classify(frame, ex, target_values) -> tuple[str, str]:
    loop = ex.loop
    if ex.tracer_iter:
        return "tracer-rows", ""
    if ex.concrete_iter:
        return "tracer-rows", "concrete-jax-array"
    it = ex.iter_value
    if it is not _UNKNOWN:
        parts = [it]
        while isinstance(parts[0], Wrap) and parts[0].kind in ("enumerate", "reversed") and parts[0].args:
            parts = [parts[0].args[0]]
        if isinstance(parts[0], Wrap) and parts[0].kind == "zip":
            parts = list(parts[0].args)
        for p in parts:
            if _is_tracer(p):
                return "tracer-rows", "evaluated"
            if _is_jax_array(p):
                return "tracer-rows", "concrete-jax-array"
        for p in parts:
            if isinstance(p, Wrap) and p.args:
                p = p.args[0]
            if type(p) is range:
                k = _range_axis(frame, loop, p)
                if isinstance(k, tuple):
                    return k[0], k[1] or f"range(len={len(p)})"
                return k, f"range(len={len(p)})"
        if all(isinstance(p, (dict, type({}.keys()), type({}.values()), type({}.items()))) for p in parts):
            if target_values is None:
                return "dict/items", ""
            lk = _leaf_kind(target_values)
            return "dict/items", lk
        if all(type(p) is str for p in parts):
            return "strings", ""
        if target_values is None:
            return "other", "no-iteration"
        lk = _leaf_kind(target_values)
        if lk == "container-of-arrays" and any(hasattr(p, "shape") and not _is_tracer(p) and type(p) not in CONTAINERS for p in parts):
            return "other", "concrete-array-rows"
        return lk, type(parts[0]).__name__
    if loop.dict_call:
        return "dict/items", "unevaluated"
    if target_values is None:
        return "other", "no-iteration"
    return _leaf_kind(target_values), "unevaluated"


_UNKNOWN = object()


class Exec:
    __slots__ = ("loop", "frame", "iters", "hits", "tracer_iter", "concrete_iter", "iter_value", "kind", "detail", "observed", "raised", "by")

    def __init__(self, loop, frame):
        self.loop = loop
        self.frame = frame
        self.iters = 0
        self.hits = 1
        self.tracer_iter = False
        self.concrete_iter = False
        self.raised = False
        self.iter_value = _UNKNOWN
        self.kind = None
        self.detail = ""
        self.observed = False


INACTIVE = "inactive"


# ---------------------------------------------------------------- the recorder


class Recorder:
    def __init__(self, roots: dict[str, str], out_dir: str) -> None:
        self.roots = sorted(((os.path.realpath(p), n) for n, p in roots.items()), key=lambda x: -len(x[0]))
        self.out_dir = out_dir
        self.files: dict[str, object] = {}  # co_filename -> (root, rel, loops) or False
        self.codes: dict[int, object] = {}  # id(code) -> (code, headers, hrange, fileinfo) or False
        self.agg: dict[tuple, dict] = {}
        self.last_flush = time.monotonic()
        self.dirty = False
        self.errors = 0

    # -- static maps
    def file_info(self, filename):
        info = self.files.get(filename)
        if info is not None:
            return info
        info = False
        try:
            if filename.endswith(".py") and not filename.startswith("<"):
                real = os.path.realpath(filename)
                for rp, name in self.roots:
                    if real.startswith(rp + os.sep):
                        rel = os.path.relpath(real, os.path.dirname(rp))
                        with open(real, encoding="utf-8") as fh:
                            loops = analyse_source(fh.read())
                        info = (name, rel, loops) if loops else False
                        break
        except Exception:  # noqa: BLE001
            info = False
        self.files[filename] = info
        return info

    def code_info(self, code):
        key = id(code)
        info = self.codes.get(key)
        if info is not None:
            return info
        info = False
        fi = self.file_info(code.co_filename)
        if fi:
            try:
                lines = {ln for _, _, ln in code.co_lines() if ln}
            except Exception:  # noqa: BLE001
                lines = set()
            headers = {ln: fi[2][ln] for ln in lines if ln in fi[2]}
            if headers:
                hrange = {}
                for lp in headers.values():
                    for h in lp.header_lines:
                        hrange.setdefault(h, lp)
                info = (code, headers, hrange, fi)
        self.codes[key] = info
        return info

    # -- trace functions
    def global_trace(self, frame, event, arg):
        try:
            info = self.codes.get(id(frame.f_code))
            if info is None:
                info = self.code_info(frame.f_code)
            if info is False:
                return None
            return self.local_tracer(frame, info)
        except Exception:  # noqa: BLE001
            self.errors += 1
            return None

    def local_tracer(self, frame, info):
        _, headers, hrange, fi = info
        execs: dict[int, object] = {}
        state = [0, None]  # last line, line of an exception not yet handled
        rec = self

        def tracer(frame, event, arg):
            try:
                if event == "line":
                    L = frame.f_lineno
                    prev = state[0]
                    hl = hrange.get(prev)
                    if hl is not None and hl.body_start <= L <= hl.body_end and L not in hl.header_lines:
                        ex = execs.get(hl.line)
                        if ex is not None and ex is not INACTIVE:
                            ex.iters += 1
                            if ex.iters == 1:
                                rec.observe(frame, ex)
                    lp = headers.get(L)
                    if lp is not None:
                        if prev != L and not (lp.line <= prev <= lp.end):
                            old = execs.get(L)
                            if old is not None and old is not INACTIVE:
                                rec.finish(old, fi)
                            execs[L] = rec.start(frame, lp)
                        else:
                            ex = execs.get(L)
                            if ex is not None and ex is not INACTIVE:
                                ex.hits += 1
                                if lp.single and ex.hits == 2:
                                    rec.observe(frame, ex)
                    state[0] = L
                    state[1] = None
                elif event == "exception":
                    state[1] = frame.f_lineno
                elif event == "return":
                    exc_line = state[1]
                    for ex in execs.values():
                        if ex is not INACTIVE:
                            if exc_line is not None and ex.loop.line <= exc_line <= ex.loop.end:
                                ex.raised = True
                            rec.finish(ex, fi)
                    execs.clear()
                    _awaiting.pop(id(frame), None)
            except Exception:  # noqa: BLE001
                rec.errors += 1
            return tracer

        return tracer

    # -- executions
    def start(self, frame, lp):
        if paused:
            return INACTIVE
        if _tracer_cls is None and not _ensure_jax():
            return INACTIVE
        loc = frame.f_locals
        if _any_tracer(loc):
            by = "locals"
        elif _context_active():
            by = "context"
        else:
            return INACTIVE
        ex = Exec(lp, frame)
        ex.by = by
        try:
            ex.iter_value = seval(lp.iter_node, loc, frame.f_globals)
        except Exception:  # noqa: BLE001
            ex.iter_value = _UNKNOWN
        _awaiting[id(frame)] = ex
        return ex

    def observe(self, frame, ex):
        if ex.observed:
            return
        ex.observed = True
        if _awaiting.get(id(frame)) is ex:
            del _awaiting[id(frame)]
        loc = frame.f_locals
        vals = [loc[n] for n in ex.loop.targets if n in loc]
        ex.kind, ex.detail = classify(frame, ex, vals)

    def finish(self, ex, fi):
        if _awaiting.get(id(ex.frame)) is ex:
            del _awaiting[id(ex.frame)]
        lp = ex.loop
        if ex.kind is None:
            try:
                ex.kind, ex.detail = classify(ex.frame, ex, None)
            except Exception:  # noqa: BLE001
                ex.kind, ex.detail = "other", "error"
        trip = max(ex.hits - 1, 0) if lp.single else ex.iters
        key = (fi[0], fi[1], lp.line)
        r = self.agg.get(key)
        if r is None:
            code = ex.frame.f_code
            r = self.agg[key] = {
                "root": fi[0], "path": fi[1], "line": lp.line, "end": lp.end,
                "func": getattr(code, "co_qualname", code.co_name), "iter": lp.iter_src,
                "n_exec": 0, "n_raised": 0, "trip_min": trip, "trip_max": trip, "kinds": {}, "kind_trip_max": {}, "details": [],
            }
        r["n_exec"] += 1
        r.setdefault("by", {})
        r["by"][ex.by] = r["by"].get(ex.by, 0) + 1
        if ex.raised:
            # The loop raised (under a trace: a concretization error, a shape error on bad inputs):
            # kept apart, its trip count is not a full one.
            r["n_raised"] += 1
            r["raised_kinds"] = sorted(set(r.get("raised_kinds", [])) | {ex.kind})
            ex.frame = None
            self.dirty = True
            return
        r["trip_min"] = min(r["trip_min"], trip)
        r["trip_max"] = max(r["trip_max"], trip)
        r["kinds"][ex.kind] = r["kinds"].get(ex.kind, 0) + 1
        r["kind_trip_max"][ex.kind] = max(r["kind_trip_max"].get(ex.kind, 0), trip)
        # executions after which a name the body stored to held an array (carried / computed arrays)
        r["arrays"] = r.get("arrays", 0) + (1 if trip and body_arrays(ex.frame, lp) else 0)
        if ex.detail and ex.detail not in r["details"] and len(r["details"]) < 3:
            r["details"].append(ex.detail)
        ex.frame = None
        self.dirty = True
        now = time.monotonic()
        if now - self.last_flush > FLUSH_SECONDS:
            self.last_flush = now
            self.write()

    def write(self):
        if not self.agg:
            return
        try:
            path = os.path.join(self.out_dir, f"{os.getpid()}.jsonl")
            tmp = path + ".partial"
            with open(tmp, "w", encoding="utf-8") as fh:
                for r in self.agg.values():
                    fh.write(json.dumps(r) + "\n")
            os.replace(tmp, path)
            self.dirty = False
        except Exception:  # noqa: BLE001
            pass


_core = None


def _context_active() -> bool:
    """JAX's current trace is not the eager one: a jit / vmap / grad / eval_shape trace is running
    (a frame may take part without holding a tracer itself)."""
    try:
        return not isinstance(_core.trace_ctx.trace, _core.EvalTrace)
    except Exception:  # noqa: BLE001
        return False


def _flagging_iter(orig, flag: str):
    """Wrap the `__iter__` `orig`: when it is called from the header line of a loop awaiting its first
    iteration (that loop's frame at most 10 frames up the stack), set `flag` on the loop's record."""

    def __iter__(self):
        try:
            f = sys._getframe(1)
            n = 0
            while f is not None and n < 10:
                ex = _awaiting.get(id(f))
                if ex is not None and ex.frame is f and f.f_lineno in ex.loop.header_lines:
                    setattr(ex, flag, True)
                    break
                f = f.f_back
                n += 1
        except Exception:  # noqa: BLE001
            pass
        return orig(self)

    return __iter__


def _ensure_jax() -> bool:
    """Find `jax.core.Tracer` once JAX is imported (never import it ourselves) and wrap `__iter__`."""
    global _tracer_cls, _orig_iter
    core = sys.modules.get("jax._src.core")
    if core is None or not hasattr(core, "Tracer"):
        return False
    global _core
    _core = core
    cls = core.Tracer
    orig = cls.__iter__
    cls.__iter__ = _flagging_iter(orig, "tracer_iter")
    _orig_iter = orig
    _tracer_cls = cls
    global _jax_array_cls
    arr_mod = sys.modules.get("jax._src.array")
    impl = getattr(arr_mod, "ArrayImpl", None)
    if impl is not None:
        _jax_array_cls = impl
        impl.__iter__ = _flagging_iter(impl.__iter__, "concrete_iter")
    return True


def install():
    roots_json, out = os.environ.get(ROOTS_ENV), os.environ.get(OUT_ENV)
    if not roots_json or not out:
        return None
    try:
        roots = json.loads(roots_json)
        os.makedirs(out, exist_ok=True)
    except Exception:  # noqa: BLE001
        return None
    rec = Recorder(roots, out)
    sys.settrace(rec.global_trace)
    threading.settrace(rec.global_trace)

    def at_exit():
        sys.settrace(None)
        rec.write()

    atexit.register(at_exit)
    # pytest-timeout and `timeout` send SIGTERM: write what we have first.
    try:
        import signal

        prev = signal.getsignal(signal.SIGTERM)

        def on_term(signum, frame):
            rec.write()
            if callable(prev):
                prev(signum, frame)
            else:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.kill(os.getpid(), signal.SIGTERM)

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, on_term)
    except Exception:  # noqa: BLE001
        pass
    return rec
