"""A notebook as a module verify can import: its imports and definitions, nothing else.

Running a notebook top to bottom trains models, downloads data and draws plots, and a cell
may depend on state an earlier session left behind. What a verification needs is the
functions and classes the notebook defines, so the module verify imports keeps only the
code cells' imports, `def`s and `class`es, plus assignments of plain constants (`N = 64`,
`dt0 = 0.4`) that definitions read as globals; every other top-level statement is blanked,
line for line, so line numbers match the joined cells the analysis saw (the worker checks
which loop lines ran against them).
"""

from __future__ import annotations

import ast
import re
import tempfile
from pathlib import Path

from jaxloopfix.notebook import Notebook

KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
NOTE = "the notebook's imports, definitions and constants ran; its other top-level statements did not"


def _plain_constant(node: ast.stmt) -> bool:
    """`N = 64`, `shape: tuple = (3, 4)`: a value with no call, name lookup or comprehension."""
    value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
    if value is None:
        return False
    return all(
        isinstance(n, (ast.Constant, ast.Tuple, ast.List, ast.Dict, ast.Set, ast.UnaryOp, ast.BinOp, ast.operator, ast.unaryop, ast.Load))
        for n in ast.walk(value)
    )


def definitions_text(module: str) -> str:
    """`module` (the joined cells) with every top-level statement but imports, definitions and
    plain constants replaced by empty lines."""
    lines = module.splitlines(keepends=True)
    tree = ast.parse(module)
    for node in tree.body:
        if isinstance(node, KEPT) or _plain_constant(node):
            continue
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        last = node.end_lineno or node.lineno
        for row in range(first - 1, last):
            lines[row] = "\n"
    return "".join(lines)


def module_name(path: Path) -> str:
    """An importable name from the notebook's file name (`01-latent ode.ipynb` -> `_01_latent_ode`)."""
    name = re.sub(r"\W", "_", path.stem)
    return name if name.isidentifier() and not name[0].isdigit() else f"_{name}"


def write_module(path: Path, text: str) -> tuple[Path, str]:
    """Write the importable module for notebook `path` (JSON `text`) into a fresh temporary
    directory; returns the module's path and the joined cells the analysis reads."""
    notebook = Notebook(text)
    directory = Path(tempfile.mkdtemp(prefix="jaxloopfix-notebook-"))
    target = directory / f"{module_name(path)}.py"
    target.write_text(definitions_text(notebook.module), encoding="utf-8")
    return target, notebook.module
