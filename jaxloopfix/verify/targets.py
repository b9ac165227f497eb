"""What to verify in a file: each function with fixable loops, its rewritten source and its parameters.

The rewritten source comes from the same fix `--fix` would write (the
engine's own output, restricted to that function's diagnostics), so verify
checks exactly what would land.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst
import libcst.matchers as m

from jaxloopfix.config import HOISTED_FORM, Settings
from jaxloopfix.verify.variants import ASSOCIATIVE_VARIANT
from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.engine import apply_fixes, lint_text, parse
from jaxloopfix.rules.base import FileContext
from jaxloopfix.verify.recorder import recorded_for
from jaxloopfix.verify.signature import ParamSpec, parameter_specs


@dataclass
class Target:
    path: Path
    module_name: str
    sys_path: list[str]
    function: str
    diagnostics: list[Diagnostic]
    rewritten: dict[int, str] = field(default_factory=dict)  # unroll factor -> imports + rewritten def
    signature: list[ParamSpec] = field(default_factory=list)
    factory: str | None = None
    skip_reason: str | None = None  # why it cannot be verified (reported as unverified)
    owner: str | None = None  # the module-level class when the function is one of its methods
    method_kind: str | None = None  # "method", "staticmethod" or "classmethod" for methods
    reads_self: bool = False  # whether a method's body uses `self`/`cls` (then an instance must be given)
    loops: list[tuple[int, int]] = field(default_factory=list)  # (first, last) line of each fixed loop
    # The function with the fixed loops when it is nested in `function` (a loss defined inside a
    # jitted train step): it cannot be called on its own, so verify runs the function defining it.
    nested: str | None = None
    # What `jaxloopfix record` saw it called with (`recorder.recorded_for`), replayed first.
    recorded: list[dict] = field(default_factory=list)

    @property
    def runs(self) -> str:
        """The function verify calls: `name` or `Class.name`."""
        return f"{self.owner}.{self.function}" if self.owner else self.function

    @property
    def qualified(self) -> str:
        return f"{self.runs}.{self.nested}" if self.nested else self.runs

    @property
    def label(self) -> str:
        return f"{self.path}::{self.qualified}"


def module_location(path: Path) -> tuple[str, list[str]]:
    """Dotted module name (walking up through packages) and the sys.path entries to import it."""
    path = path.resolve()
    parts = [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file():
        parts.insert(0, directory.name)
        directory = directory.parent
    entries = [str(directory)]
    if str(path.parent) not in entries:
        entries.append(str(path.parent))
    cwd = str(Path.cwd())
    if cwd not in entries:
        entries.append(cwd)
    return ".".join(parts), entries


def _imports(module: cst.Module) -> list[str]:
    return [
        module.code_for_node(s).strip()
        for s in module.body
        if isinstance(s, cst.SimpleStatementLine) and all(isinstance(b, (cst.Import, cst.ImportFrom)) for b in s.body)
    ]


@dataclass(frozen=True)
class Located:
    """Where a verifiable `def` lives: module level (owner None) or directly in a module-level class."""

    owner: str | None
    node: cst.FunctionDef

    @property
    def method_kind(self) -> str | None:
        if self.owner is None:
            return None
        names = {d.decorator.value for d in self.node.decorators if isinstance(d.decorator, cst.Name)}
        return "staticmethod" if "staticmethod" in names else "classmethod" if "classmethod" in names else "method"


def _definitions(module: cst.Module, function: str) -> list[Located]:
    """Every `def function` at module level or in a module-level class, in source order."""
    found: list[Located] = []
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == function:
            found.append(Located(None, statement))
        elif isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            for inner in statement.body.body:
                if isinstance(inner, cst.FunctionDef) and inner.name.value == function:
                    found.append(Located(statement.name.value, inner))
    return found


def _locate(text: str, function: str, line: int | None, owner: str | None = None) -> Located | None:
    """The definition of `function` holding `line` (or owned by `owner`); None when it is nested deeper."""
    wrapper = cst.MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    for located in _definitions(wrapper.module, function):
        span = positions[located.node]
        if owner is not None and located.owner != owner:
            continue
        if line is None or span.start.line <= line <= span.end.line:
            return located
    return None


def _enclosing(text: str, line: int) -> Located | None:
    """The module-level function or method of a module-level class whose body holds `line`."""
    wrapper = cst.MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    for statement in wrapper.module.body:
        members = [statement]
        if isinstance(statement, cst.ClassDef) and isinstance(statement.body, cst.IndentedBlock):
            members = [s for s in statement.body.body if isinstance(s, cst.FunctionDef)]
        for member in members:
            span = positions[member]
            if isinstance(member, cst.FunctionDef) and span.start.line <= line <= span.end.line:
                owner = statement.name.value if isinstance(statement, cst.ClassDef) else None
                return Located(owner, member)
    return None


def _function_source(text: str, function: str, owner: str | None = None) -> str | None:
    """The source of `def function` (with decorators) at module level or in class `owner`, dedented to column 0."""
    module = cst.parse_module(text)
    for located in _definitions(module, function):
        if located.owner == owner:
            return module.code_for_node(located.node.with_changes(leading_lines=[]))
    return None


def _reads_self(node: cst.FunctionDef) -> bool:
    """Whether the body names the first parameter (`self`/`cls`) anywhere."""
    params = node.params.params
    if not params:
        return False
    return bool(m.findall(node.body, m.Name(params[0].name.value)))


def _group(text: str, diagnostics: list[Diagnostic]) -> dict[tuple[str | None, str], list[Diagnostic]]:
    """Diagnostics per (class, function) definition, so two classes' `__call__` stay apart."""
    groups: dict[tuple[str | None, str], list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        name = diagnostic.extra.get("function", "?")
        located = _locate(text, name, diagnostic.location.row)
        groups.setdefault((located.owner if located else None, name), []).append(diagnostic)
    return groups


def collect_targets(
    path: Path,
    text: str,
    settings: Settings,
    *,
    function: str | None = None,
    unsafe: bool = False,
    unrolls: tuple[int, ...] = (1,),
    factory: str | None = None,
) -> list[Target]:
    """One target per function with fixable loops; `function` (`name` or `Class.name`) picks one."""
    filename = str(path)
    diagnostics = [d for d in lint_text(text, filename, settings) if d.fix_applies(unsafe)]
    groups = _group(text, diagnostics)
    if function is not None:
        wanted_owner, _, wanted = function.rpartition(".")
        picked = {k: v for k, v in groups.items() if k[1] == wanted and (not wanted_owner or k[0] == wanted_owner)}
        groups = picked or {(wanted_owner or None, wanted): []}
    module_name, sys_path = module_location(path)
    context = FileContext(parse(text, filename), settings)
    traced = {t.node: t for t in context.traced.values()}
    original_imports = set(_imports(context.parsed.module))
    targets: list[Target] = []
    for (owner, name), found in groups.items():
        target = Target(path, module_name, sys_path, name, found, owner=owner)
        located = _locate(text, name, found[0].location.row, owner) if found else None
        if found and located is None:
            located = _enclosing(text, found[0].location.row)
            if located is None:
                target.skip_reason = (
                    f"`{name}` is defined inside a class body or nested in a function of a nested class; "
                    "verify runs module-level functions and methods of module-level classes"
                )
                targets.append(target)
                continue
            target.nested, target.function, target.owner = name, located.node.name.value, located.owner
        qualified = target.runs
        examples = dict(settings.examples)
        target.factory = (
            factory or examples.get(f"{module_name}:{qualified}") or examples.get(f"{module_name}:{target.function}")
        )
        target.recorded = recorded_for(settings.project_root or Path.cwd(), path, qualified)
        if not found:
            target.skip_reason = f"no fixable loop in `{qualified}`"
            targets.append(target)
            continue
        assert located is not None
        target.method_kind = located.method_kind
        target.reads_self = target.method_kind in ("method", "classmethod") and _reads_self(located.node)
        target.loops = [(d.location.row, d.end_location.row) for d in found]
        node = next((n for n in traced if _same_def(n, located.node)), None)
        if node is not None:
            target.signature = parameter_specs(context.parsed, traced[node])
        for unroll in unrolls:
            tuned = variant_settings(settings, name, unroll, tuning=len(unrolls) > 1)
            new_text, _, _ = apply_fixes(
                text, filename, tuned, unsafe=unsafe, accept=lambda d, n=name: d.extra.get("function") == n
            )
            source = _function_source(new_text, target.function, target.owner)
            if source is None:
                target.skip_reason = f"the rewrite of `{qualified}` could not be found in the fixed text"
                break
            added = [line for line in _imports(cst.parse_module(new_text)) if line not in original_imports]
            rewritten = "\n".join(added + [source])
            if unroll == ASSOCIATIVE_VARIANT and rewritten == target.rewritten.get(1):
                continue  # no linear recurrence in the function: the associative variant is the scan
            if unroll < 0 and rewritten == target.rewritten.get(-unroll):
                continue  # no input product to hoist: the variant is the plain scan
            target.rewritten[unroll] = rewritten
        targets.append(target)
    return targets




def variant_settings(settings: Settings, function: str, variant: int, *, tuning: bool) -> Settings:
    """Settings that render `function`'s fix as one variant: without tuning, the fix the
    settings give (variant 1); when tuning, `lax.scan` with unroll `variant`, or the
    associative form for `ASSOCIATIVE_VARIANT`."""
    if not tuning:
        return replace(settings, unroll_overrides=((function, variant),))
    if variant == ASSOCIATIVE_VARIANT:
        return replace(settings, form_overrides=((function, "associative"),))
    if variant < 0:
        return replace(settings, form_overrides=((function, HOISTED_FORM),), unroll_overrides=((function, -variant),))
    return replace(settings, form_overrides=((function, "scan"),), unroll_overrides=((function, variant),))


def qualified_names(text: str, diagnostics: list[Diagnostic]) -> list[str]:
    """The function verify calls for each diagnostic (`name` or `Class.name`; the enclosing
    function of a nested def), as Python's `co_qualname` spells it, in order, once each."""
    names = []
    for diagnostic in diagnostics:
        name = diagnostic.extra.get("function", "?")
        located = _locate(text, name, diagnostic.location.row) or _enclosing(text, diagnostic.location.row)
        if located is not None:
            function = located.node.name.value
            names.append(f"{located.owner}.{function}" if located.owner else function)
    return list(dict.fromkeys(names))


def _same_def(a: cst.FunctionDef, b: cst.FunctionDef) -> bool:
    """Two parses of the same text give different nodes; the code of the def tells them apart."""
    return cst.Module(body=[a]).code == cst.Module(body=[b]).code
