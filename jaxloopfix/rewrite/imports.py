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
        needed: list[tuple[str, str | None, str | None]] = []
        for mod, obj, asname in self.to_add:
            placed = sorted_import(module, mod, obj, asname)
            if placed is not None:
                module = placed
            else:
                needed.append((mod, obj, asname))
        if not needed:
            return module
        # Imported only here: libcst.codemod loads libcst.matchers, a sixth of a cold check's start
        # (about a second), and most imports are placed in an existing block above.
        from libcst.codemod import CodemodContext
        from libcst.codemod.visitors import AddImportsVisitor

        context = CodemodContext()
        for mod, obj, asname in needed:
            AddImportsVisitor.add_needed_import(context, mod, obj, asname)
        if not context.scratch:
            return module
        # The visitor copies and walks the module it is given, a second or more on a large
        # one; it reads and changes only the module's head, so it is given only that.
        head = _import_head(module)
        done = AddImportsVisitor(context).transform_module(module.with_changes(body=module.body[:head]))
        return done.with_changes(body=[*done.body, *module.body[head:]])


# --------------------------------------------------------------------------- isort's order

def _member_key(name: str) -> tuple[int, str, str]:
    """isort's order of imported names with `order-by-type` (ruff's default): CONSTANTS, then
    Classes, then the rest, each case-insensitively."""
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return kind, name.lower(), name


def _statement_key(small: cst.Import | cst.ImportFrom) -> tuple:
    """isort's order of import statements in a section (`force-sort-within-sections` off):
    `import a` lines before `from a import b` lines, each by module, case-insensitively."""
    if isinstance(small, cst.Import):
        dotted = _dotted(small.names[0].name)
        return 0, dotted.lower(), dotted, ()
    dotted = _dotted(small.module) if small.module is not None else ""
    names = [] if isinstance(small.names, cst.ImportStar) else [_dotted(a.name) for a in small.names]
    return 1, dotted.lower(), dotted, tuple(_member_key(n) for n in names)


def _one_import(statement: cst.BaseStatement) -> cst.Import | cst.ImportFrom | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Import) or (isinstance(small, cst.ImportFrom) and not small.relative):
            return small
    return None


def _jax_section(body: Sequence[cst.BaseStatement]) -> tuple[int, int] | None:
    """The section (a run of one-import lines with no blank line inside) that imports `jax`:
    where isort keeps the third-party imports a new `jax` import joins."""
    start = 0
    while start < len(body):
        if _one_import(body[start]) is None:
            start += 1
            continue
        stop = start + 1
        while stop < len(body) and _one_import(body[stop]) is not None and not body[stop].leading_lines:
            stop += 1
        for statement in body[start:stop]:
            small = _one_import(statement)
            modules = (
                [_dotted(a.name) for a in small.names] if isinstance(small, cst.Import)
                else [_dotted(small.module)] if small is not None and small.module is not None else []
            )
            if any(m == "jax" or m.startswith("jax.") for m in modules):
                return start, stop
        start = stop
    return None


def sorted_import(module: cst.Module, mod: str, obj: str | None, asname: str | None) -> cst.Module | None:
    """`module` with the import added where isort (ruff's `I001`) puts it, in the section that
    imports `jax`: a name joins an unaliased `from mod import ...` line in member order, or a new
    line goes in statement order. None when the module has no such section (the caller falls back)."""
    section = _jax_section(module.body)
    if section is None:
        return None
    start, stop = section
    body = list(module.body)
    if obj is not None and not asname:
        for index in range(start, stop):
            small = _one_import(body[index])
            if (isinstance(small, cst.ImportFrom) and small.module is not None and _dotted(small.module) == mod
                    and not isinstance(small.names, cst.ImportStar) and not small.lpar
                    and all(a.asname is None for a in small.names)):
                names = sorted([_dotted(a.name) for a in small.names] + [obj], key=_member_key)
                aliases = [cst.ImportAlias(name=cst.Name(n)) for n in names]
                new_small = small.with_changes(names=aliases)
                body[index] = body[index].with_changes(body=[new_small])  # type: ignore[union-attr]
                return module.with_changes(body=body)
    if obj is None:
        text = f"import {mod}" + (f" as {asname}" if asname else "")
    else:
        text = f"from {mod} import {obj}" + (f" as {asname}" if asname else "")
    line = cst.parse_statement(text + "\n")
    key = _statement_key(_one_import(line))  # type: ignore[arg-type]
    index = next((i for i in range(start, stop) if _statement_key(_one_import(body[i])) > key), stop)  # type: ignore[arg-type]
    if index == start:
        # The section's first line keeps the blank lines and comments above the section.
        line = line.with_changes(leading_lines=body[start].leading_lines)
        body[start] = body[start].with_changes(leading_lines=[])
    body.insert(index, line)
    return module.with_changes(body=body)


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
