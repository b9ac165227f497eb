"""Find how a module already refers to `jax.lax` / `jax.numpy`, or add the import."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def module_aliases(module: cst.Module) -> dict[str, str]:
    """Module-level import aliases: qualified module name -> the name code uses for it."""
    aliases: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    dotted = _dotted(alias.name)
                    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                        aliases.setdefault(dotted, alias.asname.name.value)
                    else:
                        top = dotted.split(".")[0]
                        aliases.setdefault(top, top)
                        if dotted != top:
                            aliases.setdefault(dotted, dotted)
            elif isinstance(small, cst.ImportFrom) and not small.relative:
                if small.module is None or isinstance(small.names, cst.ImportStar):
                    continue
                base = _dotted(small.module)
                for alias in small.names:
                    name = _dotted(alias.name)
                    local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
                    aliases.setdefault(f"{base}.{name}", local)
    return aliases


class ImportPlan:
    """Decides the spelling of `jax.lax` and `jax.numpy` in generated code, and the imports to add."""

    def __init__(
        self,
        module: cst.Module,
        taken: set[str],
        local: set[str] = frozenset(),  # type: ignore[assignment]
        fresh: Callable[..., str] | None = None,
    ) -> None:
        self.aliases = module_aliases(module)
        self.taken = taken
        self.local = local  # names the function binds itself: they shadow module imports
        self.fresh = fresh
        self.to_add: list[tuple[str, str | None, str | None]] = []
        self._chosen: dict[str, str] = {}

    def lax(self) -> str:
        return self._ref("jax.lax", ("jax", "lax", None), "lax")

    def jnp(self) -> str:
        return self._ref("jax.numpy", ("jax.numpy", None, "jnp"), "jnp")

    def _visible(self, alias: str) -> bool:
        return alias.split(".", 1)[0] not in self.local

    def _ref(self, qualified: str, add: tuple[str, str | None, str | None], local: str) -> str:
        if qualified in self._chosen:
            return self._chosen[qualified]
        choice = self._choose(qualified, add, local)
        self._chosen[qualified] = choice
        return choice

    def _choose(self, qualified: str, add: tuple[str, str | None, str | None], local: str) -> str:
        if qualified in self.aliases and self._visible(self.aliases[qualified]):
            return self.aliases[qualified]
        if local not in self.taken:
            self.to_add.append(add)
            return local
        jax = self.aliases.get("jax")
        if jax is not None and self._visible(jax):
            return f"{jax}.{qualified.split('.', 1)[1]}"
        # Every spelling is taken or shadowed: import under a fresh alias.
        alias = self.fresh(f"jax_{local}") if self.fresh else f"jax_{local}"
        module, obj, _ = add
        if obj is None:
            self.to_add.append((module, None, alias))
        else:
            self.to_add.append((module, obj, alias))
        return alias

    def apply(self, module: cst.Module) -> cst.Module:
        if not self.to_add:
            return module
        # Imported here: libcst.codemod loads libcst.matchers, a sixth of a cold check's start.
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import AddImportsVisitor

        context = CodemodContext()
        for mod, obj, asname in self.to_add:
            AddImportsVisitor.add_needed_import(context, mod, obj, asname)
        # The visitor copies and walks the module it is given, a second or more on a large
        # one; it reads and changes only the module's head, so it is given only that.
        head = _import_head(module)
        done = AddImportsVisitor(context).transform_module(module.with_changes(body=module.body[:head]))
        return done.with_changes(body=[*done.body, *module.body[head:]])


def _import_head(module: cst.Module) -> int:
    """How many leading statements cover all `AddImportsVisitor` reads or changes: a first
    statement (its docstring or `__strict__` flag), the import lines after it, where new
    imports go, and the statement after those (which may get an empty line before it).
    A line of several imports, or a first statement of another kind, only counts more."""
    body = module.body
    index = 1 if body and not _imports_only(body[0]) else 0
    while index < len(body) and _imports_only(body[index]):
        index += 1
    return min(len(body), index + 1)


def _imports_only(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


__all__: Sequence[str] = ["ImportPlan", "module_aliases"]
