"""What to verify in a file: each function with fixable loops, its rewritten source and its parameters.

The rewritten source comes from the same fix `--fix` would write (the
engine's own output, restricted to that function's diagnostics), so verify
checks exactly what would land.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst

from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.engine import apply_fixes, lint_text, parse
from jaxloopfix.rules.base import FileContext
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

    @property
    def label(self) -> str:
        return f"{self.path}::{self.function}"


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


def _function_source(text: str, function: str) -> str | None:
    """The module-level `def function` of `text` (with decorators), or None when it is not module-level."""
    module = cst.parse_module(text)
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == function:
            return module.code_for_node(statement.with_changes(leading_lines=[]))
    return None


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
    filename = str(path)
    diagnostics = [d for d in lint_text(text, filename, settings) if d.fix_applies(unsafe)]
    by_function: dict[str, list[Diagnostic]] = {}
    for diagnostic in diagnostics:
        by_function.setdefault(diagnostic.extra.get("function", "?"), []).append(diagnostic)
    if function is not None:
        by_function = {function: by_function.get(function, [])}
    module_name, sys_path = module_location(path)
    context = FileContext(parse(text, filename), settings)
    traced = {t.name: t for t in context.traced.values()}
    original_imports = set(_imports(context.parsed.module))
    targets: list[Target] = []
    for name, found in by_function.items():
        target = Target(path, module_name, sys_path, name, found)
        target.factory = factory or dict(settings.examples).get(f"{module_name}:{name}")
        if not found:
            target.skip_reason = f"no fixable loop in `{name}`"
            targets.append(target)
            continue
        if name in traced:
            target.signature = parameter_specs(context.parsed, traced[name])
        for unroll in unrolls:
            tuned = replace(settings, unroll_overrides=((name, unroll),))
            new_text, _, _ = apply_fixes(
                text, filename, tuned, unsafe=unsafe, accept=lambda d, n=name: d.extra.get("function") == n
            )
            source = _function_source(new_text, name)
            if source is None:
                target.skip_reason = f"`{name}` is not a module-level function; only those can be verified"
                break
            added = [line for line in _imports(cst.parse_module(new_text)) if line not in original_imports]
            target.rewritten[unroll] = "\n".join(added + [source])
        targets.append(target)
    return targets
