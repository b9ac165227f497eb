"""The value a static count has by default, as its declaration gives it.

A loop over `range(self.micro_ticks)` or `range(nu)` runs a static number of steps (`range` of a
tracer raises), but which number is set where the object is built or the function called. When
the count is declared with an int default (`micro_ticks: int = 2` in `__init__`, a dataclass
field `n_steps: int = 1`, a parameter `nu: int = 1`) and no call in the module passes another
value, the default is the value the code is written for: the evidence that tells a few static
steps (power-iteration rounds, micro ticks, a derivative order) from a loop per row.

Cases (each a fixture under `fixtures/ok/` or `fixtures/recall/`):

- `self.n` assigned once, in `__init__`, from a parameter with an int default: that default.
- `n: int = 3` (or `field(default=3)`) in the class body and no other assignment: 3.
- a parameter of the traced function with an int default, never reassigned: that default.
- a call in the module passing the count (by keyword, or by position): its int literal joins the
  candidates; anything else (a name, an expression, `*args`) leaves no default.
- a subclass in the module that redeclares the attribute: no default (it may differ).

Only the count's own declaration counts: `self.hparams.num_epochs` or `cfg.n_layers`, a field of
a configuration object, has no default here. A config class exists to be set per experiment, so
its default (`num_epochs: int = 1`) says little about the counts that run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from jaxloopfix.analysis.names import assigned_names, parameters
from jaxloopfix.analysis.source import ParsedModule

# Calls that declare a dataclass or pytree field, with its default as `default=`.
FIELD_CALLS = frozenset({"field", "static_field"})


@dataclass(frozen=True)
class CountDefault:
    """The largest value the count takes by its default and the module's calls; `source` quotes it."""

    value: int
    source: str


def field_default(value: cst.BaseExpression) -> int | None:
    """`3` or `field(default=3)` / `struct.field(pytree_node=False, default=3)`: 3."""
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value)
    if isinstance(value, cst.Call):
        func = value.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if name in FIELD_CALLS:
            default = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "default"), None)
            if isinstance(default, cst.Integer):
                return int(default.evaluated_value)
    return None


def attribute_default(parsed: ParsedModule, function: cst.FunctionDef, expr: cst.Attribute) -> CountDefault | None:
    """`self.attr` in a method (or a function nested in one) of a class of this module."""
    found = method_and_class(parsed, function)
    if not (found and isinstance(expr.value, cst.Name) and receiver_name(found[0]) == expr.value.value
            and not _decorated(found[0], "staticmethod")):
        return None
    klass = found[1]
    attr = expr.attr.value
    if redeclared_by_subclass(parsed, klass, attr):
        return None
    declared = _class_body_default(klass, attr)
    assigned = self_assignments(klass, attr)
    if declared is not None and not assigned:
        return _with_calls(
            parsed, klass.name.value, attr, _field_position(parsed, klass, attr), declared,
            f"`{attr}: int = {declared}` in `{klass.name.value}`",
        )
    if declared is not None or len(assigned) != 1:
        return None
    init, value = assigned[0]
    if init.name.value != "__init__":
        return None
    if isinstance(value, cst.Integer):
        return CountDefault(int(value.evaluated_value), f"`self.{attr} = {value.value}` in `__init__`")
    if not isinstance(value, cst.Name):
        return None
    init_params = parameters(init, stars=False)
    param = next((p for p in init_params if p.name.value == value.value), None)
    if param is None or not isinstance(param.default, cst.Integer) or _reassigned(init, value.value):
        return None
    default = int(param.default.evaluated_value)
    position = init_params.index(param) - 1  # `self` is bound
    return _with_calls(
        parsed, klass.name.value, value.value, position, default,
        f"`{value.value}={param.default.value}` in `{klass.name.value}.__init__`",
    )


def parameter_default(parsed: ParsedModule, function: cst.FunctionDef, name: str) -> CountDefault | None:
    """A parameter of `function` that the body never reassigns, with an int default, or without
    a default but passed an int literal by every call in the module (`smooth(x, w, 3)`)."""
    params = parameters(function, stars=False)
    param = next((p for p in params if p.name.value == name), None)
    if param is None or _reassigned(function, name):
        return None
    position = params.index(param)
    if method_and_class(parsed, function, directly=True) is not None and not _decorated(function, "staticmethod"):
        position -= 1  # called as `obj.method(...)`: `self` is bound
    if param.default is None:
        callers = _called_as(parsed, function.name.value)
        if callers is None:
            return None  # `partial(f, n=200)`, `g = f`: calls this module's text does not show
        return _with_calls(parsed, callers, name, position, None, f"`{name}` in `{function.name.value}`")
    if not isinstance(param.default, cst.Integer):
        return None
    default = int(param.default.evaluated_value)
    return _with_calls(parsed, function.name.value, name, position, default, f"`{name}={param.default.value}` in `{function.name.value}`")


# Transforms whose result takes the arguments of the function they wrap, in the same places:
# a call of `grad_loss = jax.jit(jax.grad(loss), static_argnums=3)` passes `loss`'s parameters.
SAME_SIGNATURE = frozenset({"jax.jit", "jax.grad", "jax.value_and_grad", "jax.checkpoint", "jax.remat"})


def _called_as(parsed: ParsedModule, callee: str) -> frozenset[str] | None:
    """The names calls of `callee` go by: its own, and each name bound once to it wrapped in
    transforms that keep its signature (`grad_loss = jax.jit(jax.grad(callee))`). None when the
    function is read any other way (passed, aliased, partially applied) or an alias is bound twice."""
    uses = _value_uses(parsed, callee)
    if not uses:
        return frozenset({callee})
    names = {callee}
    for node in uses:
        parent = parsed.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return None  # `module.f` read, not called
        alias = _alias_through_transforms(parsed, node)
        if alias is None:
            return None
        names.add(alias)
    bound = [t.target.value for n in parsed.nodes if isinstance(n, cst.Assign) for t in n.targets if isinstance(t.target, cst.Name)]
    if any(bound.count(name) != 1 for name in names - {callee}):
        return None
    for node in parsed.nodes:  # an alias only called (never passed on, where other calls may use it)
        if isinstance(node, cst.Name) and node.value in names - {callee}:
            parent = parsed.parent(node)
            if not (isinstance(parent, cst.Call) and parent.func is node or isinstance(parent, cst.AssignTarget)):
                return None
    return frozenset(names)


def _alias_through_transforms(parsed: ParsedModule, node: cst.Name) -> str | None:
    """`g` of `g = jax.jit(jax.grad(node, (0, 1)), static_argnums=3)`: the name bound to `node`
    wrapped, as the first argument, in `SAME_SIGNATURE` transforms; else None."""
    inner: cst.CSTNode = node
    while True:
        arg = parsed.parent(inner)
        call = parsed.parent(arg) if isinstance(arg, cst.Arg) else None
        if not (isinstance(call, cst.Call) and call.args and call.args[0] is arg and arg.keyword is None
                and isinstance(call.func, (cst.Name, cst.Attribute)) and parsed.qualified_name(call.func) in SAME_SIGNATURE):
            break
        inner = call
    assign = parsed.parent(inner)
    if inner is node or not (isinstance(assign, cst.Assign) and assign.value is inner and len(assign.targets) == 1
                             and isinstance(assign.targets[0].target, cst.Name)):
        return None
    return assign.targets[0].target.value


def _value_uses(parsed: ParsedModule, callee: str) -> list[cst.Name]:
    """Each read of the function's name other than as a call's callee (`f(...)`,
    `self.f(...)`), its `def` or an import of it: the uses that pass, alias or wrap it."""
    uses = []
    for node in parsed.nodes:
        if not (isinstance(node, cst.Name) and node.value == callee):
            continue
        parent = parsed.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node or isinstance(parent, (cst.FunctionDef, cst.ImportAlias)):
            continue
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            grand = parsed.parent(parent)
            if isinstance(grand, cst.Call) and grand.func is parent:
                continue  # `self.smooth(...)`: a call
        uses.append(node)
    return uses


def _with_calls(
    parsed: ParsedModule, callee: str | frozenset[str], keyword: str, position: int | None, default: int | None, source: str
) -> CountDefault | None:
    """The default joined with what the module's calls of `callee` (or of any of the names its
    calls go by) pass for it; None when a call passes something that is not an int literal or a
    name the calling function binds once to one (`H, M = 3, 3`). Without a default, the calls
    alone, when there is at least one and each passes the count."""
    callees = frozenset({callee}) if isinstance(callee, str) else callee
    values = [default] if default is not None else []
    for node in parsed.nodes:
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        if name not in callees:
            continue
        positional = [a for a in node.args if a.keyword is None]
        if any(a.star for a in node.args) or (position == UNKNOWN_POSITION and positional):
            return None
        passed = [a.value for a in node.args if a.keyword is not None and a.keyword.value == keyword]
        if position is not None and position >= 0 and len(positional) > position:
            passed.append(positional[position].value)
        if default is None and not passed:
            return None  # a call that passes it some other way (or not at all)
        for value in passed:
            number = _int_value(parsed, node, value)
            if number is None:
                return None
            values.append(number)
    if not values:
        return None
    if default is None:
        return CountDefault(max(values), f"{source}, passed {max(values)} by every call in this module")
    if max(values) != default:
        source += f", and {max(values)} where this module passes it"
    return CountDefault(max(values), source)


def _int_value(parsed: ParsedModule, call: cst.Call, value: cst.BaseExpression) -> int | None:
    """An int literal, or a local name the function making `call` binds once, to an int literal
    (`H = 3`, or `H, M = 3, 3`), and never rebinds or takes as a parameter."""
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value)
    if not isinstance(value, cst.Name):
        return None
    caller = next((a for a in parsed.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
    if caller is None or any(p.name.value == value.value for p in parameters(caller)):
        return None
    found: list[cst.BaseExpression | None] = []
    name = value.value
    own = [caller.body]  # the caller's own scope: a nested function's names are its own
    while own:
        node = own.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        own.extend(node.children)
        if isinstance(node, cst.Assign):
            for target in node.targets:
                found.extend(_bound_values(target.target, node.value, name))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor, cst.AsName)):
            target = node.name if isinstance(node, cst.AsName) else node.target
            if any(isinstance(n, cst.Name) and n.value == name for n in _flatten(target)):
                return None  # rebound (`with ... as n`, `except E as n`, `import m as n`): not one value
        elif isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
            return None
        elif isinstance(node, cst.ImportAlias) and node.asname is None and node.name.value == name:
            return None
        elif isinstance(node, cst.Del) and any(isinstance(n, cst.Name) and n.value == name for n in _flatten(node.target)):
            return None
    if len(found) != 1 or not isinstance(found[0], cst.Integer):
        return None
    return int(found[0].evaluated_value)


def _bound_values(
    target: cst.BaseExpression, value: cst.BaseExpression | None, name: str
) -> list[cst.BaseExpression | None]:
    """What `target = value` binds to `name`: the value, the matching item of a tuple display
    unpacked into a tuple of names, or None where it cannot be told."""
    if isinstance(target, cst.Name):
        return [value] if target.value == name else []
    if isinstance(target, (cst.Tuple, cst.List)):
        items = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
        out: list[cst.BaseExpression | None] = []
        for i, element in enumerate(target.elements):
            inner = items[i].value if items is not None and len(items) == len(target.elements) \
                and not isinstance(items[i], cst.StarredElement) else None
            out.extend(_bound_values(element.value, inner, name))
        return out
    return []


# A field whose place among the constructor's positional arguments is not known here.
UNKNOWN_POSITION = -2


def _field_position(parsed: ParsedModule, klass: cst.ClassDef, attr: str) -> int:
    """Where a class-body field `attr: int = 3` comes among the positional arguments of the
    constructor a dataclass (Flax, Equinox, chex) generates: its place among the class's own
    annotated fields. `UNKNOWN_POSITION` when the class writes its own `__init__` or derives
    from a class of this module (whose fields come first)."""
    own = {c.name.value for c in parsed.module.body if isinstance(c, cst.ClassDef)}
    if any(isinstance(b.value, cst.Name) and b.value.value in own for b in klass.bases):
        return UNKNOWN_POSITION
    fields: list[str] = []
    for statement in klass.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
            return UNKNOWN_POSITION
        if isinstance(statement, cst.SimpleStatementLine):
            fields += [s.target.value for s in statement.body if isinstance(s, cst.AnnAssign) and isinstance(s.target, cst.Name)]
    return fields.index(attr) if attr in fields else UNKNOWN_POSITION


def method_and_class(
    parsed: ParsedModule, function: cst.FunctionDef, directly: bool = False
) -> tuple[cst.FunctionDef, cst.ClassDef] | None:
    """The method of a class that `function` is (or is nested in, unless `directly`), and its class."""
    method: cst.FunctionDef = function
    for ancestor in parsed.ancestors(function):
        if isinstance(ancestor, cst.ClassDef):
            return (method, ancestor) if method in _body_statements(ancestor) else None
        if isinstance(ancestor, cst.FunctionDef):
            if directly:
                return None
            method = ancestor
    return None


def receiver_name(method: cst.FunctionDef) -> str | None:
    """The name a method's first parameter gives the instance (`self`), if it has one."""
    params = parameters(method, stars=False)
    return params[0].name.value if params else None


def class_declarations(klass: cst.ClassDef) -> Iterator[tuple[str, cst.BaseExpression | None]]:
    """Each name the class body declares (`n: int = 3`, `n: int`, `n = 3`), with its value."""
    for statement in _body_statements(klass):
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                yield small.target.value, small.value
            elif isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        yield target.target.value, small.value


def _body_statements(node: cst.ClassDef | cst.FunctionDef) -> list[cst.BaseStatement]:
    body = node.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def _decorated(function: cst.FunctionDef, name: str) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == name for d in function.decorators)


def _class_body_default(klass: cst.ClassDef, attr: str) -> int | None:
    value = next((value for name, value in class_declarations(klass) if name == attr and value is not None), None)
    return field_default(value) if value is not None else None


def self_assignments(klass: cst.ClassDef, attr: str) -> list[tuple[cst.FunctionDef, cst.BaseExpression | None]]:
    """Each `self.attr = value` / `self.attr += ...` in the class's methods, with its method."""
    found: list[tuple[cst.FunctionDef, cst.BaseExpression | None]] = []
    for statement in _body_statements(klass):
        if not isinstance(statement, cst.FunctionDef):
            continue
        for target, value in _attribute_stores(statement):
            if target.attr.value == attr:
                found.append((statement, value))
    return found


def _attribute_stores(function: cst.FunctionDef) -> list[tuple[cst.Attribute, cst.BaseExpression | None]]:
    out: list[tuple[cst.Attribute, cst.BaseExpression | None]] = []

    class Stores(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                for element in _flatten(t.target):
                    if isinstance(element, cst.Attribute):
                        out.append((element, node.value if element is t.target else None))

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            if isinstance(node.target, cst.Attribute):
                out.append((node.target, node.value))

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Attribute):
                out.append((node.target, None))

        def visit_Call(self, node: cst.Call) -> None:  # `setattr(self, "n", ...)`, `object.__setattr__`
            func = node.func
            name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if name in ("setattr", "__setattr__") and len(node.args) >= 2 and isinstance(node.args[1].value, cst.SimpleString):
                attr = node.args[1].value.evaluated_value
                if isinstance(attr, str):
                    out.append((cst.Attribute(cst.Name("self"), cst.Name(attr)), None))

    function.visit(Stores())
    return out


def _flatten(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for e in target.elements for leaf in _flatten(e.value)]
    return [target]


def _reassigned(function: cst.FunctionDef, name: str) -> bool:
    return name in assigned_names(_body_statements(function))


def redeclared_by_subclass(parsed: ParsedModule, klass: cst.ClassDef, attr: str) -> bool:
    """A class of this module that names `klass` among its bases and declares or assigns `attr`."""
    for node in parsed.nodes:
        if not isinstance(node, cst.ClassDef) or node is klass:
            continue
        bases = {b.value.value if isinstance(b.value, cst.Name) else b.value.attr.value if isinstance(b.value, cst.Attribute) else ""
                 for b in node.bases}
        if klass.name.value in bases and (any(name == attr for name, _ in class_declarations(node))
                                          or self_assignments(node, attr)):
            return True
    return False

