"""Positive evidence that a loop in traced code does not unroll array work.

A `for` loop in a traced function is reported unless something here shows it
steps over Python structure rather than array data: a list/tuple/dict of
layers, parameters or modules, pytree leaves, a literal sequence, a stack of
modules built one per step, or a loop whose items are called like functions.
Missing proof that a value is an array is never evidence: each check below
names what it saw, and that text is what `JAXLOOPFIX_EXPLAIN=1` prints.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

import libcst as cst

from jaxloopfix.analysis.arrays import ARRAY_ATTRIBUTES, ARRAY_METHODS, ArrayFacts, is_array_annotation
from jaxloopfix.analysis.count_defaults import redeclared_by_subclass, self_assignments
from jaxloopfix.analysis.cross_module import ModuleSite
from jaxloopfix.analysis.declared_types import class_attribute
from jaxloopfix.analysis.helper_structure import AXIS_PARAMETERS, parse_function, positional_parameters, reads_window, structural_use
from jaxloopfix.analysis.host_libraries import computes_on_host
from jaxloopfix.analysis.partials import PARTIAL
from jaxloopfix.analysis.names import block_flow, discards_result, parameters, stored_names
from jaxloopfix.analysis.slice_width import width_varies
from jaxloopfix.analysis.source import ParsedModule, descendants, shorten
from jaxloopfix.analysis.traced import in_layer_package, layer_base

# Annotations of Python containers (`list[Layer]`, `Sequence[MemoryLocation]`, `dict[str, Array]`).
CONTAINER_ANNOTATIONS = frozenset(
    {"list", "tuple", "dict", "set", "frozenset", "List", "Tuple", "Dict", "Set", "FrozenSet", "Sequence",
     "MutableSequence", "Iterable", "Iterator", "Mapping", "MutableMapping", "Collection", "Deque", "deque",
     "PyTree"}
)
# Container annotations a JAX array satisfies as well: it iterates its rows and has a length.
SATISFIED_BY_ARRAYS = frozenset({"Iterable", "Iterator", "Collection"})


def _names_array(annotation: cst.BaseExpression) -> bool:
    """`jax.Array`, `jnp.ndarray`, `ArrayLike`, `Float[Array, "n"]`: an annotation naming an array."""
    node = annotation.value if isinstance(annotation, cst.Subscript) else annotation
    last = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
    return "Array" in last or last in ("ndarray", "Tensor") or (
        isinstance(annotation, cst.Subscript) and any(
            isinstance(e.slice, cst.Index) and _names_array(e.slice.value) for e in annotation.slice))


# Calls whose result is a Python container.
CONTAINER_BUILDERS = frozenset({"builtins.list", "builtins.tuple", "builtins.dict", "builtins.sorted", "builtins.set"})
# jnp/np functions returning a list of arrays: a deliberate, static unroll.
SPLITS = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit", "unstack"})
# Pieces of a split that stay a few static steps (the corpus's labelling rule: at most 4).
FEW_PIECES = 4
TREE_LEAVES = frozenset(
    {"jax.tree_util.tree_leaves", "jax.tree.leaves", "jax.tree_leaves", "jax.tree_util.tree_flatten",
     "jax.tree.flatten", "jax.tree_flatten", "jax.tree_util.tree_leaves_with_path", "jax.tree.leaves_with_path",
     "jax.tree_util.tree_flatten_with_path", "jax.tree.flatten_with_path", "optax.tree_utils.tree_leaves"}
)
DICT_VIEWS = frozenset({"items", "keys", "values"})
# Builtins and methods that only handle Python values (names, lists, dicts, strings).
PYTHON_HELPERS = frozenset(
    {"len", "isinstance", "issubclass", "str", "repr", "tuple", "list", "dict", "set", "frozenset", "sorted",
     "enumerate", "zip", "range", "reversed", "getattr", "hasattr", "setattr", "type", "id", "any", "all", "bool",
     "callable", "iter", "next", "map", "filter", "min", "max", "hash", "format", "int"}
)
PYTHON_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "items", "keys", "values", "get", "setdefault", "update", "add",
     "format", "join", "split", "startswith", "endswith", "strip", "replace", "lower", "upper", "index", "count",
     "copy", "remove", "discard"}
)
# Module classes of the frameworks: constructing one per step builds a stack of layers.
# How the no-array-work evidence starts (the planner yields it when the index reads array rows).
NO_ARRAY_OPERATION = "the body runs no array operation"
KEEPS_NOTHING = "the body stores nothing and discards every call's result"
NAMED_STRUCTURE = "each step names a piece of structure from the index"
# Methods whose first argument names what they declare or read: Flax's `self.param(name, ...)`,
# `self.variable(collection, name, ...)` (named by its second argument, so found by `name=` or
# not at all), Haiku's `hk.get_parameter(name, ...)`, `hk.get_state(name, ...)`.
DECLARING_METHODS: frozenset[str] = frozenset({"param", "get_parameter", "get_state", "set_state", "sow", "perturb"})
# How the selects-container-items evidence starts (it yields, as the facts' array reads do, when
# the index also reads rows of a value whose kind is an array).
SELECTS_ITEMS = "the index selects items of"
# How a local container's evidence reads (the planner yields it when the `enumerate` counter
# reads array rows).
BOUND_TO_CONTAINER = "is bound to"
class ContainerEvidence:
    """Evidence, in words, that a loop iterates Python structure (None when there is none)."""

    def __init__(
        self,
        parsed: ParsedModule,
        func: cst.FunctionDef,
        facts: ArrayFacts,
        local_values: dict[str, list[cst.BaseExpression | str]],
        is_module_class: Callable[[cst.BaseExpression], bool] = lambda expr: False,
        site: ModuleSite | None = None,
        ask: Callable[[str], None] = lambda qualified: None,
        is_python: Callable[[cst.BaseExpression], bool] = lambda expr: False,
        module: str | None = None,
        is_array: Callable[[cst.BaseExpression], bool] = lambda expr: False,
    ) -> None:
        self.parsed = parsed
        self.func = func
        # The framework of the module class whose method `func` is ("Flax module"), else None.
        self.module = module
        # Whether an expression's kind is a Python value at trace time (`len(shape) - 1 - k`).
        self.is_python = is_python
        # Whether an expression's kind is an array (or a traced argument) at trace time.
        self.is_array = is_array
        self.facts = facts
        self.local_values = local_values
        self.is_module_class = is_module_class
        # Declared types from other project modules, and how to ask the project pass for one.
        self.site = site
        self.ask = ask
        self._resolving: set[str] = set()  # names `name` is looking up (their bindings may cycle)
        self._annotations = {
            p.name.value: p.annotation.annotation for p in parameters(func, stars=False) if p.annotation is not None
        }
        for node in descendants(func.body):
            if isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Name):
                self._annotations.setdefault(node.target.value, node.annotation.annotation)

    # -- what the header iterates ------------------------------------------------------------
    def iterable(self, expr: cst.BaseExpression, depth: int = 0) -> str | None:
        if depth > 6:
            return None
        code = shorten(self.parsed.code(expr), 40)
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.SimpleString, cst.ConcatenatedString,
                             cst.FormattedString, cst.ListComp, cst.SetComp, cst.DictComp)):
            return f"it iterates the literal or comprehension `{code}`, a Python container"
        if isinstance(expr, cst.Call):
            func = expr.func
            qname = self.parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
            if isinstance(func, cst.Attribute) and func.attr.value in DICT_VIEWS and not expr.args:
                return f"it iterates `{code}`, the entries of a dict"
            if qname in TREE_LEAVES:
                return f"it iterates `{code}`, the leaves of a pytree"
            if self._rows_of_array(expr):
                return None  # `list(x)`, `jnp.unstack(x)`: one item per row of an array, a step along its axis
            if qname in CONTAINER_BUILDERS and expr.args:
                inner = self.iterable(expr.args[0].value, depth + 1)
                return inner or f"it iterates `{code}`, a Python container built for the loop"
            if qname and qname.rsplit(".", 1)[-1] in SPLITS and qname.startswith(("jax.numpy.", "numpy.")):
                return f"it iterates `{code}`, the list of pieces `{qname.rsplit('.', 1)[-1]}` returns (a static unroll over pieces)"
            if qname in ("builtins.zip", "builtins.enumerate", "builtins.reversed"):
                for arg in expr.args:
                    if arg.keyword is None and not arg.star:
                        found = self.iterable(arg.value, depth + 1)
                        if found:
                            return found
                return None
            if qname == "builtins.range" and expr.args:
                # The stop alone sets what the steps cover: `range(len(layers))`, `range(0, len(blocks), k)`;
                # `range(len(taps), x.shape[0])` steps along `x` from an offset.
                positional = [a for a in expr.args if a.keyword is None and not a.star]
                stop = positional[1] if len(positional) > 1 else positional[0] if positional else None
                return self.count(stop.value) if stop is not None else None
            if isinstance(func, cst.Attribute) and func.attr.value == "range" and qname != "builtins.range":
                return f"it iterates `{code}`, a loop API's own range (such as `jax.experimental.loops`), not Python's"
            if isinstance(func, cst.Attribute) and func.attr.value in STRING_SPLITS and any(
                isinstance(a.value, (cst.SimpleString, cst.FormattedString)) for a in expr.args
            ):
                return f"it iterates `{code}`, the pieces of a string"
            if qname is not None and qname.split(".", 1)[0] in HOST_MODULES:
                return f"it iterates `{code}`, a standard-library result (file names, strings, Python objects)"
            return None
        if isinstance(expr, cst.Attribute) and expr.attr.value in ("_fields", "__mro__", "__slots__"):
            return f"it iterates `{code}`, names or classes of a Python type"
        if isinstance(expr, cst.Attribute) and _rooted_at_self(expr):
            return f"it iterates `{code}`, an attribute of the object (its layers, submodules or configured items)"
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            declared = self._declared_attribute(expr.value.value, expr.attr.value)
            if declared:
                return f"it iterates `{code}`, {declared}"
        if isinstance(expr, cst.Name):
            return self.name(expr.value) or self._checked_sequence(expr)
        if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Slice):
            return self.iterable(expr.value, depth + 1)  # `values[1:]`: a slice of a Python list is one
        if self._flattened_leaves(expr):
            return f"it iterates `{code}`, the leaves of a pytree"
        return None

    def _flattened_leaves(self, expr: cst.BaseExpression) -> bool:
        """`jax.tree.flatten(t)[0]`: the first item of what a flatten returns, `(leaves, treedef)`,
        is the list of leaves (as `leaves, treedef = jax.tree.flatten(t)` unpacks it)."""
        if not (isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index)):
            return False
        index, call = expr.slice[0].slice.value, expr.value
        if not (isinstance(index, cst.Integer) and index.evaluated_value == 0 and isinstance(call, cst.Call)):
            return False
        qname = self.parsed.qualified_name(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        return qname in TREE_LEAVES and "flatten" in qname

    def _declared_attribute(self, name: str, attr: str) -> str | None:
        """`jaxpr.effects` with `jaxpr: Jaxpr`, where class `Jaxpr` declares `effects: Effects` and
        `Effects = Set[Effect]`: the attribute's declared type is a Python container."""
        annotation = self._annotations.get(name)
        if annotation is None or self.facts.is_array(cst.Name(name)):
            return None
        if isinstance(annotation, cst.SimpleString):  # a forward reference, `"Jaxpr"`
            annotation = _parse_annotation(annotation.evaluated_value if isinstance(annotation.evaluated_value, str) else "")
            if annotation is None:
                return None
        owner = shorten(self.parsed.code(annotation), 30)
        if isinstance(annotation, cst.Name):
            cls = next((s for s in self.parsed.module.body if isinstance(s, cst.ClassDef) and s.name.value == annotation.value), None)
            if cls is not None:
                declared = class_attribute(cls, attr)
                container = self._declared_container(declared) if declared is not None else None
                return _declared_message(self.parsed.code(declared), container, owner) if declared and container else None
        text = self._project_declaration(annotation, attr)
        return _declared_message(text, text, owner) if text else None

    def _declared_container(self, annotation: cst.BaseExpression, depth: int = 0) -> str | None:
        """The container type `annotation` names, through this module's aliases and the project's
        declarations (None when it is not known to be a container)."""
        if depth > 6 or is_array_annotation(self.parsed, annotation):
            return None
        if _container_annotation(annotation):
            return shorten(self.parsed.code(annotation), 40)
        if isinstance(annotation, cst.Name):
            values = [v for v in self._module_values(annotation.value) if isinstance(v, cst.BaseExpression)]
            if len(values) == 1:
                return self._declared_container(values[0], depth + 1)
        if isinstance(annotation, (cst.Name, cst.Attribute)):
            return self._project_declaration(annotation, None)
        return None

    def _declared_elsewhere(self, expr: cst.BaseExpression, attr: str | None = None) -> str | None:
        """What another project module declares for the name `expr` refers to (or for its
        attribute `attr`): an annotation's text, a function's source; asks the project pass
        when it is not known yet (None until then, and for names outside the project)."""
        if self.site is None or not isinstance(expr, (cst.Name, cst.Attribute)):
            return None
        qualified = self.parsed.qualified_name(expr)
        absolute = self.site.absolute(qualified) if qualified else None
        if absolute is None:
            return None
        wanted = f"{absolute}.{attr}" if attr else absolute
        text = self.site.declared_type(wanted)
        if text is None:
            self.ask(wanted)
        return text

    def _project_declaration(self, annotation: cst.BaseExpression, attr: str | None) -> str | None:
        """A container type that another project module declares for `annotation` (an alias) or
        for its attribute `attr` (a class attribute)."""
        text = self._declared_elsewhere(annotation, attr)
        if text is None:
            return None
        parsed = _parse_annotation(text)
        if parsed is None or not _container_annotation(parsed):
            return None
        return shorten(text, 40)

    def _checked_sequence(self, expr: cst.Name) -> str | None:
        """`if isinstance(names, (tuple, list)): for n in names: ...` (or the `else:` of
        `if not isinstance(...)`): the branch runs only for a Python sequence, as an annotation
        `tuple[...]` would say."""
        child: cst.CSTNode = expr
        for ancestor in self.parsed.ancestors(expr):
            if ancestor is self.func:
                break
            if isinstance(ancestor, cst.If):
                test, negated = ancestor.test, False
                if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    test, negated = test.expression, True
                in_branch = child is (ancestor.orelse if negated else ancestor.body)
                if in_branch and isinstance(test, cst.Call) and self.parsed.qualified_name(test.func) == "builtins.isinstance":
                    args = [a.value for a in test.args]
                    if len(args) == 2 and isinstance(args[0], cst.Name) and args[0].value == expr.value:
                        kinds = args[1].elements if isinstance(args[1], cst.Tuple) else [cst.Element(args[1])]
                        names = {self.parsed.code(k.value) for k in kinds}
                        if names and names <= {"tuple", "list", "Sequence", "collections.abc.Sequence"}:
                            return f"`{expr.value}` is checked with `{shorten(self.parsed.code(test), 40)}`: a Python sequence"
            child = ancestor
        return None

    def count(self, expr: cst.BaseExpression) -> str | None:
        """`len(self.layers)`, `len(blocks)`: a trip count that is the size of a container."""
        if isinstance(expr, cst.Call) and self.parsed.qualified_name(expr.func) == "builtins.len" and expr.args:
            arg = expr.args[0].value
            if isinstance(arg, cst.Attribute) and _rooted_at_self(arg) and not self.facts.is_array(arg):
                return f"its trip count is `len({self.parsed.code(arg)})`, the size of an attribute of the object (layers, components)"
            found = self.iterable(arg, 1) if not isinstance(arg, cst.Attribute) else None
            if found:
                return found
        if isinstance(expr, cst.BinaryOperation):
            # `len(layers) - 1`, `2 * len(heads)`: a container's size shifted or scaled by a literal
            # (`xs.shape[0] * len(heads)` is not: it grows with `xs`).
            if isinstance(expr.right, cst.Integer):
                return self.count(expr.left)
            if isinstance(expr.left, cst.Integer):
                return self.count(expr.right)
            return None
        if isinstance(expr, cst.Name) and expr.value not in self._resolving:
            # `n = len(blocks)`, then `range(0, n, k)`: the name's every binding is such a count.
            values = self.local_values.get(expr.value) or []
            self._resolving.add(expr.value)
            try:
                found = [self.count(v) if isinstance(v, cst.BaseExpression) else None for v in values]
            finally:
                self._resolving.discard(expr.value)
            if found and all(found):
                return found[0]
        return None

    def name(self, name: str) -> str | None:
        """A local name or parameter known to hold a Python container.

        A name bound to an expression of itself (`xs = list(xs)`) is not looked up again
        while its own bindings are examined: that binding answers from its other parts."""
        if name in self.facts.names or name in self._resolving:
            return None
        self._resolving.add(name)
        try:
            return self._name(name)
        finally:
            self._resolving.discard(name)

    def _name(self, name: str) -> str | None:
        star = self._starred(name)
        if star is not None:
            return star
        annotation = self._annotations.get(name)
        container = self._declared_container(annotation) if annotation is not None else None
        if container is not None:  # `xs: tuple[int, ...]`, or `xs: Shape` with `Shape = tuple[int, ...]` here or in the project
            shown = shorten(self.parsed.code(annotation), 40)  # type: ignore[arg-type]
            named = f", which names `{container}`" if container != shown else ""
            return f"`{name}` is annotated `{shown}`{named}, a Python container"
        if self._array_rows(name):
            return None  # `rows = list(x)`: a list of one array's rows, iterated a row per step
        values = self.local_values.get(name) or []
        if not values and name not in self._annotations:
            values = self._enclosing_values(name) or self._module_values(name)
        for value in values:
            if isinstance(value, cst.BaseExpression):
                found = self.iterable(value, 1) if not isinstance(value, cst.Name) else None
                if found or isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
                    return f"`{name}` {BOUND_TO_CONTAINER} `{shorten(self.parsed.code(value), 40)}`, a Python container"
        if name in self.facts._containers:
            return f"`{name}` is used as a Python container (`.append`, `.items()`, string keys)"
        return self._unpacked(name)

    def _array_rows(self, name: str) -> bool:
        """Whether `name` is bound only to a Python list whose items are arrays, one per row: the
        starred target of a call in `ARRAY_ROWS` (`key, *keys = jax.random.split(key, n)`), or a
        comprehension over an array's rows (`_array_items`)."""
        bound = False
        for node in descendants(self.func.body):
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    t = target.target
                    starred = isinstance(t, (cst.Tuple, cst.List)) and any(
                        isinstance(e, cst.StarredElement) and isinstance(e.value, cst.Name) and e.value.value == name
                        for e in t.elements
                    )
                    if starred and array_rows_call(node.value, self.parsed) is not None:
                        bound = True
                    elif isinstance(t, cst.Name) and t.value == name and self._array_items(node.value):
                        bound = True
                    elif name in stored_names(t):
                        return False
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For)) and name in stored_names(node.target):
                return False
        return bound

    def _array_items(self, value: cst.BaseExpression) -> bool:
        """A comprehension of arrays over the rows of an array (`[jnp.cos(r) for r in xs]`,
        `[f(xs[i]) for i in range(len(xs))]`): one item per step of a time axis. A list display, or
        a comprehension over a Python list (`[f(h) for h in hidden_dims]`, one item per layer),
        is not this evidence."""
        if self._rows_of_array(value):
            return True
        if not isinstance(value, cst.ListComp) or not self.facts.is_array(value.elt):
            return False
        source = value.for_in.iter
        if self.facts.is_array(source):
            return True
        if not (isinstance(source, cst.Call) and isinstance(source.func, cst.Name) and source.func.value == "range"):
            return False
        if len(source.args) != 1:
            return False
        count = source.args[0].value
        if isinstance(count, cst.Call) and isinstance(count.func, cst.Name) and count.func.value == "len" and count.args:
            return self.facts.is_array(count.args[0].value)
        return (
            isinstance(count, cst.Subscript)
            and isinstance(count.value, cst.Attribute)
            and count.value.attr.value == "shape"
            and self.facts.is_array(count.value.value)
        )

    def list_of_rows(self, expr: cst.BaseExpression, depth: int = 0) -> str | None:
        """The code of the Python list of an array's rows `expr` is (`list(x)`, `jnp.unstack(x)`,
        or a name bound only to such a list), else None. `lax.scan` takes a list as a pytree, one
        leaf per item, never as a sequence of rows, so no scan may step over it."""
        if self._rows_of_array(expr):
            return self.parsed.code(expr)
        if not isinstance(expr, cst.Name):
            return None
        values = self.local_values.get(expr.value) or []
        if self._starred(expr.value) is not None:
            return None  # `key, *keys = jax.random.split(key, n)`: the fix stacks the rows it reads
        if self._array_rows(expr.value):
            shown = next((v for v in values if isinstance(v, cst.BaseExpression)), expr)
            return self.parsed.code(shown)
        if len(values) == 1 and isinstance(values[0], cst.Name) and values[0].value != expr.value and depth < 4:
            return self.list_of_rows(values[0], depth + 1)  # `rows2 = rows`: the same list
        return None

    def _rows_of_array(self, value: cst.BaseExpression) -> bool:
        """A call whose result is a Python list of one array's rows or pieces along an axis:
        `list(x)` or `tuple(x)` of an array, `jnp.unstack(x)`, and `jnp.split(x, n)` along the
        first axis into a count of pieces that is not a literal of at most `FEW_PIECES` (`q, k,
        v`-style splits into a few named parts, splits at listed indices, and splits along another
        axis, such as heads along the features, stay containers). Stepping over it steps along
        the array's axis, as `for r in x` does."""
        if not (isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)) and value.args):
            return False
        qname = self.parsed.qualified_name(value.func) or ""
        first = value.args[0]
        if first.keyword is not None or first.star:
            return False
        if qname in ("builtins.list", "builtins.tuple"):
            return len(value.args) == 1 and self.facts.is_array(first.value)
        if qname == "jax.numpy.unstack":
            return True
        if qname in ("jax.numpy.split", "jax.numpy.array_split") and len(value.args) >= 2:
            axis = value.args[2].value if len(value.args) > 2 and value.args[2].keyword is None else next(
                (a.value for a in value.args if a.keyword is not None and a.keyword.value == "axis"), None)
            if axis is not None and not (isinstance(axis, cst.Integer) and int(axis.evaluated_value) == 0):
                return False  # pieces along another axis (heads, features): parts of each row, not rows
            pieces = value.args[1].value
            if isinstance(pieces, (cst.List, cst.Tuple)):
                return False  # split at listed indices: a few named parts
            return not (isinstance(pieces, cst.Integer) and int(pieces.evaluated_value) <= FEW_PIECES)
        return False

    def _starred(self, name: str) -> str | None:
        """`def f(*masks)` binds a tuple; `first, *rest = items` binds a list."""
        star = self.func.params.star_arg
        if isinstance(star, cst.Param) and star.name.value == name:
            return f"`{name}` is the `*{name}` parameter, a tuple of arguments"
        for node in descendants(self.func.body):
            if isinstance(node, cst.StarredElement) and isinstance(node.value, cst.Name) and node.value.value == name:
                parent = self.parsed.parent(node)
                if isinstance(parent, (cst.Tuple, cst.List)) and isinstance(self.parsed.parent(parent), cst.AssignTarget):
                    return f"`{name}` is bound by `*{name}` in an unpacking, a Python list"
        return None

    def _module_values(self, name: str) -> list[cst.BaseExpression | str]:
        """Values a module-level name is bound to (`COMB_TUNINGS = [1116, 1188, ...]`)."""
        if any(isinstance(a, cst.FunctionDef) and any(p.name.value == name for p in parameters(a))
               for a in self.parsed.ancestors(self.func)):
            return []
        out: list[cst.BaseExpression | str] = []
        for statement in self.parsed.module.body:
            if isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
                        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
                        if any(isinstance(t, cst.Name) and t.value == name for t in targets):
                            out.append(small.value)
        return out

    def passed_at_every_call(self, name: str) -> str | None:
        """A parameter every call of this function in the module passes a list or tuple literal
        (`refine([q, 2 * q], [g, g[::2]])`, `self.refine(...)` for a method): Python containers."""
        params = [p.name.value for p in (*self.func.params.posonly_params, *self.func.params.params)]
        if name not in params or name in ("self", "cls") or name in self._annotations:
            return None
        method = isinstance(self.parsed.parent(self.parsed.parent(self.func) or self.func), cst.ClassDef)
        position = params.index(name) - (1 if method and params[0] in ("self", "cls") else 0)
        own = self.func.name.value
        passed: list[cst.BaseExpression] = []
        for node in _calls_named(self.parsed, own):
            func = node.func
            if method:
                called = isinstance(func, cst.Attribute) and func.attr.value == own and isinstance(func.value, cst.Name) \
                    and func.value.value in ("self", "cls")
            else:
                called = isinstance(func, cst.Name) and func.value == own
            if not called:
                continue
            if any(a.star for a in node.args):
                return None
            keyword = [a.value for a in node.args if a.keyword is not None and a.keyword.value == name]
            positional = [a.value for a in node.args if a.keyword is None]
            value = keyword[0] if keyword else (positional[position] if 0 <= position < len(positional) else None)
            if isinstance(value, cst.Name):
                value = self._caller_literal(node, value.value)  # `order = [v for v in ...]`, then `f(order)`
            elif isinstance(value, cst.Attribute) and isinstance(value.value, cst.Name) and value.value.value == "self":
                value = self._attribute_literal(node, value.attr.value)  # `self.sizes = [2, 3]`, then `f(self.sizes)`
            if not isinstance(value, (cst.List, cst.Tuple, cst.ListComp)):
                return None  # a call passes something else, or relies on a default
            passed.append(value)
        if not passed:
            return None
        shown = shorten(self.parsed.code(passed[0]), 40)
        return f"`{name}` is passed a list or tuple literal at every call in this module (`{shown}`), a Python container"

    def _attribute_literal(self, call: cst.Call, attr: str) -> cst.BaseExpression | None:
        """The list or tuple literal `self.attr` is bound to in the class whose method makes `call`,
        when every store of it in the class is one (and a subclass cannot be seen to change it)."""
        klass = next((a for a in self.parsed.ancestors(call) if isinstance(a, cst.ClassDef)), None)
        if klass is None:
            return None
        if redeclared_by_subclass(self.parsed, klass, attr):
            return None  # a subclass may hold anything there
        stores = [value for _, value in self_assignments(klass, attr)]
        # List and tuple displays only: a comprehension may hold an array's rows (`[x[i] for i in ...]`).
        literals = [v for v in stores if isinstance(v, (cst.List, cst.Tuple))]
        return literals[0] if literals and len(literals) == len(stores) else None

    def _caller_literal(self, call: cst.Call, name: str) -> cst.BaseExpression | None:
        """The list or tuple literal (or list comprehension) `name` is bound to in the function
        that makes `call`, when every assignment of it there is one; else None."""
        caller = next((a for a in self.parsed.ancestors(call) if isinstance(a, cst.FunctionDef)), None)
        if caller is None:
            return None
        values = [
            node.value for node in descendants(caller.body)
            if isinstance(node, cst.Assign) and any(isinstance(t.target, cst.Name) and t.target.value == name for t in node.targets)
        ]
        if name in {p.name.value for p in parameters(caller)} or not values:
            return None
        literals = [v for v in values if isinstance(v, (cst.List, cst.Tuple, cst.ListComp))]
        return literals[0] if len(literals) == len(values) else None

    def _enclosing_values(self, name: str) -> list[cst.BaseExpression | str]:
        """Values a closure variable is bound to in the functions that enclose this one."""
        from jaxloopfix.analysis.loops import _enclosing_assignments

        return _enclosing_assignments(self.parsed, self.func, name)

    def _unpacked(self, name: str) -> str | None:
        """`leaves, treedef = jax.tree.flatten(tree)`, `groups, splits = unzip(d.items())`: a
        name unpacked from a pytree flatten (its leaves) or from a call over a Python container,
        here or in the nearest enclosing function that binds it."""
        from jaxloopfix.analysis.loops import _local_assignments

        scopes = [self.func, *(a for a in self.parsed.ancestors(self.func) if isinstance(a, cst.FunctionDef))]
        for scope in scopes:
            if any(p.name.value == name for p in parameters(scope)):
                return None
            for node in _own_descendants(scope.body):
                if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
                    found = self._unpacked_from(node, name)
                    if found:
                        return found
            if _local_assignments(scope).get(name):
                return None
        return None

    def _unpacked_from(self, node: cst.Assign, name: str) -> str | None:
        call = node.value
        assert isinstance(call, cst.Call)
        for target in node.targets:
            t = target.target
            if not isinstance(t, (cst.Tuple, cst.List)):
                continue
            positions = [i for i, e in enumerate(t.elements) if isinstance(e.value, cst.Name) and e.value.value == name]
            if not positions:
                continue
            code = shorten(self.parsed.code(call), 40)
            if self.parsed.qualified_name(call.func) in TREE_LEAVES and positions[0] == 0:
                return f"`{name}` is unpacked from `{code}`: the leaves of a pytree"
            if any(isinstance(arg.value, cst.Call) and self.iterable(arg.value, 1) for arg in call.args):
                return f"`{name}` is unpacked from `{code}`, built from a Python container"
        return None

    # -- what the body does ------------------------------------------------------------------
    def body(self, loop: cst.For, index: str | None, elements: list[str], trip_kind: str) -> str | None:
        return (
            (self._constructs_modules(loop) if trip_kind != "shape" else None)
            or self._items_are_objects(loop, elements)
            or self._indexes_containers(loop, index, trip_kind)
            or self._keyed_entries(loop, index, trip_kind)
            or self._items_are_keys(loop)
            or self._named_structure(loop, index)
            or self._attribute_per_step(loop, index)
            or self._no_array_work(loop)
            or self._keeps_nothing(loop)
            or self._builds_objects(loop)
            or (self._shifted_windows(loop, index) if trip_kind != "shape" else None)
            or self._ragged_helper(loop, index)
            or (self._python_int_shapes(loop) if trip_kind != "shape" else None)
            or (self._index_shapes(loop, index) if trip_kind != "shape" else None)
        )

    def _index_shapes(self, loop: cst.For, index: str | None) -> str | None:
        """Over a count that is not a sequence length, the index (or a name computed from it in
        the step) sets a shape: one slice bound while the other stays put (`y.at[l, :2 * l + 1]`,
        a width that grows with `l`), or a shape argument (`jnp.reshape(v, shape)` with `shape`
        built from it, `jnp.fft.fftfreq(sizes[i])`). Each step computes on a different shape:
        distinct computations (one per angular momentum, one per spatial axis), which a scan
        cannot stack, not steps along one array axis."""
        if index is None:
            return None
        nodes = _own_descendants(loop.body)
        derived: set[str] = {index}
        values: dict[str, list[cst.BaseExpression]] = {}
        for node in nodes:
            if isinstance(node, cst.Assign) and any(
                isinstance(n, cst.Name) and n.value in derived for n in descendants(node.value)
            ):
                derived |= {n for t in node.targets for n in stored_names(t.target)}
                for t in node.targets:
                    if isinstance(t.target, cst.Name):
                        values.setdefault(t.target.value, []).append(node.value)
        computed = {name: found[0] for name, found in values.items() if len(found) == 1 and name != index}
        opaque = derived - {index} - set(computed)

        def reads(expr: cst.CSTNode | None) -> bool:
            """`expr` reads the index or a name derived from it; `v.shape[0]` of a derived `v`
            whose shape is the same at every step (`v = x[i] - y[ids]`) reads no changing size."""
            return expr is not None and any(
                isinstance(n, cst.Name) and n.value in derived and not (n.value in steady and self._measured(n))
                for n in descendants(expr)
            )

        def ragged(window: cst.Slice) -> bool:
            """For a slice a bound of which reads the index: its width changes with the index
            (`slice_width`), else, where that cannot be told, one bound follows the index while the
            other stays put."""
            bounds = [b for b in (window.lower, window.upper) if b is not None]
            if not any(isinstance(n, cst.Name) and n.value in opaque for b in bounds for n in descendants(b)):
                varies = width_varies(window.lower, window.upper, index, computed, self.parsed.code)
                if varies is not None:
                    return varies
            return reads(window.lower) != reads(window.upper)

        def fixed_length_range(call: cst.Call) -> bool:
            """`jnp.arange(i * k, (i + 1) * k)`: a window of indices as wide at every step."""
            if self.parsed.qualified_name(call.func) not in ("jax.numpy.arange",):
                return False
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            if len(positional) != 2 or len(positional) != len(call.args):
                return False
            opaque_bound = any(isinstance(n, cst.Name) and n.value in opaque for b in positional for n in descendants(b))
            return not opaque_bound and width_varies(positional[0], positional[1], index, computed, self.parsed.code) is False

        # A derived name whose `.shape` is read keeps its shape from step to step only on positive
        # evidence (`_steady_names`): `lidar_feats = pos[i] - data[ids]` with `ids` a window of
        # fixed width; then its `.shape` is no changing size (`reads` above asks).
        steady = self._steady_names(nodes, index, derived, computed, opaque, fixed_length_range)

        for node in nodes:
            use: cst.CSTNode | None = None
            if isinstance(node, cst.Slice) and (reads(node.lower) or reads(node.upper)) and ragged(node):
                use = self.parsed.parent(self.parsed.parent(node)) or node
            elif isinstance(node, cst.Call) and not fixed_length_range(node):
                use = node if any(reads(arg.value) for arg in _shape_arguments(self.parsed, node)) else None
            if use is not None:
                return (
                    f"the index sets a shape each step (`{shorten(self.parsed.code(use), 40)}`) over a count that is not "
                    "a sequence length: each step computes on a different shape, distinct computations rather than "
                    "steps along one array axis"
                )
        return None

    def _steady_names(
        self, nodes: list[cst.CSTNode], index: str, derived: set[str],
        computed: dict[str, cst.BaseExpression], opaque: set[str], fixed_length_range: Callable[[cst.Call], bool],
    ) -> set[str]:
        """The names derived from the index whose shape is the same at every step, shown by
        their values read in the body's order: built from the index as an integer or array index
        (`x[i]`, `data[ids]`), from windows of a fixed width (`jnp.arange(i * k, (i + 1) * k)`),
        arithmetic, and JAX calls on such values whose shape arguments read only steady sizes
        (`jnp.concatenate([f, jnp.zeros((f.shape[0], 2))])`). Not a name carried from the step
        before (`acc = jnp.concatenate([acc, ...])` grows), nor the result of a project helper
        or of a call that splits unevenly (`jnp.array_split(x, n)[i]`)."""
        assigns = [
            n for n in nodes if isinstance(n, cst.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0].target, cst.Name) and n.targets[0].target.value in derived
        ]
        first: dict[str, cst.Assign] = {}
        for assign in assigns:
            first.setdefault(assign.targets[0].target.value, assign)  # type: ignore[attr-defined]
        state: dict[str, bool] = {}
        for name, assign in first.items():
            carried = any(
                isinstance(n, cst.Name) and n.value == name and n is not assign.targets[0].target
                and (self.parsed.order(n)[0] < self.parsed.order(assign)[0] or self.parsed.contains(assign.value, n))
                for n in nodes
            )
            state[name] = not carried

        def measured_steady(expr: cst.CSTNode) -> bool:
            return all(
                not (isinstance(n, cst.Name) and n.value in derived)
                or (n.value != index and state.get(n.value, False) and self._measured(n))
                for n in (expr, *descendants(expr))
            )

        def steady(expr: cst.BaseExpression) -> bool:
            if not any(isinstance(n, cst.Name) and n.value in derived for n in (expr, *descendants(expr))):
                return True
            if isinstance(expr, cst.Name):
                return expr.value == index or state.get(expr.value, False)
            if isinstance(expr, cst.Subscript):
                if isinstance(expr.value, cst.Call) and isinstance(expr.value.func, (cst.Name, cst.Attribute)) \
                        and (self.parsed.qualified_name(expr.value.func) or "").rsplit(".", 1)[-1] in UNEVEN_RESULTS:
                    return False  # `jnp.array_split(x, n)[i]`: the pieces differ in length
                return steady(expr.value) and all(
                    steady(e.slice.value) if isinstance(e.slice, cst.Index)
                    else width_varies(e.slice.lower, e.slice.upper, index, computed, self.parsed.code) is False
                    and not any(isinstance(n, cst.Name) and n.value in opaque for n in descendants(e.slice))
                    for e in expr.slice
                )
            if isinstance(expr, cst.BinaryOperation):
                return steady(expr.left) and steady(expr.right)
            if isinstance(expr, cst.UnaryOperation):
                return steady(expr.expression)
            if isinstance(expr, (cst.List, cst.Tuple)):
                return all(not isinstance(e, cst.StarredElement) and steady(e.value) for e in expr.elements)
            if isinstance(expr, cst.Attribute):
                return steady(expr.value)
            if isinstance(expr, cst.Call):
                if fixed_length_range(expr):
                    return True
                func = expr.func
                qualified = self.parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
                if qualified is not None and qualified.startswith("jax."):
                    if qualified.rsplit(".", 1)[-1] in UNEVEN_RESULTS:
                        return False
                elif not (qualified is None and isinstance(func, cst.Attribute) and steady(func.value)):
                    return False  # a project helper's result: its shape is not known here
                shapes = [id(a) for a in _shape_arguments(self.parsed, expr)]
                return all(
                    not a.star and (measured_steady(a.value) if id(a) in shapes else steady(a.value)) for a in expr.args
                )
            return False

        for assign in assigns:
            name = assign.targets[0].target.value  # type: ignore[attr-defined]
            state[name] = state[name] and steady(assign.value)
        return {name for name, ok in state.items() if ok}

    def _measured(self, name: cst.Name) -> bool:
        """`v.shape`, `v.ndim`, `v.size`, `len(v)`: `v`'s shape is read, not its values."""
        parent = self.parsed.parent(name)
        if isinstance(parent, cst.Attribute) and parent.value is name:
            return parent.attr.value in ("shape", "ndim", "size")
        call = self.parsed.parent(parent) if isinstance(parent, cst.Arg) else None
        return isinstance(call, cst.Call) and self.parsed.qualified_name(call.func) == "builtins.len"

    def _python_int_shapes(self, loop: cst.For) -> str | None:
        """`frequency = 1`, then `frequency *= lacunarity` each step and `(frequency * res[0], ...)`
        passed on: a Python integer that changes every step and sets a shape (a tuple argument, a
        slice bound, a `shape=`): each step is a different computation (octaves at doubling
        resolution), not one step along an array axis."""
        nodes = _own_descendants(loop.body)
        updates: dict[str, list[cst.BaseExpression]] = {}
        augmented: dict[str, int] = {}
        for node in nodes:
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                updates.setdefault(node.target.value, []).append(node.value)
                augmented[node.target.value] = augmented.get(node.target.value, 0) + 1
            elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                updates.setdefault(node.targets[0].target.value, []).append(node.value)
        for name, values in sorted(updates.items()):
            known = self.local_values.get(name, [])
            if sum(v == "unknown" for v in known) != augmented.get(name, 0):
                continue  # augmented outside the loop too
            before = [v for v in known if v != "unknown" and not any(v is u for u in values)]
            if not before or not all(isinstance(v, cst.Integer) for v in before):
                continue
            if not all(self._python_int(v, name) for v in values):
                continue
            for node in nodes:
                use = self._shape_use(node, name)
                if use is not None:
                    return (
                        f"the Python integer `{name}` changes every step and sets a shape (`{shorten(self.parsed.code(use), 40)}`): "
                        "each step is a different computation, not one step along an array axis"
                    )
        return None

    def _python_int(self, expr: cst.BaseExpression, carried: str) -> bool:
        """Whether `expr` is integer arithmetic on `carried`, integer literals, and parameters
        whose default is an integer literal."""
        defaults = {p.name.value: p.default for p in parameters(self.func, stars=False)}
        for node in descendants(expr):
            if isinstance(node, cst.Name):
                default = defaults.get(node.value)
                if node.value != carried and not isinstance(default, cst.Integer):
                    return False
            elif not isinstance(node, (cst.Integer, cst.BinaryOperation, cst.BaseBinaryOp, cst.LeftParen, cst.RightParen)):
                if not isinstance(node, (cst.TrailingWhitespace, cst.SimpleWhitespace)):
                    return False
            if isinstance(node, (cst.Divide, cst.Power)):
                return False  # `/` makes a float; `**` of a negative exponent too
        return True

    def _shape_use(self, node: cst.CSTNode, name: str) -> cst.CSTNode | None:
        """`node` when it is a shape-like use of `name`: a tuple call argument, a slice bound, or a
        `shape=`/`size=`/`num=` keyword."""
        def reads(expr: cst.CSTNode | None) -> bool:
            return expr is not None and any(isinstance(n, cst.Name) and n.value == name for n in descendants(expr))

        if isinstance(node, cst.Arg):
            if isinstance(node.value, cst.Tuple) and reads(node.value):
                return node.value
            if node.keyword is not None and node.keyword.value in ("shape", "size", "num", "length") and reads(node.value):
                return node
        if isinstance(node, cst.Slice) and (reads(node.lower) or reads(node.upper)):
            return node
        return None

    def _ragged_helper(self, loop: cst.For, index: str | None) -> str | None:
        """`_block_det(x, i, n)` where the helper slices `x[k + 1:n]` with its parameter, marks it
        static or takes it as an axis (`helper_structure`): each step computes on a different
        shape, or along a different axis, distinct computations the helper's author wrote per index. The helper is a
        function of this module or one imported from another project module, called directly or
        bound by `functools.partial(helper, offset=i)`."""
        if index is None:
            return None
        for helper, param in self._index_parameters(loop, index, unwrap_partial=True):
            why = structural_use(helper, param)
            if why is not None:
                return f"the index `{index}` is passed to `{helper.name}` as `{param}`, {why}"
        return None

    def _index_parameters(self, loop: cst.For, index: str, *, unwrap_partial: bool = False, nested: bool = False
                          ) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
        """Each helper the body passes the index to by name, with the parameter that receives it
        (by keyword or by position): the helper's own code says what the index does there.
        Helpers are this module's or another project module's functions (`nested`: also those
        defined inside the analysed function); `unwrap_partial` reads `functools.partial(helper,
        i)` as passing `i` to the helper."""
        for node in _own_descendants(loop.body):
            if not isinstance(node, cst.Call):
                continue
            target, args = node.func, list(node.args)
            if unwrap_partial and isinstance(target, (cst.Name, cst.Attribute)) \
                    and self.parsed.qualified_name(target) in PARTIAL and args:
                target, args = args[0].value, args[1:]  # `partial(f, a)` binds `a` to f's first parameter
            elif not unwrap_partial and not isinstance(target, (cst.Name, cst.Attribute)):
                continue
            helper = self._helper_function(target) or (self._nested_function(target) if nested else None)
            if helper is None:
                continue
            params = positional_parameters(helper)
            for position, arg in enumerate(args):
                if arg.star or not (isinstance(arg.value, cst.Name) and arg.value.value == index):
                    continue
                param = arg.keyword.value if arg.keyword is not None else (
                    params[position] if position < len(params) else None
                )
                if param is not None:
                    yield helper, param

    def _helper_function(self, target: cst.BaseExpression) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The definition `target` calls: a module-level function of this module (not the one
        analysed), or one another project module defines (asked of the project pass)."""
        if isinstance(target, cst.Name):
            for statement in self.parsed.module.body:
                if isinstance(statement, cst.FunctionDef) and statement.name.value == target.value:
                    return None if statement is self.func else parse_function(self.parsed.code(statement))
        text = self._declared_elsewhere(target)
        return parse_function(text) if text is not None else None

    def _shifted_windows(self, loop: cst.For, index: str | None) -> str | None:
        """`x[:, start:end]` with bounds that shift with the index over a count that is not a
        sequence length: a shift-and-accumulate unroll (a convolution over its width, n-step
        windows). Chunks `x[i * k:(i + 1) * k]` are not evidence: they step along the axis."""
        if index is None:
            return None
        shifted: set[str] = {index}
        chunked: set[str] = set()
        nodes = _own_descendants(loop.body)
        for node in nodes:
            if not isinstance(node, cst.Assign):
                continue
            reads = {n.value for n in descendants(node.value) if isinstance(n, cst.Name)}
            names = {n for t in node.targets for n in stored_names(t.target)}
            if reads & chunked or (index in reads and _multiplies(node.value, index)):
                chunked |= names
            elif reads & shifted:
                shifted |= names
        step = _range_step(self.parsed, loop.iter)
        for node in nodes:
            if isinstance(node, cst.Slice):
                bounds = [b for b in (node.lower, node.upper) if b is not None]
                reads = {n.value for b in bounds for n in descendants(b) if isinstance(n, cst.Name)}
                if step is not None and _window_of_step(self.parsed, node, index, step):
                    continue  # `range(0, n, mb)` and `perm[s:s + mb]`: windows side by side, chunks of the axis
                if bounds and reads & shifted and not reads & chunked and not any(_multiplies(b, index) for b in bounds):
                    window = self.parsed.parent(self.parsed.parent(node))
                    code = shorten(self.parsed.code(window), 40) if window is not None else "a slice"
                    return (
                        f"its slice bounds shift with the index (`{code}`) over a count that is not a sequence "
                        "length: a shift-and-accumulate unroll (a convolution's width, n-step windows)"
                    )
        return None

    def _constructs_modules(self, loop: cst.For) -> str | None:
        for node in _own_descendants(loop.body):
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            target = func.func if isinstance(func, cst.Call) else func
            if not isinstance(target, (cst.Name, cst.Attribute)):
                continue
            lifted = isinstance(func, cst.Call) and self.parsed.qualified_name(target) in LINEN_LIFTS
            if lifted or self._names_module_class(target) or self._helper_constructs(target) or self._aliased_module(target) \
                    or self._library_layer(target, node):
                return (
                    f"each step constructs the module `{self.parsed.code(target)}(...)`: a stack of distinct layers, "
                    "not one step applied along an array axis"
                )
        return None

    def _aliased_module(self, target: cst.BaseExpression, depth: int = 0) -> bool:
        """`make = functools.partial(Block, ...)` or `Block = layers.Block` before the loop, then
        `make(...)(x)`: every binding of the name is a module class, or a partial of one."""
        if not isinstance(target, cst.Name) or depth > 2:
            return False
        scope = self.parsed.scope(target)
        try:
            bindings = [getattr(a, "node", None) for a in scope[target.value]] if scope is not None else []
        except Exception:  # noqa: BLE001 - a name libcst cannot look up is just unknown
            return False
        values = [_assigned_value(self.parsed, b) if isinstance(b, cst.Name) else None for b in bindings]
        if not values or any(v is None for v in values):
            return False
        for value in values:
            if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)) and value.args \
                    and self.parsed.qualified_name(value.func) == "functools.partial":
                value = value.args[0].value
            if not isinstance(value, (cst.Name, cst.Attribute)):
                return False
            if not (self._names_module_class(value) or self._aliased_module(value, depth + 1)):
                return False
        return True

    def _names_module_class(self, expr: cst.Name | cst.Attribute) -> bool:
        """`nn.Dense`, `hk.Linear` (a capitalised name of a framework package) or a module class
        of this module or the project."""
        if layer_base(self.parsed.qualified_name(expr)) is not None or self.is_module_class(expr):
            return True
        default = self._field_default(expr)
        return isinstance(default, (cst.Name, cst.Attribute)) and self._names_module_class(default)

    def _class_field(self, expr: cst.BaseExpression) -> cst.AnnAssign | cst.Assign | None:
        """`self.layer` where the enclosing class declares `layer: T = v` or `layer = v` at class
        level (a field of the module): that statement."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        cls = next((a for a in self.parsed.ancestors(self.func) if isinstance(a, cst.ClassDef)), None)
        if cls is None:
            return None
        for statement in cls.body.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                        and small.target.value == expr.attr.value:
                    return small
                if isinstance(small, cst.Assign) and len(small.targets) == 1 \
                        and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value == expr.attr.value:
                    return small
        return None

    def _field_default(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """`self.layer` where the class declares `layer: type = nn.Dense` (or `layer = nn.Dense`):
        the default value of that class field, a class the module is configured with."""
        field = self._class_field(expr)
        return field.value if field is not None else None

    def _declared_field(self, expr: cst.BaseExpression) -> bool:
        """`self.block_cls` where the class declares `block_cls: T` at class level (a dataclass
        field of the module), not a method."""
        return isinstance(self._class_field(expr), cst.AnnAssign)

    def _library_layer(self, target: cst.BaseExpression, call: cst.Call) -> bool:
        """`ResBlock(64, name=f"block{j}")(x)`: a class from a package outside the project (its
        name capitalised, not JAX's or NumPy's) built and called at once, in a framework module's
        method or given a `name=`: a submodule, a different layer each step. A class of the
        project is not guessed at: its framework is known (`is_module_class`)."""
        if not isinstance(call.func, cst.Call):
            return False  # built here and called at once: `Block(...)(x)`
        if self.module is not None and self._declared_field(target):
            return True  # `self.block_cls(width)(x)` with `block_cls: ModuleDef`: a class the module is given
        qname = self.parsed.qualified_name(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if not qname or "." not in qname or qname.startswith(("jax.", "numpy.", "builtins.", "functools.")):
            return False  # not imported (a local class or an unknown name), or a JAX/standard one
        if self.site is not None and self.site.absolute(qname) is not None:
            return False  # a project class: decided from its bases instead
        if in_layer_package(qname):
            return layer_base(qname) is not None  # the package says (`hk.BatchApply` wraps a module)
        name = qname.rpartition(".")[2]
        if not (name[:1].isupper() and any(c.islower() for c in name)):
            return False
        named = any(arg.keyword is not None and arg.keyword.value == "name" for arg in call.func.args)
        return named or self.module is not None

    def _helper_constructs(self, target: cst.BaseExpression, depth: int = 0) -> bool:
        """`ncsn_conv3x3(x, ...)` where that module-level function builds and calls a module."""
        if not isinstance(target, cst.Name) or depth > 2:
            return False
        defs = [s for s in self.parsed.module.body if isinstance(s, cst.FunctionDef) and s.name.value == target.value]
        if len(defs) != 1 or defs[0] is self.func:
            return False
        for node in _own_descendants(defs[0].body):
            if isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)):
                if self._names_module_class(node.func):
                    return True
        return False

    def _items_are_objects(self, loop: cst.For, elements: list[str]) -> str | None:
        """`for layer in layers: x = layer(x)` / `d.log_prob(v)`: the items are callables or objects."""
        if not elements:
            return None
        for node in _own_descendants(loop.body):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in elements:
                return f"each item `{node.func.value}` is called like a function (a sequence of layers or functions)"
            if (
                isinstance(node, cst.Subscript)
                and isinstance(node.value, cst.Name)
                and node.value.value in elements
                and any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.FormattedString))
                        for e in node.slice)
            ):
                return f"each item is indexed by a string key (`{shorten(self.parsed.code(node), 40)}`): a sequence of dicts such as layer parameters"
            if (
                isinstance(node, cst.Attribute)
                and isinstance(node.value, cst.Name)
                and node.value.value in elements
                and not _array_attribute(node.attr.value)
            ):
                return f"each item's attribute `{self.parsed.code(node)}` is read (a sequence of objects, not array slices)"
            if (
                isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value in AXIS_PARAMETERS
                and isinstance(node.value, cst.Name) and node.value.value in elements
            ):
                call = self.parsed.parent(node)
                shown = shorten(self.parsed.code(call.func), 30) if isinstance(call, cst.Call) else "a call"
                return (
                    f"each item `{node.value.value}` is an axis (`{node.keyword.value}=` of `{shown}`): the items are "
                    "axis numbers, each step works along a different axis (a static structure)"
                )
            if (
                isinstance(node, cst.For) and node is not loop
                and isinstance(node.iter, cst.Name) and node.iter.value in elements
                and isinstance(node.target, cst.Name)
            ):
                inner = self._items_are_objects(node, [node.target.value])
                if inner is not None:
                    return f"each item `{node.iter.value}` is iterated by an inner loop, where {inner}: a nesting of objects"
        return None

    def _indexes_containers(self, loop: cst.For, index: str | None, trip_kind: str) -> str | None:
        """`self.layers[i](x)`, `heads[i](x)`, `parts[i]` of a local list: the index selects
        items of a Python container. Yields to a proven array indexed by the same index."""
        if index is None:
            return None
        found: str | None = None
        array_read = False
        for node in _own_descendants(loop.body):
            if not isinstance(node, cst.Subscript) or not _indexed_by(node, index):
                continue
            parent = self.parsed.parent(node)
            code = shorten(self.parsed.code(node), 40)
            if isinstance(parent, cst.Call) and parent.func is node:
                # A different function or module per step: never one scan step.
                return f"the index selects `{code}`, which is called (a list of layers or functions)"
            if (self.facts.is_array(node.value) or (
                isinstance(node.value, cst.Attribute) and node.value.attr.value == "at" and self.facts.is_array(node.value.value)
            )) and not self._only_through_containers(node, index):
                array_read = True  # strong evidence of array work wins over the weaker kinds below
            if found is not None:
                continue
            if (
                isinstance(parent, cst.Subscript)
                and parent.value is node
                and any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.FormattedString))
                        for e in parent.slice)
            ):
                found = f"the index selects `{code}`, which is indexed by a string key (a list of dicts such as layer parameters)"
            elif isinstance(parent, cst.Assign) and any(isinstance(t.target, (cst.Tuple, cst.List)) for t in parent.targets):
                found = f"the index selects `{code}`, which is unpacked into several names (a list of tuples such as layer parameters)"
            elif isinstance(parent, cst.Attribute) and parent.value is node and not _array_attribute(parent.attr.value):
                found = f"the index selects `{code}`, whose attribute `.{parent.attr.value}` is read (a list of objects)"
            elif isinstance(node.value, cst.Name) and self._array_rows(node.value.value):
                array_read = True  # `key, *keys = jax.random.split(key, n)`: a list of arrays, one per step
            elif isinstance(node.value, cst.Name) and self.name(node.value.value):
                found = f"{SELECTS_ITEMS} `{node.value.value}`: {self.name(node.value.value)}"
            elif (held := self._attribute_list(node.value)) is not None and not self._index_to_jax(loop, index):
                found = f"{SELECTS_ITEMS} `{self.parsed.code(node.value)}`: {held}"
        if found is not None and (trip_kind == "shape" or array_read or self._window_helper(loop, index)):
            return None
        return found

    def _window_helper(self, loop: cst.For, index: str) -> bool:
        """`read_block(x, b)` in the body, where the helper (of this module, nested in this
        function, or another project module's) slices a window with both bounds computed from
        the index (`helper_structure.reads_window`): the index reads one block of an array per
        step, a step along its axis, as `x[:, b * k:(b + 1) * k]` in the body would."""
        return any(reads_window(helper, param) for helper, param in self._index_parameters(loop, index, nested=True))

    def _nested_function(self, target: cst.BaseExpression) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """A function defined inside the analysed one under the name `target` calls."""
        if not isinstance(target, cst.Name):
            return None
        for node in descendants(self.func.body):
            if isinstance(node, cst.FunctionDef) and node.name.value == target.value:
                return parse_function(self.parsed.code(node))
        return None

    def _index_to_jax(self, loop: cst.For, index: str) -> bool:
        """The index handed to a JAX function (`jnp.take(x, i, axis=0)`,
        `lax.dynamic_index_in_dim(y, i)`): it selects array data as well as list items."""
        for node in _own_descendants(loop.body):
            if isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)) \
                    and any(isinstance(a.value, cst.Name) and a.value.value == index for a in node.args) \
                    and (self.parsed.qualified_name(node.func) or "").startswith("jax."):
                return True
        return False

    def _attribute_list(self, expr: cst.BaseExpression) -> str | None:
        """`self.weights` where every store of the attribute in the class (and no subclass here
        redeclares it) is a list or tuple built in the method that stores it: a display or a
        comprehension, or a local name bound only to one (`ws = []`, appended to, then
        `self.weights = ws`, one per layer or body order). In words, else None."""
        if not (isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"):
            return None
        klass = next((a for a in self.parsed.ancestors(self.func) if isinstance(a, cst.ClassDef)), None)
        if klass is None or redeclared_by_subclass(self.parsed, klass, expr.attr.value):
            return None
        stores = self_assignments(klass, expr.attr.value)
        if not stores:
            return None
        for method, value in stores:
            if isinstance(value, cst.Name):
                bound = [node.value for node in descendants(method.body) if isinstance(node, cst.Assign)
                         and any(isinstance(t.target, cst.Name) and t.target.value == value.value for t in node.targets)]
                if not bound or not all(isinstance(v, LIST_BUILDS) for v in bound):
                    return None
            elif not isinstance(value, LIST_BUILDS):
                return None
        return f"the attribute is a Python list or tuple built in `{stores[0][0].name.value}` (one item per layer or order)"

    def _only_through_containers(self, node: cst.Subscript, index: str) -> bool:
        """`grid.at[doors[i][0]]` with `doors` a Python container: the array is indexed by what
        the index selects from the container (a Python value), never by the index itself."""
        uses = [n for element in node.slice for n in descendants(element.slice) if isinstance(n, cst.Name) and n.value == index]
        for use in uses:
            selector = self.parsed.parent(self.parsed.parent(self.parsed.parent(use)))  # Name <- Index <- SubscriptElement <- Subscript
            if not (isinstance(selector, cst.Subscript) and isinstance(selector.value, cst.Name) and self.name(selector.value.value)):
                return False
        return bool(uses)

    def _no_array_work(self, loop: cst.For) -> str | None:
        """A body with no arithmetic, no call into JAX and no call of a function, module or
        method beyond Python's own container and string helpers builds Python structure only
        (shape lists, names, pytree bookkeeping): nothing array-valued is unrolled. A counter
        stepped by a literal (`s_cnt += 1`) only picks the next item of a sequence.

        Text is Python structure too: string concatenation (`label += "</b>"`), and calls whose
        result is formatted into an f-string (`f"{keystr(key)}"`). So is a call of the function
        itself (`out.extend(walk(sub))`: a recursive walk over nested structure, whose own loops
        are judged on their own) and a call that only reads static metadata (`jax.typeof(x)`).
        Element-wise logic on comparisons (`(a < b) | m`) is array work: Python logic is `and`/`or`."""
        recursive = False
        wrapper = ""
        host = ""
        python_arithmetic = False
        nodes = _own_descendants(loop.body)
        # What a host-only call computes with (`np.sin(np.arange(4) * k)`) is host values too:
        # a tracer there would raise.
        inside_host = {
            id(inner) for node in nodes if isinstance(node, cst.Call) and self._host_call(node)
            for arg in node.args for inner in descendants(arg)
        }
        for node in nodes:
            if id(node) in inside_host:
                continue
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitOr, cst.BitAnd)) and any(
                isinstance(side, cst.Comparison) for side in (node.left, node.right)
            ):
                return None  # `(xk < yk) | ((xk == yk) & p)`: element-wise logic on masks (Python writes `and`/`or`)
            if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, (cst.BitOr, cst.BitAnd)):
                if not _text_operation(node):
                    if not self.is_python(node):
                        return None
                    python_arithmetic = True  # `len(shape) - 1 - k`: Python ints (`python_values` names them)
            if isinstance(node, cst.AugAssign) and not (
                isinstance(node.operator, cst.AddAssign) and _text_value(node.value)
            ) and not (  # a Python counter (`s_cnt += 1`) picking the next item
                isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)) and isinstance(node.value, cst.Integer)
            ) and not (  # `rows += [(i, j)]`: a Python list grows, as `append` does
                isinstance(node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.ListComp))
            ):
                return None
            if isinstance(node, cst.Subscript) and self._gathers(node):
                return None  # `parent[element]`: an array indexed by an array, a gather per step
            if isinstance(node, cst.Call):
                if self._formatted(node, loop):
                    continue
                func = node.func
                qname = self.parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
                if qname is not None and qname.startswith("builtins.") and qname.rsplit(".", 1)[-1] in PYTHON_HELPERS:
                    continue
                if isinstance(func, cst.Attribute) and func.attr.value in PYTHON_METHODS:
                    continue
                if isinstance(func, cst.Name) and func.value == self.func.name.value:
                    recursive = True
                    continue
                name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
                if name in METADATA_FUNCTIONS:
                    continue
                if self._host_call(node):
                    host = host or shorten(self.parsed.code(func), 30)
                    continue
                if (qname is not None and _wraps_function(qname)) or self._rewraps_itself(node, name):
                    wrapper = wrapper or name
                    continue
                return None
        if recursive:
            return (
                f"each step calls `{self.func.name.value}` itself and nothing else computes: a recursive walk "
                "over nested structure (its own loops are judged on their own)"
            )
        if wrapper:
            return (
                f"each step only wraps a function (`{wrapper}`): nothing is computed until the wrapped "
                "function is called, once, after the loop"
            )
        if python_arithmetic:
            return None  # Python int arithmetic: `python_values` decides from the kinds it stores
        if host:
            return (
                f"each step calls only NumPy, SciPy or `math` (`{host}`) and Python's own helpers: they compute on "
                "host values (a tracer passed to them raises), so nothing traced is unrolled"
            )
        return f"{NO_ARRAY_OPERATION} (no arithmetic, no JAX call, no function or module call): it builds Python structure or text"

    def _gathers(self, node: cst.Subscript) -> bool:
        """`parent[element]`, `table[idx, :]`: an array indexed by an array (by their kinds) is a
        gather, array work in each step, whatever else the body does."""
        if not self.is_array(node.value):
            return False
        return any(
            isinstance(e.slice, cst.Index) and not isinstance(e.slice.value, (cst.Integer, cst.SimpleString))
            and self.is_array(e.slice.value)
            for e in node.slice
        )

    def _host_call(self, call: cst.Call) -> bool:
        """A call of NumPy, SciPy or `math` that raises when handed a tracer (`host_libraries`)."""
        func = call.func
        qname = self.parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        return qname is not None and computes_on_host(qname)

    def _rewraps_itself(self, call: cst.Call, name: str) -> bool:
        """`f = e3nn.utils.vmap(f)`: a transform of another library (named as JAX's are) applied
        to the function the same statement rebinds: each step wraps the function once more."""
        if name not in FUNCTION_WRAPPERS or not call.args or not isinstance(call.args[0].value, cst.Name):
            return False
        statement = self.parsed.parent(call)
        return (
            isinstance(statement, cst.Assign) and statement.value is call and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name)
            and statement.targets[0].target.value == call.args[0].value.value
        )

    def _formatted(self, node: cst.CSTNode, loop: cst.For) -> bool:
        """Inside an f-string's `{...}`: the value is turned into text."""
        for ancestor in self.parsed.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, cst.FormattedStringExpression):
                return True
        return False

    def _builds_objects(self, loop: cst.For) -> str | None:
        """`layers.append(MaskedDense(mask))`, `flows.append(Transform(arn))`: each step builds an
        object (a layer, a transform) and no arithmetic runs outside `if` tests and constructor
        arguments: a model is being assembled, not array data stepped through."""
        built: str | None = None
        for node in _own_descendants(loop.body):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "append":
                value = node.args[0].value if node.args else None
                if isinstance(value, cst.Call) and _constructor(value.func):
                    built = built or self.parsed.code(value.func)
        if built is None or not isinstance(loop.body, cst.IndentedBlock):
            return None
        index = loop.target.value if isinstance(loop.target, cst.Name) else None
        if index is not None and any(
            isinstance(n, cst.Subscript) and _indexed_by(n, index) and self.facts.is_array(n.value)
            for n in _own_descendants(loop.body)
        ):
            return None  # `EdgeBlock(feats[i], ...)`: each object holds a row of an array, one per step
        flow = block_flow(list(loop.body.body), defined=stored_names(loop.target))
        for node in _own_descendants(loop.body):
            if isinstance(node, cst.Assign):
                names = {n for t in node.targets for n in stored_names(t.target)}
                if names & flow.assigned & flow.read_first and not isinstance(node.value, (cst.Name, cst.Integer)):
                    return None  # state carried through a call (`h = cell(h, x)`): a recurrence
            if isinstance(node, cst.BinaryOperation) and not self._inside_test_or_constructor(node, loop):
                return None
            if isinstance(node, cst.Call) and isinstance(node.func, (cst.Name, cst.Attribute)):
                qname = self.parsed.qualified_name(node.func) or ""
                if qname.startswith(("jax.", "numpy.")) and not self._inside_test_or_constructor(node, loop):
                    return None
        return f"each step builds an object (`{built}(...)`) and appends it: assembling layers or transforms, not array work"

    def _inside_test_or_constructor(self, node: cst.CSTNode, loop: cst.For) -> bool:
        for ancestor in self.parsed.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and self.parsed.contains(ancestor.test, node):
                return True  # `if i > 0:`, `"gated" if i < n - 1 else None`
            if isinstance(ancestor, cst.Call) and _constructor(ancestor.func):
                return True
        return False

    def _keeps_nothing(self, loop: cst.For) -> str | None:
        """A body that stores nothing (no assignment, no item or attribute store, no `append`)
        and only makes calls whose results it discards: argument checks, barriers, prints.
        There is no value to carry or stack; a pure call's result is dead code under `jit`."""
        calls = 0
        for node in _own_descendants(loop.body):
            if discards_result(node):
                continue  # `check(x)` or `_ = check(x)`: kept by nobody; its call is counted below
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.Del, cst.AsName,
                                 cst.Return, cst.Yield, cst.Await, cst.Global, cst.Nonlocal)):
                return None
            if isinstance(node, (cst.For, cst.While, cst.With)):
                return None
            if isinstance(node, cst.Call):
                func = node.func
                if isinstance(func, cst.Attribute) and func.attr.value in MUTATING_METHODS:
                    return None
                if not discards_result(self.parsed.parent(node)):
                    continue  # an argument of a discarded call, or a test
                calls += 1
        if not calls:
            return None
        return f"{KEEPS_NOTHING} (checks, barriers, prints): no value is computed per step"

    def python_level(self, loop: cst.For) -> str | None:
        """The first construct in the body that only Python-level code uses: an early `return`
        (a search), `yield`, `raise`, `try`, `:=`, `del`, or a store into an outer object
        (`counts[k] = ...`, `out.extend(...)`). On its own it is a reason to refuse a fix; with
        nothing in the loop known to be an array, it is evidence of checks, searches and
        bookkeeping over Python values."""
        assigned = {n for node in _own_descendants(loop.body) if isinstance(node, cst.Assign)
                    for t in node.targets for n in stored_names(t.target) if isinstance(t.target, cst.Name)}
        assigned |= stored_names(loop.target)
        words = {cst.Return: "returns from the function", cst.Yield: "yields", cst.Raise: "raises",
                 cst.Try: "catches exceptions", cst.NamedExpr: "uses `:=`", cst.Del: "deletes names",
                 cst.Global: "declares `global` names", cst.Nonlocal: "declares `nonlocal` names"}
        for node in _own_descendants(loop.body):
            for kind, word in words.items():
                if isinstance(node, kind):
                    return f"the body {word}"
            targets: list[cst.BaseExpression] = []
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
                targets = [node.target]
            for target in targets:
                # An item store into an outer dict or list (`counts[axis] = ...`); attribute stores
                # (`self.state.value = h`) are how module state is written, not evidence.
                if isinstance(target, cst.Subscript):
                    root = _root(target)
                    if root is not None and root not in assigned and root != "self":
                        return f"the body stores into the outer object `{root}` (`{shorten(self.parsed.code(target), 30)}`)"
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                if node.func.attr.value in BOOKKEEPING_METHODS:
                    root = _root(node.func.value)
                    if root is not None and root not in assigned:
                        return f"the body fills the outer object `{root}` (`.{node.func.attr.value}(...)`)"
        return None

    def _attribute_per_step(self, loop: cst.For, index: str | None) -> str | None:
        """`getattr(self, f"block_{i}")`: a different attribute (submodule) every step."""
        if index is None:
            return None
        for node in _own_descendants(loop.body):
            if (
                isinstance(node, cst.Call)
                and self.parsed.qualified_name(node.func) == "builtins.getattr"
                and len(node.args) >= 2
                and string_from(node.args[1].value, index)
            ):
                return f"each step fetches a different attribute (`{shorten(self.parsed.code(node), 40)}`): distinct submodules, a stack of layers"
        return None

    def _items_are_keys(self, loop: cst.For) -> str | None:
        """`for k in pred: pred[k] - target[k]`: the item indexes the very collection it is drawn
        from, which is what a mapping's keys do (an array's row would index the array by its
        values); `getattr(weights, k)`: the item names an attribute, a string. Each step takes
        a different entry of a dict or pytree, not a step along an array axis."""
        items = stored_names(loop.target) if isinstance(loop.target, cst.Name) else set()
        if not items:
            return None
        source = self.parsed.code(loop.iter)
        for node in _own_descendants(loop.body):
            if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                key = node.slice[0].slice.value
                if isinstance(key, cst.Name) and key.value in items and self.parsed.code(node.value) == source:
                    return (
                        f"each item indexes `{shorten(source, 30)}`, the collection it comes from "
                        f"(`{shorten(self.parsed.code(node), 30)}`): the keys of a mapping, a different entry each step"
                    )
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("getattr", "hasattr", "setattr") \
                    and len(node.args) >= 2 and isinstance(node.args[1].value, cst.Name) and node.args[1].value.value in items:
                return f"each item names an attribute (`{shorten(self.parsed.code(node), 30)}`): a string, not an array row"
        return None

    def _keyed_entries(self, loop: cst.For, index: str | None, trip_kind: str) -> str | None:
        """`d[f"{key}_{i}"] = v[i]` as the whole body: one dict entry per step (a pytree built by
        name), not a computation along the axis. Over an array's axis (`range(x.shape[0])`) only
        when each entry just takes a row (`metrics[f"loss_{i}"] = values[i]`, taking the array
        apart): an entry computed per row (`out[f"pnl_{i}"] = r[i].sum()`) is a step of work
        along the axis, however it is named."""
        if index is None:
            return None
        body = loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ()
        if not body:
            return None
        for statement in body:
            if not isinstance(statement, cst.SimpleStatementLine):
                return None
            for small in statement.body:
                if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                    return None
                target = small.targets[0].target
                if not (isinstance(target, cst.Subscript) and len(target.slice) == 1):
                    return None
                key = target.slice[0].slice
                if not (isinstance(key, cst.Index) and string_from(key.value, index)):
                    return None
                if trip_kind == "shape" and not _takes_a_row(small.value):
                    return None
        return "each step stores its value under a key built from the index (a dict of named entries, one per step)"


    def _named_structure(self, loop: cst.For, index: str | None) -> str | None:
        """`self.param(f"b_{i}", ...)`, `self.subs[f"osc_{i}"](x)`, `params[f"Dense_{i}"]`,
        `Block(name=f"block{i}")`: a name built from the index (inline or bound to a name first)
        declares a parameter or picks a submodule or entry by text, a different piece of named
        structure each step (a layer stack), not a step along an array axis."""
        if index is None:
            return None
        nodes = _own_descendants(loop.body)
        # `name = f"Dense_{i}"`: names bound to a string built from the index, then used as keys.
        keys = {
            t.target.value for node in nodes if isinstance(node, cst.Assign) and string_from(node.value, index)
            for t in node.targets if isinstance(t.target, cst.Name)
        }

        def index_string(expr: cst.BaseExpression) -> bool:
            return string_from(expr, index) or (isinstance(expr, cst.Name) and expr.value in keys)

        for node in nodes:
            name = None
            if isinstance(node, cst.Call):
                declares = isinstance(node.func, cst.Attribute) and node.func.attr.value in DECLARING_METHODS
                for position, arg in enumerate(node.args):
                    keyword = arg.keyword.value if arg.keyword is not None else None
                    if (keyword == "name" or (declares and position == 0 and keyword is None)) \
                            and index_string(arg.value):
                        name = arg.value
            elif isinstance(node, cst.Subscript) and len(node.slice) == 1 \
                    and not isinstance(self.parsed.parent(node), cst.AssignTarget):
                key = node.slice[0].slice
                if isinstance(key, cst.Index) and index_string(key.value):
                    # `self.subs[f"osc_{i}"](x)`, `params[name]["kernel"]`: a text key selects from a
                    # Python container (no array takes a string index): a named layer or entry. A
                    # store under such a key (`info[f"h_{i}"] = h`) only names an output: no evidence.
                    name = key.value
            if name is not None:
                return (
                    f"{NAMED_STRUCTURE} (`{shorten(self.parsed.code(name), 30)}`): a parameter or submodule "
                    "per step, not a step along an array axis"
                )
        return None


def _calls_named(parsed: ParsedModule, name: str) -> list[cst.Call]:
    """The calls of this module whose callee's last name is `name` (`f(...)`, `self.f(...)`),
    indexed once per text."""
    kept = parsed.kept("calls by name")
    if "index" not in kept:
        index: dict[str, list[cst.Call]] = {}
        for node in parsed.nodes:
            if type(node) is cst.Call:
                func = node.func
                last = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
                if last is not None:
                    index.setdefault(last, []).append(node)
        kept["index"] = index
    return kept["index"].get(name, [])


# Methods that store into the object they are called on.
MUTATING_METHODS = frozenset(
    {"append", "extend", "insert", "update", "add", "setdefault", "put", "put_nowait", "write", "appendleft",
     "extendleft", "__setitem__", "set", "remove", "pop", "discard", "clear", "sort", "reverse"}
)


def _range_step(parsed: ParsedModule, expr: cst.BaseExpression) -> str | None:
    """The step of `range(start, stop, step)`, as code."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and len(expr.args) == 3:
        if parsed.qualified_name(expr.func) == "builtins.range":
            return parsed.code(expr.args[2].value)
    return None


def _window_of_step(parsed: ParsedModule, window: cst.Slice, index: str, step: str) -> bool:
    """`x[s:s + step]` (or `x[s:min(s + step, n)]`) over `range(a, b, step)`: a window exactly one
    step wide, so consecutive windows do not overlap."""
    lower, upper = window.lower, window.upper
    if not (isinstance(lower, cst.Name) and lower.value == index and upper is not None):
        return False
    text = "".join(parsed.code(upper).split())
    return text in (f"{index}+{step}", f"{step}+{index}") or text.startswith((f"min({index}+{step},", f"min({step}+{index},"))


def _constructor(func: cst.BaseExpression) -> bool:
    """`MaskedDense`, `dist.Normal`: a CapWords name, a class by PEP 8 (not an ALL_CAPS constant)."""
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name[:1].isupper() and not name.isupper()


# `str.split`-like methods: with a string argument they return a list of strings.
STRING_SPLITS = frozenset({"split", "rsplit", "splitlines", "partition", "rpartition"})
# Standard-library modules whose functions return Python values (paths, strings, objects).
HOST_MODULES = frozenset({"glob", "os", "re", "pathlib", "inspect", "importlib", "pkgutil", "sys", "shlex", "fnmatch"})


# Functions that return a value's static description (its abstract value), never array data.
METADATA_FUNCTIONS = frozenset({"typeof", "get_aval", "shaped_abstractify", "eval_shape", "ShapeDtypeStruct"})
# Transforms that return a new function and compute nothing themselves (`f = jax.vmap(f)`).
FUNCTION_WRAPPERS = frozenset(
    {"vmap", "jit", "pmap", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "checkpoint", "remat",
     "custom_jvp", "custom_vjp", "filter_jit", "filter_vmap", "filter_grad", "filter_value_and_grad"}
)


def _assigned_value(parsed: ParsedModule, target: cst.Name) -> cst.BaseExpression | None:
    """The value of a plain `name = value` statement that binds `target`."""
    parent = parsed.parent(target)
    assign = parsed.parent(parent) if isinstance(parent, cst.AssignTarget) else None
    return assign.value if isinstance(assign, cst.Assign) and len(assign.targets) == 1 else None


def _wraps_function(qname: str) -> bool:
    """`jax.vmap`, `jax._src.api.vmap`, `equinox.filter_jit`, `functools.partial`: a call that only builds a function."""
    if qname == "functools.partial":
        return True
    root, last = qname.partition(".")[0], qname.rsplit(".", 1)[-1]
    return root in ("jax", "equinox") and last in FUNCTION_WRAPPERS


def _text_value(expr: cst.BaseExpression) -> bool:
    """A string literal, an f-string, or a concatenation with one."""
    if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    return isinstance(expr, cst.BinaryOperation) and _text_operation(expr)


def _text_operation(node: cst.BinaryOperation) -> bool:
    """`": " + name`, `"%d" % n`: an operation that builds a string."""
    if isinstance(node.operator, cst.Add):
        return _text_value(node.left) or _text_value(node.right)
    if isinstance(node.operator, cst.Modulo):
        return isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString))
    return False


# Methods that fill a dict or set; `append`/`extend` build the lists a scan would stack.
BOOKKEEPING_METHODS = frozenset({"update", "add", "setdefault", "discard", "remove", "insert"})


# Flax linen's `nn.map_variables(f, ...)(self.child, x)` built and applied in a step runs a
# module with that step's view of its variables (a slice of stacked layer parameters: a layer
# per step); other lifts (`nn.remat(cell_fn)(cell, h, x[t])`) apply one shared module per step.
LINEN_LIFTS = frozenset({"flax.linen.map_variables"})

# A list or tuple built where it is bound: a display or a list comprehension.
LIST_BUILDS = (cst.List, cst.Tuple, cst.ListComp)


def _takes_a_row(value: cst.BaseExpression) -> bool:
    """`values[i]`, `x[:, i]`, `h`: a name or an item of one, no operation or call on it."""
    while isinstance(value, (cst.Subscript, cst.Attribute)):
        if isinstance(value, cst.Subscript) and any(
            isinstance(n, (cst.Call, cst.BinaryOperation)) for e in value.slice for n in descendants(e)
        ):
            return False
        value = value.value
    return isinstance(value, cst.Name)


def _root(expr: cst.BaseExpression) -> str | None:
    """`counts` for `counts[k]`, `self.cache[k].items`; None for a call's result."""
    while isinstance(expr, (cst.Subscript, cst.Attribute)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


# JAX calls whose result's shape depends on the values or on which piece is taken (`jnp.array_split`
# pieces differ by a row, `jnp.nonzero` has as many entries as the data has): never steady.
UNEVEN_RESULTS = frozenset({"split", "array_split", "hsplit", "vsplit", "dsplit", "nonzero", "argwhere", "flatnonzero",
                            "unique", "extract", "compress", "where", "repeat", "unstack"})
# jnp functions whose first argument is a shape or a length (`fftfreq(n)`), and those taking a
# shape second (`reshape(a, shape)`, `broadcast_to(a, shape)`).
SHAPE_FIRST_CALLS = frozenset(
    {"zeros", "ones", "empty", "full", "eye", "identity", "arange", "tri", "fftfreq", "rfftfreq", "hanning",
     "hamming", "blackman", "bartlett", "kaiser"}
)
SHAPE_SECOND_CALLS = frozenset({"reshape", "broadcast_to", "resize", "tile"})
SHAPE_KEYWORDS = frozenset({"shape", "newshape", "size", "num", "length", "n", "reps"})


def _shape_arguments(parsed: ParsedModule, call: cst.Call) -> list[cst.Arg]:
    """The arguments of a `jax.numpy` call (or an array's `.reshape(...)`) that are shapes or
    lengths: static values, a new shape per step when they change."""
    func = call.func
    qname = parsed.qualified_name(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keyword = [a for a in call.args if a.keyword is not None and a.keyword.value in SHAPE_KEYWORDS]
    if qname is not None and qname.startswith("jax."):
        short = qname.rsplit(".", 1)[-1]
        if short in SHAPE_FIRST_CALLS:
            return positional[:1] + keyword
        if short in SHAPE_SECOND_CALLS:
            return positional[1:2] + keyword
        return []
    if qname is None and isinstance(func, cst.Attribute) and func.attr.value == "reshape":
        return positional + keyword  # `x.reshape(shape)`, `x.reshape(n, -1)`
    return []


def _multiplies(expr: cst.BaseExpression, index: str) -> bool:
    """`i * k` somewhere in `expr` with the index as a factor: a chunk offset."""
    for node in descendants(expr):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            sides = (node.left, node.right)
            if any(isinstance(side, cst.Name) and side.value == index for side in sides):
                return True
    return False


def _rooted_at_self(expr: cst.BaseExpression) -> bool:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value in {"self", "cls"}


def _container_annotation(annotation: cst.BaseExpression) -> bool:
    node = annotation.value if isinstance(annotation, cst.Subscript) else annotation
    name = node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else None
    if name in SATISFIED_BY_ARRAYS and isinstance(annotation, cst.Subscript) and any(
        isinstance(e.slice, cst.Index) and _names_array(e.slice.value) for e in annotation.slice
    ):
        return False  # `Iterable[jax.Array]`: an array iterating its rows is one too (not a `Sequence`)
    if isinstance(node, cst.Attribute):
        return node.attr.value in CONTAINER_ANNOTATIONS
    if isinstance(node, cst.Name):
        return node.value in CONTAINER_ANNOTATIONS
    if isinstance(annotation, cst.BinaryOperation):  # `list[X] | None`
        return _container_annotation(annotation.left) or _container_annotation(annotation.right)
    return False


def _declared_message(declared: str, container: str, owner: str) -> str:
    declared = shorten(declared, 40)
    named = f", which names `{container}`" if container != declared else ""
    return f"declared `{declared}` on class `{owner}`{named}: a Python container"


def _parse_annotation(text: str) -> cst.BaseExpression | None:
    try:
        return cst.parse_expression(text)
    except (cst.ParserSyntaxError, RecursionError, ValueError):
        return None


def _array_attribute(name: str) -> bool:
    return name in ARRAY_ATTRIBUTES or name in ARRAY_METHODS or name in {"real", "imag", "size", "mT", "item"}


def _indexed_by(node: cst.Subscript, index: str) -> bool:
    """`x[t]`, `x[t + 1, :]`: an item selected by the index. A key built as text from it
    (`info[f"h_{t}"]`) names a dict entry; it selects nothing by position."""
    for element in node.slice:
        s = element.slice
        if isinstance(s, cst.Index) and string_from(s.value, index):
            continue
        if isinstance(s, cst.Index) and any(isinstance(n, cst.Name) and n.value == index for n in descendants(s.value)):
            return True
        if isinstance(s, cst.Index) and isinstance(s.value, cst.Name) and s.value.value == index:
            return True
    return False


def string_from(expr: cst.BaseExpression, index: str) -> bool:
    """An f-string, `"...".format(...)` or `str(...)` concatenation that reads `index`."""
    reads = any(isinstance(n, cst.Name) and n.value == index for n in descendants(expr))
    if not reads:
        return False
    if isinstance(expr, cst.FormattedString):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format":
        return isinstance(expr.func.value, cst.SimpleString)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Modulo)):
        return isinstance(expr.left, (cst.SimpleString, cst.FormattedString)) or isinstance(
            expr.right, (cst.SimpleString, cst.FormattedString)
        )
    return False


def _own_descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Descendants outside nested function definitions and classes."""
    out: list[cst.CSTNode] = []

    class Walk(cst.CSTVisitor):
        def on_visit(self, inner: cst.CSTNode) -> bool:
            if inner is not node and isinstance(inner, (cst.FunctionDef, cst.ClassDef)):
                return False
            out.append(inner)
            return True

    node.visit(Walk())
    return out


__all__ = ["ContainerEvidence", "stored_names"]



# Calls whose result, unpacked into a starred target, is a list of arrays: `key, *keys =
# jax.random.split(key, n)`, `first, *chunks = jnp.split(x, k)`. The value is whether every item
# is proven to share one shape and dtype (the rows of one array).
ARRAY_ROWS = {
    "jax.random.split": True,
    "jax._src.random.split": True,
    "jax.numpy.unstack": True,
    "jax.numpy.split": False,
    "jax.numpy.array_split": False,
    "jax.numpy.vsplit": False,
    "jax.numpy.hsplit": False,
}


def array_rows_call(value: cst.BaseExpression, parsed: ParsedModule) -> bool | None:
    """For a call in `ARRAY_ROWS`, whether its items share one shape and dtype; None for any other value."""
    if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
        return None
    return ARRAY_ROWS.get(parsed.qualified_name(value.func) or "")

