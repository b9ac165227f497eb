"""The modules checked together, and how tracing flows between them.

`jaxloopfix check src/` sees a training step jitted in `train.py` that calls
`rnn_forward` from `layers.py`: the loop in `rnn_forward` runs traced, though
nothing in `layers.py` says so. Each file's analysis lists what its traced
code reaches in project modules (`ExternalTrace`); `TraceFlow` turns that into
seeds for the defining files and says which files to check again, until
nothing changes. Module names come from the file layout, as Python's import
system would see it from the file's import root (the first directory up
without an `__init__.py`).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from jaxloopfix.newer_syntax import parse_ast
from jaxloopfix.analysis.cross_module import (
    BY_NAME,
    EVERY_BY_NAME,
    ExternalTrace,
    ModuleClass,
    ModuleLinks,
    ModuleSite,
    TraceSeed,
    resolve_relative,
)
from jaxloopfix.analysis.declared_types_ast import dotted, import_bindings, module_declaration, module_function
from jaxloopfix.config import Settings
from jaxloopfix.root_package import root_package_names
from jaxloopfix.analysis.partials import PARTIAL

# An indented `def NAME(`: a method or a nested function (`TraceFlow._only_method`).
INDENTED_DEF = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)

# A name called in a module's text (`relax(`, `integrate.relax (`): where a passing may be.
CALLED_NAME = re.compile(r"([A-Za-z_]\w*)\s*\(")
# `partial(train_step, ...)`, `functools.partial(sim.relax, ...)`: a partial application binds the
# function's parameters as a call does (its last name is the one caught).
PARTIAL_NAME = re.compile(r"\b[Pp]artial\s*\(\s*(?:[A-Za-z_]\w*\s*\.\s*)*([A-Za-z_]\w*)\s*[,)]")

# The packages framework module classes come from (`analysis.traced.MODULE_BASES`).
FRAMEWORK_ROOTS = frozenset({"flax", "haiku", "equinox", "objax", "trax", "praxis"})


@dataclass(frozen=True)
class ModuleName:
    name: str  # "pkg.layers"
    package: str  # where relative imports start: "pkg" ("" for a top-level module)
    root: Path  # the import root: the directory `import pkg` is resolved from


def module_name(path: Path | str, packages: dict[str, tuple[tuple[str, ...], Path]] | None = None) -> ModuleName | None:
    """The module a `.py` file is imported as; None when its name is not an identifier.

    `packages` remembers each directory's answer across the files of one project."""
    directory, filename = os.path.split(os.path.abspath(path))
    stem, suffix = os.path.splitext(filename)
    if suffix != ".py" or not stem.isidentifier():
        return None
    is_package = stem == "__init__"
    memo = {} if packages is None else packages
    package_parts, root = _package(directory, memo)
    parts = [*package_parts] if is_package else [*package_parts, stem]
    if not parts:
        return None  # an `__init__.py` whose directory is not a package name
    package = parts if is_package else parts[:-1]
    if not package:
        package = list(_namespace_portion(directory, memo))
    return ModuleName(".".join(parts), ".".join(package), root)


def _namespace_portion(directory: str, memo: dict[str, tuple[tuple[str, ...], Path]]) -> tuple[str, ...]:
    """The package a directory without `__init__.py` is a namespace portion of (PEP 420):
    `pkg/envs/minigrid/` under `pkg/envs/__init__.py` is `pkg.envs.minigrid`, where its files'
    relative imports (`from ...base import Env`) start, as Python resolves them; `()` when no
    directory above it, up to the first that is not named like a package, is a package. Its
    files keep the names they are found by as scripts (`playground`, `minigrid.playground`)."""
    names: list[str] = []
    while True:
        name = os.path.basename(directory)
        if not name.isidentifier():
            return ()
        names.insert(0, name)
        directory = os.path.dirname(directory)
        parts, _ = _package(directory, memo)
        if parts:
            return (*parts, *names)
        if os.path.dirname(directory) == directory or len(names) >= NAMESPACE_DEPTH:
            return ()


def _package(directory: str, memo: dict[str, tuple[tuple[str, ...], Path]]) -> tuple[tuple[str, ...], Path]:
    """(the package a directory is, as name parts; its import root): `()` and the directory
    itself when it has no `__init__.py` or is not named like a package."""
    known = memo.get(directory)
    if known is None:
        name = os.path.basename(directory)
        if name.isidentifier() and os.path.isfile(os.path.join(directory, "__init__.py")):
            parts, root = _package(os.path.dirname(directory), memo)
            known = ((*parts, name), root)
        else:
            known = ((), Path(directory))
        memo[directory] = known
    return known


def may_define_framework_classes(texts: Iterable[str], extra_base_classes: tuple[str, ...] = ()) -> bool:
    """Whether any of a project's files can define a Flax, Haiku or Equinox module class.

    Checked by a word search (no parse): a file that never names `flax`, `haiku`,
    `equinox` or a configured base class's package cannot import one. When no file can,
    classes deriving from project classes need no analysis for the class flow."""
    roots = set(FRAMEWORK_ROOTS)
    for name in extra_base_classes:
        if "." not in name:
            return True  # a base class of any module
        roots.add(name.split(".", 1)[0])
    words = re.compile(r"\b(?:" + "|".join(re.escape(root) for root in sorted(roots)) + r")\b")
    # A substring test first: far cheaper than the regex on the many files that name none.
    return any(
        (any(root in text for root in roots) and words.search(text))
        or ("jit" in text and TRACED_METHOD.search(text))
        or ("self." in text and WRAPPED_METHOD.search(text))
        # An abstract method: called on a parameter declared as the base (`env.step(...)` with
        # `env: MultiAgentEnv`), it runs the overrides of subclasses in other modules.
        or "abstractmethod" in text
        for text in texts
    )


# A method under a jit decorator (`@partial(jax.jit, static_argnames=("self",))`): its calls on
# `self` run subclasses' overrides traced (`traced.HOOKS`), so classes flow between modules.
TRACED_METHOD = re.compile(r"^[ \t]+@[\w.]*(?:jit|partial\([\w.]*jit)\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*def \w+\(\s*self\b", re.M)

# A transform of a method reference (`jax.value_and_grad(self.loss_fn)`): subclasses' overrides
# of the method run under it (`traced.TracedFinder._wrapped_self`), so classes flow too.
WRAPPED_METHOD = re.compile(
    r"\b(?:jit|grad|value_and_grad|vmap|pmap|jacfwd|jacrev|hessian|checkpoint|remat|filter_jit|filter_grad"
    r"|filter_value_and_grad|filter_vmap)\(\s*self\.\w+\s*[,)]"
)


# How many directories without `__init__.py` above a module's import root may name it.
NAMESPACE_DEPTH = 3


def _root_package_names(absolute: str, project: Path | None, declared: dict[Path, list[str]]) -> list[str]:
    """The names a module has inside a project whose root is the package (`root_package`):
    `ROOT/utils/maps.py` is `pkg.utils.maps` when the metadata maps `pkg` to the root, or the
    root's modules import their siblings as `pkg`. Without a project marker (modules checked
    out alone), the root is the topmost package directory above the module."""
    base = project if project is not None else _top_package(os.path.dirname(absolute))
    if base is None:
        return []
    if base not in declared:
        declared[base] = root_package_names(base)
    if not declared[base]:
        return []
    relative = Path(absolute).relative_to(base).with_suffix("").parts
    if relative and relative[-1] == "__init__":
        relative = relative[:-1]
    if not all(part.isidentifier() for part in relative):
        return []
    return [".".join([package, *relative]) for package in declared[base]]


def _top_package(directory: str) -> Path | None:
    """The topmost directory holding `__init__.py` in the unbroken chain above `directory`."""
    top: str | None = None
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        top = directory
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return Path(top) if top is not None else None


def namespace_names(found: ModuleName, project: Path | None) -> list[str]:
    """Further names a module is importable as through namespace packages (PEP 420): a
    directory without `__init__.py` is a package too when its parent is on the path, so
    `scripts/train.py` imports `src/layers.py` as `src.layers`. Up to `NAMESPACE_DEPTH`
    directories, never above the project root."""
    names: list[str] = []
    prefix: list[str] = []
    directory = found.root
    for _ in range(NAMESPACE_DEPTH):
        if project is not None and (directory == project or project not in directory.parents):
            break
        if not directory.name.isidentifier():
            break
        prefix.insert(0, directory.name)
        names.append(".".join([*prefix, found.name]))
        directory = directory.parent
    return names


@dataclass
class ModuleIndex:
    """Module names of the files checked together, to resolve imports between them."""

    names: dict[Path, ModuleName] = field(default_factory=dict)
    by_name: dict[str, list[Path]] = field(default_factory=dict)
    # Notebooks: not importable, but their jitted code traces the project's functions.
    notebooks: set[Path] = field(default_factory=set)
    # See `ModuleSite.class_flow`.
    class_flow: bool = True
    # Each file as the notes of other modules name it (see `ModuleSite.shown`).
    shown: dict[Path, str] = field(default_factory=dict)

    @classmethod
    def build(cls, files: list[Path], class_flow: bool = True) -> ModuleIndex:
        from jaxloopfix.project_context import project_root

        index = cls(class_flow=class_flow)
        packages: dict[str, tuple[tuple[str, ...], Path]] = {}
        roots: dict[str, Path | None] = {}
        declared: dict[Path, list[str]] = {}
        for path in files:
            absolute = os.path.abspath(path)  # once: each use below would make it again
            if path.suffix == ".ipynb":
                index.notebooks.add(path)
                index.shown[path] = _shown(absolute, project_root(absolute, roots))
                continue
            found = module_name(absolute, packages)
            if found is not None:
                index.names[path] = found
                index.by_name.setdefault(found.name, []).append(path)
                root = project_root(absolute, roots)
                for name in [*namespace_names(found, root), *_root_package_names(absolute, root, declared)]:
                    index.by_name.setdefault(name, []).append(path)
                index.shown[path] = _shown(absolute, root or found.root)
        return index

    @cached_property
    def aliases(self) -> dict[Path, list[str]]:
        """Every name each checked module is imported as (its package name, namespace and root
        package names), sorted."""
        found: dict[Path, list[str]] = {}
        for name, paths in sorted(self.by_name.items()):
            for path in paths:
                found.setdefault(path, []).append(name)
        return found

    @cached_property
    def roots(self) -> frozenset[str]:
        return frozenset(name.split(".", 1)[0] for name in self.by_name)

    def resolve(self, importer: Path, module: str) -> Path | None:
        """The checked file `module` names, as seen from `importer` (same import root first)."""
        candidates = self.by_name.get(module, [])
        if len(candidates) == 1:
            return candidates[0]
        own = self.names.get(importer)
        same_root = [c for c in candidates if own is not None and self.names[c].root == own.root]
        return same_root[0] if len(same_root) == 1 else None

    def site(
        self,
        path: Path,
        seeds: tuple[TraceSeed, ...] = (),
        classes: tuple[ModuleClass, ...] = (),
        declared: tuple[tuple[str, str], ...] = (),
        passed: tuple[tuple[str, str, str, str, str], ...] = (),
    ) -> ModuleSite | None:
        found = self.names.get(path)
        if found is None:
            if path in self.notebooks:  # imports project modules, is imported by none
                return ModuleSite(None, self.roots, seeds, None, classes, self.class_flow, declared, self.shown[path])
            return None
        shown = self.shown[path]
        return ModuleSite(found.package, self.roots, seeds, found.name, classes, self.class_flow, declared, shown, passed)


def _shown(path: Path | str, root: Path | None) -> str:
    """`path` from `root` (its project's root, else its import root), in `/` form: a note that
    names it reads the same, and the settings it is part of are cached the same, whether the
    run was given the project (`check src/`), the file or its absolute path."""
    if root is None:
        return Path(path).as_posix()
    absolute, top = os.path.abspath(path), str(root)
    if os.sep == "/" and absolute.startswith(top) and absolute[len(top):].startswith("/") and top != "/":
        return absolute[len(top) + 1:]  # what `relpath` gives for a path below `root`
    return Path(os.path.relpath(absolute, root)).as_posix()


@dataclass
class TraceFlow:
    """Seeds and framework classes per file, grown from each file's `ModuleLinks`."""

    index: ModuleIndex
    # The text of a checked file (to follow re-exports of classes through `__init__.py`).
    read: Callable[[Path], str | None] = lambda path: None
    seeds: dict[Path, dict[str, TraceSeed]] = field(default_factory=dict)
    classes: dict[str, ModuleClass] = field(default_factory=dict)
    wanted: dict[Path, set[str]] = field(default_factory=dict)
    given: dict[Path, tuple[ModuleClass, ...]] = field(default_factory=dict)
    bindings: dict[Path, dict[str, str]] = field(default_factory=dict)
    # Declared types asked for per file, those given with its last settings, and parsed modules.
    asked: dict[Path, set[str]] = field(default_factory=dict)
    answered: dict[Path, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    trees: dict[Path, ast.Module | None] = field(default_factory=dict)
    # Each name an indented `def` defines in the checked files (methods, nested functions), and where.
    indented_defs: dict[str, list[Path]] | None = None
    # Functions whose callers in other modules a file asked for, and the function values found
    # passed to them (`ModuleLinks.passings_asked`, `ModuleSite.passed`), each function's answer
    # and each file's calls read once per run (`_passings`, `_call_facts`).
    passings_asked: dict[Path, set[str]] = field(default_factory=dict)
    passed: dict[Path, tuple[tuple[str, str, str, str, str], ...]] = field(default_factory=dict)
    passings: dict[tuple[Path, str], frozenset[tuple[str, str, str, str, str]]] = field(default_factory=dict)
    call_facts: dict[Path, list[CallFact]] = field(default_factory=dict)
    called_names: dict[str, list[Path]] | None = None

    @property
    def active(self) -> bool:
        """Worth following: at least two checked files can import each other."""
        return len(self.index.names) + len(self.index.notebooks) > 1

    def settings_for(self, path: Path, settings: Settings) -> Settings:
        if not self.active:
            return settings
        seeds = tuple(sorted(self.seeds.get(path, {}).values(), key=lambda s: s.name))
        classes = self.given[path] = self._classes_for(path)
        declared = self.answered[path] = self._declared_for(path)
        passed = self.passed[path] = self._passed_for(path)
        site = self.index.site(path, seeds, classes, declared, passed)
        return replace(settings, site=site) if site is not None else settings

    def _classes_for(self, path: Path) -> tuple[ModuleClass, ...]:
        """The framework classes `path` derives from, as far as they are known now."""
        found = []
        for qualified in sorted(self.wanted.get(path, ())):
            known = self._class(path, qualified)
            if known is not None:
                found.append(ModuleClass(qualified, known.label, known.entries))
        return tuple(found)

    def _declared_for(self, path: Path) -> tuple[tuple[str, str], ...]:
        """The declared types `path` asked for, as far as the project's modules declare them."""
        found = []
        for qualified in sorted(self.asked.get(path, ())):
            text = self._declaration(path, qualified)
            if text is not None:
                found.append((qualified, text))
        return tuple(found)

    def _declaration(self, importer: Path, qualified: str, depth: int = 0) -> str | None:
        """The annotation text a project module declares for `qualified` (an alias or a class
        attribute), through aliases and re-exports; None when no checked module declares it."""
        if depth > 8:
            return None
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            path = self.index.resolve(importer, ".".join(parts[:cut]))
            if path is not None:
                break
        else:
            return None
        module, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
        tree = self._tree(path)
        if tree is None:
            return None
        bindings = import_bindings(tree, self.index.names[path].package)
        function = module_function(tree, rest)
        if function is not None:  # a helper's definition, read for how it uses its parameters (`helper_structure`)
            first = min([function.lineno, *(d.lineno for d in function.decorator_list)])
            return "".join((self.read(path) or "").splitlines(keepends=True)[first - 1 : function.end_lineno])
        expr = module_declaration(tree, rest)
        if expr is None:
            source = _bound(rest, bindings)  # re-exported: `from .effects import Effects`
            return self._declaration(path, source, depth + 1) if source else None
        name = dotted(expr)
        if name is None:
            return ast.unparse(expr)
        source = _bound(name, bindings)
        if source is not None:
            return self._declaration(path, source, depth + 1) or name
        if "." not in name and module_declaration(tree, name) is not None:
            return self._declaration(path, f"{module}.{name}", depth + 1)
        return name

    def _passed_for(self, path: Path) -> tuple[tuple[str, str, str, str, str], ...]:
        """The functions other checked modules pass to the module-level functions `path` asked
        about (`_passings`)."""
        found: set[tuple[str, str, str, str, str]] = set()
        for function in sorted(self.passings_asked.get(path, ())):
            if (path, function) not in self.passings:
                self.passings[(path, function)] = self._passings(path, function)
            found |= self.passings[(path, function)]
        return tuple(sorted(found))

    def _passings(self, path: Path, function: str) -> frozenset[tuple[str, str, str, str, str]]:
        """Each call of `function` of module `path` in another checked module (`relax(x,
        force=forces.spring)`, `sim.integrate.relax(...)`, its import resolving to `path`), and
        each argument naming a module-level function of a checked module (directly or as
        `functools.partial`'s first argument), named as `path` resolves it. A name bound in the
        calling function (a parameter, a local) is not the module's: it is left out."""
        names = self.index.aliases.get(path, [])
        if not names:
            return frozenset()
        wanted = {f"{name}.{function}" for name in names}
        module_word = re.compile(r"\b(?:" + "|".join(sorted({re.escape(n.rsplit(".", 1)[-1]) for n in names})) + r")\b")
        found: set[tuple[str, str, str, str, str]] = set()
        for caller in self._calling(function):
            if caller == path:
                continue  # calls inside the module are read by its own analysis
            text = self.read(caller) or ""
            if not module_word.search(text):
                continue
            for fact in self._call_facts(caller, text):
                if fact.callee not in wanted or self.index.resolve(caller, fact.callee.rsplit(".", 1)[0]) != path:
                    continue
                where = f"on line {fact.line} of {self.index.shown.get(caller, caller.as_posix())}"
                for slot, module, name in fact.values:
                    target = self.index.resolve(caller, module)
                    seen = next((n for n in self.index.aliases.get(target, []) if self.index.resolve(path, n) == target), None) \
                        if target is not None else None
                    if seen is not None:
                        found.add((function, slot, seen, name, where))
        return frozenset(found)

    def _calling(self, function: str) -> list[Path]:
        """The checked modules whose text calls a name `function` (`function(`, `x.function(`),
        from one scan of every module's text per run, made when a passing is first asked."""
        if self.called_names is None:
            self.called_names = {}
            for path in self.index.names:
                text = self.read(path) or ""
                for name in set(CALLED_NAME.findall(text)) | set(PARTIAL_NAME.findall(text)):
                    self.called_names.setdefault(name, []).append(path)
        return self.called_names.get(function, [])

    def _call_facts(self, caller: Path, text: str) -> list[CallFact]:
        """The calls of a module that pass module-level functions, read once per run (the tree
        is not kept)."""
        if caller not in self.call_facts:
            try:
                tree = parse_ast(text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                tree = None
            own = self.index.names[caller]
            self.call_facts[caller] = _passing_calls(tree, own.name, own.package) if tree is not None else []
        return self.call_facts[caller]

    def _tree(self, path: Path) -> ast.Module | None:
        if path not in self.trees:
            text = self.read(path)
            try:
                self.trees[path] = parse_ast(text) if text is not None else None
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self.trees[path] = None
        return self.trees[path]

    def _class(self, importer: Path, qualified: str, depth: int = 0) -> ModuleClass | None:
        """A known framework class by the name an importer uses, through re-exports."""
        if qualified in self.classes or depth > 8 or "." not in qualified:
            return self.classes.get(qualified)
        module, name = qualified.rsplit(".", 1)
        path = self.index.resolve(importer, module)
        source = self._bindings(path).get(name) if path is not None else None
        return self._class(path, source, depth + 1) if source is not None and path is not None else None

    def _bindings(self, path: Path) -> dict[str, str]:
        """What a module's `from ... import` statements bind, parsed once per run."""
        if path.name != "__init__.py":
            return {}  # re-exports live in packages' `__init__.py`
        if path not in self.bindings:
            text = self.read(path)
            self.bindings[path] = _imported_names(text, self.index.names[path]) if text is not None else {}
        return self.bindings[path]

    def add(self, importer: Path, links: ModuleLinks) -> set[Path]:
        """Record `importer`'s links; the files whose seeds changed (to check again)."""
        changed: set[Path] = set()
        for trace in links.external:
            for target, trace in self._targets(importer, trace):
                known = self.seeds.setdefault(target, {})
                merged = _merge(known.get(trace.name), trace.seed())
                if merged != known.get(trace.name):
                    known[trace.name] = merged
                    changed.add(target)
        for cls in links.classes:
            # A class learns more hooks as its bases are learned (`traced.HOOKS`): the newest wins.
            self.classes[cls.qualified] = cls
        self.wanted[importer] = set(links.wanted) | {c.qualified for c in self.given.get(importer, ())}
        self.asked[importer] = set(links.declarations) | {name for name, _ in self.answered.get(importer, ())}
        self.passings_asked[importer] = set(links.passings_asked) | {f for f, *_ in self.passed.get(importer, ())}
        return changed

    def _targets(self, importer: Path, trace: ExternalTrace) -> list[tuple[Path, ExternalTrace]]:
        """The files (and the trace, naming its class there) an external trace reaches."""
        if trace.module == BY_NAME:
            method, *also = trace.name.split(".", 1)[1].split("&")
            found = self._only_method(method) or self._only_class_with(method, also)
            return [(found[0], replace(trace, name=f"{found[1]}.{method}"))] if found is not None else []
        if trace.module == EVERY_BY_NAME:
            method = trace.name.split(".", 1)[1]
            return [(path, replace(trace, name=f"{owner}.{method}")) for path, owner in self._every_method(method)]
        target = self.index.resolve(importer, trace.module)
        return [(target, trace)] if target is not None else []

    def _defs_named(self, name: str) -> list[Path]:
        """The checked files with an indented `def name` (a method or a nested function)."""
        if self.indented_defs is None:  # one scan of every checked file, on the first such call
            self.indented_defs = {}
            for path in self.index.names:
                for found in INDENTED_DEF.findall(self.read(path) or ""):
                    self.indented_defs.setdefault(found, []).append(path)
        return self.indented_defs.get(name, [])

    def _every_method(self, name: str) -> list[tuple[Path, str]]:
        """(file, class) of every top-level class of the checked modules that defines `name`."""
        out = []
        for path in dict.fromkeys(self._defs_named(name)):
            tree = self._tree(path)
            out += [(path, node.name) for node in (tree.body if tree is not None else ()) if isinstance(node, ast.ClassDef)
                    and any(isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == name for f in node.body)]
        return out

    def _only_class_with(self, name: str, also: list[str]) -> tuple[Path, str] | None:
        """(file, class) of the one top-level class that defines `name` and every method of
        `also` (the other methods called on the same object), when several define `name`."""
        if not also:
            return None
        found = []
        for path, owner in self._every_method(name):
            tree = self._tree(path)
            classes = {n.name: n for n in (tree.body if tree is not None else ()) if isinstance(n, ast.ClassDef)}
            defined = _methods_with_bases(owner, classes)
            if defined is None or defined.issuperset(also):
                found.append((path, owner))  # a base of another module may define them: a candidate too
        return found[0] if len(found) == 1 else None

    def _only_method(self, name: str) -> tuple[Path, str] | None:
        """(file, class) of the one top-level class of the checked modules that defines method
        `name`; None when none or several do (or a function of that name is also nested
        elsewhere, which the text scan cannot tell from a method)."""
        if len(self._defs_named(name)) != 1:
            return None
        owners = self._every_method(name)  # the classes of that one file
        return owners[0] if len(owners) == 1 else None

    def waiting(self) -> set[Path]:
        """Files whose framework classes, declared types or passed functions were learned since
        they were checked."""
        classes = {path for path in self.wanted if self.given.get(path, ()) != self._classes_for(path)}
        declared = {path for path in self.asked if self.answered.get(path, ()) != self._declared_for(path)}
        return classes | declared | {path for path in self.passings_asked if self.passed.get(path, ()) != self._passed_for(path)}


def _absolute(expr: ast.expr, bindings: dict[str, str]) -> str | None:
    """`relax` / `integrate.relax` as the absolute name the module's imports bind it to."""
    name = dotted(expr)
    return _bound(name, bindings) if name is not None else None


def _bound(name: str, bindings: dict[str, str]) -> str | None:
    """`integrate.relax` as the absolute name the import binding `integrate` gives it; None when
    no import binds its first part."""
    head, _, tail = name.partition(".")
    return ".".join(filter(None, [bindings[head], tail])) if head in bindings else None


@dataclass(frozen=True)
class CallFact:
    """A call of a project function (`callee`, absolute) with module-level functions among its
    arguments: (parameter name or `#position`, the function's module, its name)."""

    callee: str
    line: int
    values: tuple[tuple[str, str, str], ...]


def _passing_calls(tree: ast.Module, module: str, package: str) -> list[CallFact]:
    """The calls of `tree` that pass functions by name, each resolved through the module's
    imports; names a function binds (parameters, locals) shadow the module's and are skipped."""
    bindings = import_bindings(tree, package)
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    facts: list[CallFact] = []

    local_names: dict[int, set[str]] = {}

    def local(scope: ast.AST) -> set[str]:
        """What a function binds itself (parameters, stores), worked out only for the functions
        around a call that passes functions."""
        if id(scope) not in local_names:
            args = scope.args  # type: ignore[attr-defined]
            found = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
            if not isinstance(scope, ast.Lambda):
                found |= {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            local_names[id(scope)] = found
        return local_names[id(scope)]

    single_values: dict[int, dict[str, ast.expr]] = {}

    def bound_once(scope: ast.AST) -> dict[str, ast.expr]:
        """The names a function binds exactly once, by a plain `name = value`, with the value
        (`losses = partial(loss_fn, w=2)` in a script's `main`)."""
        if id(scope) not in single_values:
            counts: dict[str, int] = {}
            values: dict[str, ast.expr] = {}
            for n in ast.walk(scope):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    counts[n.id] = counts.get(n.id, 0) + 1
                if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                    values[n.targets[0].id] = n.value
            single_values[id(scope)] = {k: v for k, v in values.items() if counts.get(k) == 1}
        return single_values[id(scope)]

    def function_value(value: ast.expr, scopes: tuple[ast.AST, ...]) -> tuple[str, str] | None:
        """What `_function_value` names, through a name the innermost function binds once."""
        if isinstance(value, ast.Name) and scopes and not isinstance(scopes[-1], ast.Lambda):
            args = scopes[-1].args  # type: ignore[attr-defined]
            if value.id not in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}:
                held = bound_once(scopes[-1]).get(value.id)
                if held is not None and (isinstance(held, (ast.Name, ast.Attribute, ast.Call))):
                    return _function_value(held, bindings, defined, module) if _head(held) not in local(scopes[-1]) else None
        return _function_value(value, bindings, defined, module)

    def visit(node: ast.AST, scopes: tuple[ast.AST, ...]) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            scopes = (*scopes, node)
        elif isinstance(node, ast.Call):
            func, arguments = node.func, _arguments(node)
            if _absolute(func, bindings) in PARTIAL and node.args and not isinstance(node.args[0], ast.Starred):
                # `partial(train_step, losses=loss_fn)`: binds `train_step`'s parameters as a call does.
                func, arguments = node.args[0], _arguments(ast.Call(func=node.args[0], args=node.args[1:], keywords=node.keywords))
            callee = _absolute(func, bindings)
            if callee is not None:
                values = [(slot, value, target) for slot, value in arguments
                          if (target := function_value(value, scopes)) is not None]
                shadowed = set().union(*(local(scope) for scope in scopes)) if values else set()
                if values and _head(func) not in shadowed:
                    kept = tuple(
                        (slot, *target) for slot, value, target in values
                        if _head(value) not in shadowed or target != _function_value(value, bindings, defined, module)
                    )
                    if kept:
                        facts.append(CallFact(callee, node.lineno, kept))
        for child in ast.iter_child_nodes(node):
            visit(child, scopes)

    visit(tree, ())
    return facts


def _head(expr: ast.expr) -> str | None:
    """`a` of `a.b.c`, of `partial(a.b, ...)`."""
    if isinstance(expr, ast.Call) and expr.args:
        expr = expr.args[0]
    name = dotted(expr)
    return name.split(".", 1)[0] if name else None


def _arguments(call: ast.Call) -> list[tuple[str, ast.expr]]:
    """(parameter name or `#position`, value) of a call's arguments, up to the first `*args`."""
    found: list[tuple[str, ast.expr]] = []
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break
        found.append((f"#{position}", arg))
    found += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
    return found


def _function_value(expr: ast.expr, bindings: dict[str, str], defined: set[str], module: str) -> tuple[str, str] | None:
    """(module, name) of the module-level function `expr` names (`forces.spring`, a function of
    the calling module, `partial(forces.spring, k=2)`), else None."""
    if isinstance(expr, ast.Call) and expr.args and _absolute(expr.func, bindings) in PARTIAL:
        expr = expr.args[0]
    if isinstance(expr, ast.Name) and expr.id in defined and expr.id not in bindings:
        return module, expr.id
    absolute = _absolute(expr, bindings)
    if absolute is None or "." not in absolute:
        return None
    target, name = absolute.rsplit(".", 1)
    return target, name


def _methods_with_bases(name: str, classes: dict[str, ast.ClassDef]) -> set[str] | None:
    """The methods class `name` defines or inherits from bases of the same module; None when a
    base is not one of them (imported, or an expression): what it inherits is not known here."""
    methods: set[str] = set()
    pending, seen = [name], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        cls = classes[current]
        methods |= {f.name for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                pending.append(base.id)
            elif not (isinstance(base, ast.Name) and base.id == "object"):
                return None
    return methods


def _imported_names(text: str, module: ModuleName) -> dict[str, str]:
    """name -> the absolute name a module-level `from ... import` binds it to in `text`."""
    try:
        tree = parse_ast(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            source = ".".join(filter(None, [node.module, alias.name]))
            absolute = resolve_relative("." * node.level + source, module.package) if node.level else source
            if alias.name != "*" and absolute is not None and "." in absolute:
                found[alias.asname or alias.name] = absolute
    return found


def _merge(old: TraceSeed | None, new: TraceSeed) -> TraceSeed:
    """One seed per function: a transform's view wins over a plain call's (its parameters are
    tracers); a parameter static at any transform site stays static (precision first)."""
    if old is None or (new.transformed and not old.transformed):
        return new
    if old.transformed and new.transformed:
        return replace(old, static_names=old.static_names | new.static_names, static_nums=old.static_nums | new.static_nums)
    return old
