"""Tracing across modules: what a module's traced code reaches in other project modules.

A model file jits a training step that calls a helper from `layers.py`; the
helper's loop is traced although nothing in `layers.py` says so. Each module
reports the calls (and transforms, and `lax.scan` bodies) its traced code
aims at functions imported from project modules (`ExternalTrace`); the
project pass (`jaxloopfix.project`) turns them into seeds (`TraceSeed`) for
the modules that define those functions and re-checks them, to a fixed point.
Framework classes flow the other way: a Flax module class defined in
`base.py` makes `class Encoder(Base)` in `model.py` a Flax module too
(`ModuleClass`, asked for by the importer in `ModuleLinks.wanted`).
Only what is imported explicitly counts: a name that is not bound by an
import statement (a parameter, an attribute of an object) is never followed.
"""

from __future__ import annotations

from dataclasses import dataclass, field


# The module of an `ExternalTrace` that names a method by its name alone (`*.quad_mixture`): the
# project pass sends it to the one project class that defines a method of that name, if one alone does.
BY_NAME = "*"
# The module of an `ExternalTrace` for a transform applied to a method of an object nothing types
# (`jax.jit(env.step)`): the project pass sends it to every project class that defines the method.
EVERY_BY_NAME = "**"


@dataclass(frozen=True)
class TraceSeed:
    """A module-level function of this module that traced code in another module reaches."""

    name: str
    reason: str
    # True when a transform applies to it directly (`jax.jit(helpers.step)`): its
    # non-static parameters are tracers. False for a plain call from traced code.
    transformed: bool = False
    static_names: frozenset[str] = frozenset()
    static_nums: frozenset[int] = frozenset()


@dataclass(frozen=True)
class ExternalTrace:
    """Traced code reaching `name` of project module `module`, and how."""

    module: str
    name: str
    reason: str
    transformed: bool = False
    static_names: frozenset[str] = frozenset()
    static_nums: frozenset[int] = frozenset()

    def seed(self) -> TraceSeed:
        return TraceSeed(self.name, self.reason, self.transformed, self.static_names, self.static_nums)


@dataclass(frozen=True)
class ModuleClass:
    """A module-level framework class (Flax/Haiku/Equinox module, extra base's subclass)."""

    qualified: str  # "pkg.base.Base"
    label: str  # the framework's label, "Flax module"
    entries: str  # which methods run traced (see `traced._Framework`)


@dataclass
class ModuleLinks:
    """What one module's analysis tells the project pass."""

    external: list[ExternalTrace] = field(default_factory=list)
    classes: list[ModuleClass] = field(default_factory=list)
    # Base classes imported from project modules whose framework this module does not know.
    wanted: set[str] = field(default_factory=set)
    # Project names whose declared type this module asks for (`pkg.effects.Effects`,
    # `pkg.core.Jaxpr.effects`; see `declared_types`).
    declarations: set[str] = field(default_factory=set)
    # Module-level functions of this module whose parameters its traced code calls: the module
    # asks which functions other modules pass them (`ModuleSite.passed`).
    passings_asked: set[str] = field(default_factory=set)

    def copy(self) -> ModuleLinks:
        """Links of their own: appending to the copy leaves these as they are."""
        return ModuleLinks(list(self.external), list(self.classes), set(self.wanted), set(self.declarations),
                           set(self.passings_asked))


@dataclass(frozen=True)
class ModuleSite:
    """Where a file sits in the checked project, to resolve its imports of project modules."""

    # The package relative imports start from ("" for a top-level module); None when the
    # file is not importable (a script outside any package still imports its siblings).
    package: str | None
    # Top-level names of the project's modules and packages: imports of anything else
    # (jax, numpy, the standard library) are never followed.
    roots: frozenset[str]
    # Functions of this module that other modules trace.
    seeds: tuple[TraceSeed, ...] = ()
    # This module's own name (None when not importable) and the framework classes of other
    # modules that its classes derive from.
    module: str | None = None
    classes: tuple[ModuleClass, ...] = ()
    # Whether any checked file can define a framework class (else no class flow to follow).
    class_flow: bool = True
    # Declared types of project names this module asked for: (qualified name, annotation text).
    declared: tuple[tuple[str, str], ...] = ()
    # This file as the notes of other modules name it: its path from its project's root
    # (`seqmodel/train.py`), the same whichever way the run was given its files.
    shown: str | None = None
    # Functions other modules pass to this module's functions (asked in `ModuleLinks.passings_asked`):
    # (function, parameter name or `#position`, the passed function's module as this module
    # names it, its name, where).
    passed: tuple[tuple[str, str, str, str, str], ...] = ()

    def passed_to(self, function: str, parameter: str, position: int) -> list[tuple[str, str, str]]:
        """(module, name, where) of the functions other modules pass as `parameter` of `function`."""
        slots = (parameter, f"#{position}")
        return [(module, name, where) for f, slot, module, name, where in self.passed if f == function and slot in slots]

    def declared_type(self, qualified: str) -> str | None:
        return next((text for name, text in self.declared if name == qualified), None)

    def absolute(self, qualified: str) -> str | None:
        """`.helpers.step` -> `pkg.helpers.step`; None for names outside the project."""
        if qualified.startswith("."):
            return resolve_relative(qualified, self.package) if self.package is not None else None
        return qualified if qualified.split(".", 1)[0] in self.roots else None


def resolve_relative(qualified: str, package: str) -> str | None:
    """`..layers.step` seen from package `pkg.models` -> `pkg.layers.step`, as `import` would;
    None when the dots climb above the top-level package or name nothing."""
    dots = len(qualified) - len(qualified.lstrip("."))
    parts = package.split(".") if package else []
    if dots - 1 > len(parts):
        return None
    base = parts[: len(parts) - (dots - 1)]
    rest = qualified[dots:]
    return ".".join([*base, rest]) if rest else None
