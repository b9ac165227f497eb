"""The package name of a project whose root directory is itself the package.

Some projects keep their package's modules at the repository root, next to `__init__.py`, and
name the package in their packaging metadata (setup.cfg's `package_dir = pkg = .`, pyproject's
`[tool.setuptools.package-dir]`, setup.py's `package_dir={"pkg": "."}`). Their modules import
each other as `from pkg import utils`, a name the file layout alone never gives (the checkout's
directory is named after the repository or a commit). The name is read from that mapping, else
from the distribution's name, and only for a root that holds an `__init__.py`.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

# `package_dir={"pkg": "."}` or `{'pkg': ''}` in a setup.py.
SETUP_PY_ROOT = re.compile(r"""package_dir\s*=\s*\{[^}]*?['"]([A-Za-z_]\w*)['"]\s*:\s*['"]\.?/?['"]""")
SETUP_PY_NAME = re.compile(r"""\bname\s*=\s*['"]([A-Za-z_][\w.-]*)['"]""")


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
