"""Notebook documents (LSP 3.17) for the language server, without the server.

A notebook's code cells share one namespace (an import in the first cell resolves names in the
last), so they are linted as one program in cell order, exactly as `check` lints an .ipynb file
(`notebook.Notebook` joins the cells and maps each finding back to its cell and row). The
server sends each cell its own findings, at rows counted from the top of that cell.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lsprotocol import types

from jaxloopfix.config import Settings
from jaxloopfix.diagnostics import Diagnostic
from jaxloopfix.engine import ParseError
from jaxloopfix.notebook import CellParseError, lint_notebook_module

__all__ = ["CellSyntaxError", "CellText", "NotebookLint", "cells_of", "lint_cells", "notebook_source"]


@dataclass(frozen=True)
class CellText:
    """One cell as the editor holds it; `code`: a Python code cell, part of the program."""

    uri: str
    text: str
    version: int | None
    code: bool


@dataclass(frozen=True)
class CellSyntaxError:
    """Where the program stopped parsing, in the rows of the cell that holds the error."""

    message: str
    row: int | None
    column: int | None


@dataclass
class NotebookLint:
    """Each cell's findings ([] for a clean cell, so the editor clears what it showed), or the
    one cell that does not parse."""

    findings: dict[str, list[Diagnostic]] = field(default_factory=dict)
    syntax_errors: dict[str, CellSyntaxError] = field(default_factory=dict)


CellDocument = Callable[[str], tuple[str, int | None, str | None]]


def cells_of(notebook: types.NotebookDocument, document: CellDocument) -> list[CellText]:
    """The notebook's cells in order; `document` gives (text, version, language) of a cell's URI."""
    cells = []
    for cell in notebook.cells:
        text, version, language = document(cell.document)
        code = cell.kind == types.NotebookCellKind.Code and language in (None, "", "python")
        cells.append(CellText(cell.document, text, version, code))
    return cells


def notebook_source(cells: Sequence[CellText]) -> str:
    """The cells as .ipynb JSON: what `Notebook` joins, and what the project pass reads as the notebook."""
    raw = [{"cell_type": "code" if cell.code else "markdown", "source": cell.text} for cell in cells]
    return json.dumps({"cells": raw, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def lint_cells(cells: Sequence[CellText], source: str, filename: str, settings: Settings) -> NotebookLint:
    """Lint `source` (`notebook_source(cells)`) as `check` lints a notebook; findings go to their cells."""
    code = [cell.uri for cell in cells if cell.code]
    empty = {uri: [] for uri in code}
    if not code:
        return NotebookLint(empty)
    try:
        linted = lint_notebook_module(source, filename, settings)
    except CellParseError as exc:
        return NotebookLint(empty, {cells[exc.cell].uri: CellSyntaxError(exc.message, exc.row, exc.column)})
    except ParseError as exc:  # no cell to blame (the program as a whole): the first one shows it
        return NotebookLint(empty, {code[0]: CellSyntaxError(exc.message, None, None)})
    findings: dict[str, list[Diagnostic]] = empty
    for diagnostic in linted.diagnostics:
        findings.setdefault(_cell_uri(cells, diagnostic, code[0]), []).append(diagnostic)
    return NotebookLint(findings)


def _cell_uri(cells: Sequence[CellText], diagnostic: Diagnostic, first: str) -> str:
    """The cell `Notebook.map_diagnostic` put the finding in (its `cell` is 1-based)."""
    cell = diagnostic.extra.get("cell")
    if cell is None or not str(cell).isdigit() or not 0 < int(cell) <= len(cells):
        return first  # on no cell's rows (it cannot be, but a finding is never dropped)
    return cells[int(cell) - 1].uri
