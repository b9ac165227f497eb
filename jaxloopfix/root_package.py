"""The package name of a project whose root directory is itself the package.

Some projects keep their package's modules at the repository root, next to `__init__.py`, and
name the package in their packaging metadata (setup.cfg's `package_dir = pkg = .`, pyproject's
`[tool.setuptools.package-dir]`, setup.py's `package_dir={"pkg": "."}`). Their modules import
each other as `from pkg import utils`, a name the file layout alone never gives (the checkout's
directory is named after the repository or a commit). The name is read from that mapping, else
from the distribution's name, and only for a root that holds an `__init__.py`.

Without metadata (a checkout of the modules alone, or metadata that names nothing), the name is
read from how the package's own modules import each other: `from sofima import map_utils` and
`from sofima import mesh` in modules beside `map_utils.py` and `mesh.py` name the package
`sofima`. One such import is not enough (`from imaging import maps` may name an installed
package that happens to have a `maps` module); two or more distinct modules of the root imported
through one name are, as a package's files name their siblings that way and no other package
holds the same set.
"""

from __future__ import annotations

import configparser
import re
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

# `package_dir={"pkg": "."}` or `{'pkg': ''}` in a setup.py.
SETUP_PY_ROOT = re.compile(r"""package_dir\s*=\s*\{[^}]*?['"]([A-Za-z_]\w*)['"]\s*:\s*['"]\.?/?['"]""")
SETUP_PY_NAME = re.compile(r"""\bname\s*=\s*['"]([A-Za-z_][\w.-]*)['"]""")


# `from pkg import a, b` / `from pkg.a import x` / `import pkg.a`: the name and the first part after it.
FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+([A-Za-z_]\w*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([^\n#]*))", re.M)
DOTTED_IMPORT = re.compile(r"^[ \t]*(?:from|import)[ \t]+([A-Za-z_]\w*)\.([A-Za-z_]\w*)", re.M)
# How many of the root's files are read for its imports; a package root holds its modules.
IMPORT_FILES = 64
# Distinct sibling modules imported through one name before that name is taken as the root's.
SIBLINGS_NEEDED = 2


def root_package_names(root: Path) -> list[str]:
    """The import names of the package `root` is (`declared_root_package`, else
    `imported_root_package`); [] when it holds no `__init__.py` or nothing names it."""
    if not (root / "__init__.py").is_file():
        return []
    name = declared_root_package(root) or imported_root_package(root)
    return [name] if name else []


def imported_root_package(root: Path) -> str | None:
    """The name the modules of a root package import their siblings by (see the module's
    docstring), else None. A name any module imports something else from (`from jax import
    jit`, `import jax.numpy` beside a root `nn.py` and `typing.py` imported as `jax.nn`,
    `jax.typing`) is another package, as is a standard-library one."""
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return None
    children = {e.stem for e in entries if e.suffix == ".py" and e.stem != "__init__" and e.stem.isidentifier()}
    children |= {e.name for e in entries if e.is_dir() and (e / "__init__.py").is_file()}
    exported = _words(root / "__init__.py")
    siblings: dict[str, set[str]] = defaultdict(set)
    foreign: set[str] = set(sys.stdlib_module_names)
    for entry in [e for e in entries if e.suffix == ".py"][:IMPORT_FILES]:
        text = _text(entry)
        for match in FROM_IMPORT.finditer(text):
            listed = match.group(2) if match.group(2) is not None else match.group(3)
            names = {part.split()[0] for part in listed.split(",") if part.split()}
            siblings[match.group(1)] |= names & children
            if names - children - exported:
                foreign.add(match.group(1))
        for match in DOTTED_IMPORT.finditer(text):
            if match.group(2) in children:
                siblings[match.group(1)].add(match.group(2))
            else:
                foreign.add(match.group(1))
    found = [
        name for name, modules in siblings.items()
        if len(modules) >= SIBLINGS_NEEDED and name not in children and name != root.name and name not in foreign
    ]
    return found[0] if len(found) == 1 else None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _words(path: Path) -> set[str]:
    """The identifiers a file names (what a package's `__init__.py` may define or re-export)."""
    return set(re.findall(r"[A-Za-z_]\w*", _text(path)))


def declared_root_package(root: Path) -> str | None:
    """The import name of the package `root` is, when it holds `__init__.py` and its metadata
    names one; else None."""
    if not (root / "__init__.py").is_file():
        return None
    for read in (_from_setup_cfg, _from_pyproject, _from_setup_py):
        try:
            found = read(root)
        except Exception:  # metadata of any shape (a table that is a string, a name that is a number)
            found = None  # names nothing: the layout alone decides, as without metadata
        if found:
            return found
    return None


def _identifier(name: object) -> str | None:
    if not isinstance(name, str) or not name:
        return None
    name = name.strip().replace("-", "_")
    return name if name.isidentifier() else None


def _from_setup_cfg(root: Path) -> str | None:
    path = root / "setup.cfg"
    if not path.is_file():
        return None
    parser = configparser.ConfigParser()
    parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    mapping = parser.get("options", "package_dir", fallback="")
    for line in mapping.splitlines():
        name, _, target = line.partition("=")
        if target.strip() in (".", "./", "") and _identifier(name):
            return _identifier(name)
    return _identifier(parser.get("metadata", "name", fallback=None))


def _from_pyproject(root: Path) -> str | None:
    path = root / "pyproject.toml"
    if not path.is_file():
        return None
    data = tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    tool = data.get("tool")
    setuptools = tool.get("setuptools") if isinstance(tool, dict) else None
    mapping = setuptools.get("package-dir") if isinstance(setuptools, dict) else None
    for name, target in mapping.items() if isinstance(mapping, dict) else ():
        if isinstance(target, str) and target.strip() in (".", "./", "") and _identifier(name):
            return _identifier(name)
    project = data.get("project", {})
    return _identifier(project.get("name") if isinstance(project, dict) else None)


def _from_setup_py(root: Path) -> str | None:
    path = root / "setup.py"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    mapped = SETUP_PY_ROOT.search(text)
    if mapped:
        return mapped.group(1)
    named = SETUP_PY_NAME.search(text)
    return _identifier(named.group(1)) if named else None
