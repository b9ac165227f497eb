"""`jaxloopfix check --explain FILE[:LINE]`: why each loop was, or was not, reported.

A user who disagrees with a result sees, for each `for` loop of the file (or the
one at LINE): whether its function is traced and the path that traces it, the
kinds that decided (what the loop iterates, what it stores), and the decision:
the rule of the planner's table that left it unreported with its evidence, or
the diagnostic with its fix or the reason it has none. It analyses the file
with the tracing the rest of its project supplies, as `check` does.
"""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from jaxloopfix.analysis.planner import _stores
from jaxloopfix.analysis.value_kinds import ValueKinds
from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Diagnostic


def parse_target(target: str) -> tuple[Path, int | None, int | None]:
    """`model.py:42` -> (model.py, 42, None); `model.py` -> (model.py, None, None); a notebook's
    `nb.ipynb:cell 5:3` (or `nb.ipynb:5:3`) -> (nb.ipynb, 3, 5): line 3 of cell 5, as `check` names it."""
    head, sep, tail = target.rpartition(":")
    if not (sep and tail.isdigit() and head):
        return Path(target), None, None
    inner, sep, cell = head.rpartition(":")
    cell = cell.removeprefix("cell ")
    if sep and cell.isdigit() and inner.endswith(".ipynb"):
        return Path(inner), int(tail), int(cell)
    return Path(head), int(tail), None


def explain(path: Path, line: int | None, settings: Settings, given: list[Path] | None = None, cell: int | None = None) -> str:
    """The explanation of `path`'s loops (those containing `line` when given), as text;
    `given`: the paths the `check` run names, analysed with it as that run analyses them.
    A notebook is analysed as `check` analyses it, its code cells joined; its loops are named
    by cell and line, and `line` is a line of `cell` (every cell's when `cell` is None)."""
    from jaxloopfix import api
    from jaxloopfix.engine import ALL_RULES, ParseError, is_suppressed, parse
    from jaxloopfix.files import read_source
    from jaxloopfix.rules.base import FileContext

    source = read_source(path, max_file_size=settings.max_file_size)
    settings = api.project_settings(path, source.text, settings, given=given)
    text = source.text
    notebook = None
    notes: list[str] = []
    if path.suffix == ".ipynb":
        from jaxloopfix.notebook import Notebook, without_broken_cells

        notebook = Notebook(source.text)
        text = notebook.module
    try:
        try:
            parsed = parse(text, str(path))
        except ParseError:
            if notebook is None:
                raise
            notebook, broken = without_broken_cells(notebook)  # left out, as `check` leaves them
            notes = [f"{path}: cell {i + 1} does not parse ({why}); left out, as `check` leaves it out"
                     for i, why in sorted(broken.items())]
            text = notebook.module
            parsed = parse(text, str(path))
    except ParseError as exc:
        where = f" (line {exc.row})" if exc.row else ""
        return f"{path}: cannot parse{where}: {exc.message}; `check` reports the same and analyses nothing in it"
    context = FileContext(parsed, settings)
    diagnostics: list[Diagnostic] = []
    for rule in ALL_RULES:
        if settings.is_enabled(rule.code, str(path)):
            diagnostics.extend(rule().check(context))
    context.loop_plans  # noqa: B018 - fills `decisions`
    decisions = {id(loop): (rule, evidence) for loop, rule, evidence in context.decisions}
    traced = context.traced
    out: list[str] = list(notes)
    for loop in (n for n in parsed.nodes if type(n) is cst.For):
        start = parsed.position(loop).start.line
        end = parsed.position(loop).end.line
        shown, first, last = f"{path}:{start}", start, end
        if notebook is not None:
            found = notebook.cell_of(start)
            if found is None:
                continue
            shift = found.start_row - 1
            shown, first, last = f"{path}:cell {found.index + 1}:{start - shift}", start - shift, end - shift
            if cell is not None and found.index + 1 != cell:
                continue
        if line is not None and not first <= line <= last:
            continue
        header = f"for {_short(parsed.code(loop.target), 30)} in {_short(parsed.code(loop.iter), 40)}:"
        func = next((a for a in parsed.ancestors(loop) if isinstance(a, cst.FunctionDef)), None)
        where = f"in `{func.name.value}`" if func is not None else "at module level"
        out.append(f"{shown}: `{header}` {where}")
        if func is None:
            out.append("  not reported: module-level code runs once, on the host, outside any trace")
            continue
        if func not in traced:
            out.append(
                f"  not reported: `{func.name.value}` is not traced (no transform, framework entry or traced caller "
                "in the project reaches it)"
            )
            continue
        owner = traced[func]
        out.append(f"  traced: {owner.reason}")
        if owner.static_params:
            out.append(f"  static arguments: {', '.join(f'`{p}`' for p in sorted(owner.static_params))}")
        if owner.passed_through:
            shown = ", ".join(f"`{p}`" for p in sorted(owner.passed_through))
            out.append(f"  passed through unmapped by `vmap` (as the caller gives them): {shown}")
        decided = decisions.get(id(loop))
        if decided is None:
            out.append(
                f"  not planned on its own: it sits inside another construct of `{func.name.value}` "
                "(a nested function, class or comprehension is judged as its own function)"
            )
            continue
        kinds = ValueKinds(parsed, owner)
        items = kinds.of(loop.iter).items()
        out.append(f"  iterates `{_short(parsed.code(loop.iter))}`: items are {_kind_text(items)}")
        stored = _stores(loop)
        if stored:
            shown = ", ".join(f"`{n}` {_kind_text(kinds.of_name(n))}" for n in sorted(stored)[:6])
            out.append(f"  stores: {shown}")
        rule, evidence = decided
        if rule != "reported":
            out.append(f"  not reported (rule `{rule}`): {evidence}")
            continue
        found = [d for d in diagnostics if d.location.row == start and d.code in ("JLF001", "JLF002")]
        if not found:
            out.append("  reported by no rule here: JLF001 and JLF002 are not selected for this file")
            continue
        diagnostic = found[0]
        if is_suppressed(diagnostic, parsed.lines):
            out.append(
                f"  suppressed: {diagnostic.code} would report it, but a `# noqa` comment on line {start} hides it "
                "(`check` shows nothing here)"
            )
            continue
        out.append(f"  reported: {diagnostic.code} {diagnostic.message}")
        if diagnostic.fix is not None:
            out.append(f"  fix: {diagnostic.fix.applicability.value}: {diagnostic.fix.message}")
        elif diagnostic.no_fix_reason:
            out.append(f"  no fix: {diagnostic.no_fix_reason}")
    out.extend(_comprehensions(context, diagnostics, path, line, notebook, cell))
    if len(out) == len(notes):
        where = f" at line {line}" if line is not None else ""
        where += f" of cell {cell}" if cell is not None else ""
        out.append(f"{path}: no `for` loop or comprehension{where}")
    return "\n".join(out)


def _comprehensions(context, diagnostics: list[Diagnostic], path: Path, line: int | None, notebook, cell: int | None) -> list[str]:  # noqa: ANN001
    """The explanation of the comprehensions of traced functions (`comprehensions.py`)."""
    from jaxloopfix.analysis.comprehensions import COMPREHENSIONS, NAMES

    parsed = context.parsed
    context.comprehension_reports  # noqa: B018 - fills `comprehension_decisions`
    decisions = {id(comp): (rule, evidence) for comp, rule, evidence in context.comprehension_decisions}
    out: list[str] = []
    for comp in (n for n in parsed.nodes if isinstance(n, COMPREHENSIONS)):
        func = next((a for a in parsed.ancestors(comp) if isinstance(a, (cst.FunctionDef, cst.Lambda))), None)
        start, end = parsed.position(comp).start.line, parsed.position(comp).end.line
        shown, first, last = f"{path}:{start}", start, end
        if notebook is not None:
            found = notebook.cell_of(start)
            if found is None or (cell is not None and found.index + 1 != cell):
                continue
            shift = found.start_row - 1
            shown, first, last = f"{path}:cell {found.index + 1}:{start - shift}", start - shift, end - shift
        if line is not None and not first <= line <= last:
            continue
        header = f"for {_short(parsed.code(comp.for_in.target), 30)} in {_short(parsed.code(comp.for_in.iter), 40)}"
        if func is None:
            cls = next((a for a in parsed.ancestors(comp) if isinstance(a, cst.ClassDef)), None)
            where = f"in the body of class `{cls.name.value}`" if cls is not None else "at module level"
            out.append(f"{shown}: {NAMES[type(comp)]} `... {header}` {where}")
            out.append(f"  not reported: code {where} runs once, on the host, outside any trace")
            continue
        where = f"`{func.name.value}`" if isinstance(func, cst.FunctionDef) else "a `lambda`"
        out.append(f"{shown}: {NAMES[type(comp)]} `... {header}` in {where}")
        if not isinstance(func, cst.FunctionDef):
            out.append("  not judged: comprehensions inside a `lambda` are not analysed")
            continue
        if func not in context.traced:
            out.append(
                f"  not reported: `{func.name.value}` is not traced (no transform, framework entry or traced caller "
                "in the project reaches it)"
            )
            continue
        out.append(f"  traced: {context.traced[func].reason}")
        decided = decisions.get(id(comp))
        if decided is None:
            out.append(
                "  not judged: each clause iterates a literal, a dict's items or a literal `range`, or it sits "
                "inside a reported loop or comprehension (whose diagnostic covers it), or outside the function's body"
            )
            continue
        rule, evidence = decided
        if rule != "reported":
            out.append(f"  not reported (rule `{rule}`): {evidence}")
            continue
        column = parsed.position(comp).start.column + 1
        found = [d for d in diagnostics if (d.location.row, d.location.column) == (start, column) and d.code == "JLF001"]
        out.append(f"  reported: {found[0].message}" if found else "  reported by no rule here: JLF001 is not selected for this file")
    return out


def _kind_text(kind) -> str:  # noqa: ANN001 - a value_kinds.Kind
    text = kind.name
    if kind.item is not None:
        text += f" of {kind.item.name}"
    return f"{text} ({kind.why})" if kind.why else text


def _short(code: str, limit: int = 50) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 3] + "..."
