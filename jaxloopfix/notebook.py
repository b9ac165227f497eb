"""Jupyter notebooks: check and fix code cells, keeping outputs, metadata and JSON formatting.

The code cells are joined into one module (cells share a namespace, so an
import in the first cell resolves names in the last), separated by marker
comments; diagnostics are mapped back to their cell and row, and fixed text
is split back at the markers. IPython magics (`%`, `!`, `%%`) are commented
out for analysis and restored unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Diagnostic, Location
from jaxloopfix.engine import ModuleLint, ParseError, apply_fixes, lint_module, lint_text, parse

MARKER = "# jaxloopfix-cell-boundary {index}"
MARKER_RE = re.compile(r"^# jaxloopfix-cell-boundary (\d+)\r?\n?$")
# A line magic, a shell escape or help (`%timeit f(x)`, `!pip install x`, `?jnp.dot`), or one whose
# output IPython assigns (`t = %timeit -o f(x)`, `files = !ls`): none of them is Python.
MAGIC = re.compile(r"^\s*(%|!|\?|[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!])")
PLACEHOLDER = "#jaxloopfix-magic:"
PASS = "pass  " + PLACEHOLDER


class NotebookError(Exception):
    """The notebook is not valid JSON or cannot be written back byte-for-byte."""


class CellParseError(ParseError):
    """A cell does not parse: its row is the cell's, and `cell` (0-based) says which cell, for the
    language server, which shows the error on that cell."""

    def __init__(self, cell: int, message: str, row: int | None = None, column: int | None = None) -> None:
        super().__init__(message, row, column)
        self.cell = cell


@dataclass
class _Cell:
    index: int  # position in the notebook (0-based)
    source: str
    start_row: int  # first row of this cell's code in the joined module (1-based)
    rows: int


def _cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _hide_magics(text: str) -> str:
    """A cell magic (`%%time`) comments the whole cell out; a line magic (`!wget ...`, `%env`)
    becomes `pass` at its indentation, with the line kept in a comment: a block whose only
    statements are magics (`if not ok:` then `!pip install x`) still parses."""
    lines = text.splitlines(keepends=True)
    if lines and lines[0].lstrip().startswith("%%"):
        return "".join(PLACEHOLDER + line if line.strip() else line for line in lines)
    return "".join(_hidden_line(line) if MAGIC.match(line) else line for line in lines)


def _hidden_line(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}{PASS}{line.lstrip()}"


def _restore_magics(text: str) -> str:
    out = []
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        if stripped.startswith(PASS):  # at the indentation the line has now (a fix may move it)
            out.append(line[: len(line) - len(stripped)] + stripped[len(PASS):])
        elif stripped.startswith(PLACEHOLDER):
            out.append(line.split(PLACEHOLDER, 1)[1])
        else:
            out.append(line)
    return "".join(out)


class Notebook:
    def __init__(self, text: str, left_out: frozenset[int] = frozenset()) -> None:
        """`left_out`: indexes of code cells analysed as comments (cells that do not parse),
        their text kept as it is."""
        try:
            self.data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise NotebookError(f"not valid notebook JSON: {exc.msg} (line {exc.lineno})") from None
        if not isinstance(self.data, dict) or not isinstance(self.data.get("cells"), list):
            raise NotebookError("not a Jupyter notebook (no `cells` list)")
        self.text = text
        self.cells: list[_Cell] = []
        parts: list[str] = []
        row = 1
        for index, cell in enumerate(self.data["cells"]):
            if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                continue
            source = _cell_text(cell)
            if index in left_out:  # its text as it is, every line a comment that restores to itself
                source = "".join(PLACEHOLDER + line for line in source.splitlines(keepends=True))
            else:
                source = _hide_magics(source)
            if source and not source.endswith("\n"):
                source += "\n"
            parts.append(MARKER.format(index=index) + "\n")
            row += 1
            count = source.count("\n")
            self.cells.append(_Cell(index, source, row, count))
            parts.append(source)
            row += count
        self.module = "".join(parts)

    def broken_cells(self) -> dict[int, str]:
        """{cell index: why} for the code cells that do not parse on their own (LaTeX or prose
        typed into a code cell, a half-written statement): what `check` leaves out."""
        broken: dict[int, str] = {}
        for cell in self.cells:
            try:
                parse(cell.source, "cell")
            except ParseError as exc:
                broken[cell.index] = exc.message
        return broken

    def cell_of(self, row: int) -> _Cell | None:
        for cell in self.cells:
            if cell.start_row <= row < cell.start_row + max(cell.rows, 1):
                return cell
        return None

    def map_diagnostic(self, diagnostic: Diagnostic) -> Diagnostic:
        cell = self.cell_of(diagnostic.location.row)
        if cell is None:
            return diagnostic
        shift = cell.start_row - 1
        fix = diagnostic.fix
        if fix is not None:
            # Edits address the joined module; applying them is done through `fix_notebook`.
            fix = replace(fix, edits=())
        return replace(
            diagnostic,
            location=Location(diagnostic.location.row - shift, diagnostic.location.column),
            end_location=Location(diagnostic.end_location.row - shift, diagnostic.end_location.column),
            fix=fix,
            extra={**diagnostic.extra, "cell": str(cell.index + 1)},
        )

    def dumps(self) -> str:
        """Serialise like Jupyter does; raises NotebookError unless that reproduces the original bytes."""
        indent = _indent_of(self.text)
        def render(data: dict) -> str:
            return json.dumps(data, indent=indent, ensure_ascii=False, separators=(",", ": ")) + (
                "\n" if self.text.endswith("\n") else ""
            )
        if render(json.loads(self.text)) != self.text:
            raise NotebookError("cannot write fixes without reformatting this notebook's JSON; run without --fix")
        return render(self.data)

    def replace_cells(self, module: str) -> None:
        chunks: dict[int, list[str]] = {}
        current: int | None = None
        for line in module.splitlines(keepends=True):
            match = MARKER_RE.match(line)
            if match:
                current = int(match.group(1))
                chunks[current] = []
            elif current is None:
                raise NotebookError("the fix moved code above the first cell")
            else:
                chunks[current].append(line)
        if set(chunks) != {c.index for c in self.cells}:
            raise NotebookError("the fix changed the cell layout")
        for cell in self.cells:
            new = _restore_magics("".join(chunks[cell.index]))
            original = _cell_text(self.data["cells"][cell.index])
            if not original.endswith("\n") and new.endswith("\n"):
                new = new[:-1]
            if new == original:
                continue
            raw = self.data["cells"][cell.index]
            raw["source"] = new.splitlines(keepends=True) if isinstance(raw.get("source"), list) else new


def _indent_of(text: str) -> int:
    match = re.search(r"\n( +)\"", text)
    return len(match.group(1)) if match else 1


def lint_notebook(text: str, filename: str, settings: Settings) -> list[Diagnostic]:
    return lint_notebook_module(text, filename, settings).diagnostics


def lint_notebook_module(text: str, filename: str, settings: Settings, *, left_out: dict[int, str] | None = None) -> ModuleLint:
    """Diagnostics mapped to their cells, and what the notebook's traced code reaches in project modules.
    With `left_out` (a dict to fill), the cells that do not parse are analysed as comments and
    recorded there (`check` reads the rest of a notebook); without it the first one raises
    `CellParseError` (the language server shows it in the cell being typed)."""
    notebook = Notebook(text)
    try:
        linted = lint_module(notebook.module, filename, settings)
    except ParseError as exc:
        if left_out is not None:
            notebook, broken = without_broken_cells(notebook)
            if broken:
                left_out.update(broken)
                linted = lint_module(notebook.module, filename, settings)
                return ModuleLint([notebook.map_diagnostic(d) for d in linted.diagnostics], linted.links)
        cell = notebook.cell_of(exc.row) if exc.row else None
        if cell is not None:
            message = f"cell {cell.index + 1}: {exc.message}"
            raise CellParseError(cell.index, message, exc.row - cell.start_row + 1, exc.column) from None
        raise
    return ModuleLint([notebook.map_diagnostic(d) for d in linted.diagnostics], linted.links)


def without_broken_cells(notebook: Notebook) -> tuple[Notebook, dict[int, str]]:
    """`notebook` with its code cells that do not parse on their own left out (as comments,
    their text kept), with why; asked only once the joined cells failed to parse."""
    broken = notebook.broken_cells()
    return (Notebook(notebook.text, left_out=frozenset(broken)) if broken else notebook), broken


def fix_notebook(
    text: str, filename: str, settings: Settings, *, unsafe: bool = False, accept=None, left_out: dict[int, str] | None = None
) -> tuple[str, list[Diagnostic], int]:
    """Fix the notebook's cells; with `left_out` (a dict to fill), cells that do not parse are
    left out, and kept exactly as they are, as `lint_notebook_module` leaves them out."""
    notebook = Notebook(text)
    try:
        new_module, remaining, count = apply_fixes(notebook.module, filename, settings, unsafe=unsafe, accept=accept)
    except ParseError:
        if left_out is None:
            raise
        notebook, broken = without_broken_cells(notebook)
        if not broken:
            raise
        left_out.update(broken)
        new_module, remaining, count = apply_fixes(notebook.module, filename, settings, unsafe=unsafe, accept=accept)
    remaining = [notebook.map_diagnostic(d) for d in remaining]
    if not count:
        return text, remaining, 0
    notebook.replace_cells(new_module)
    fixed = Notebook(notebook.dumps(), left_out=frozenset(left_out or ()))
    return fixed.text, [fixed.map_diagnostic(d) for d in lint_text(fixed.module, filename, settings)], count
