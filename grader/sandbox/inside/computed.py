"""What a script computed, recorded while it runs: the values of its calls, the operands and
results of its arithmetic, and the locals of its functions when they end.

The worker compiles the submission from a rewritten syntax tree (``instrument``):

- a call ``f(x)`` becomes ``<call>(site, f, f(x))``: the call itself is unchanged, its result
  is handed to the recorder on the way out with the name the call starts from (``plt`` in
  ``plt.gca().get_xticks()``, loaded before the call as the call loads it; ``None`` when it
  starts from no name): the value of a call into a display library (its module, or an
  object it made: sandbox/inside/display.py) is the library's work, never recorded, and the
  arrays it gives are not sent as the script's (``n, bins, _ = plt.hist(x)``), unless
  a call of the script's own gave the same array;
- arithmetic ``a + b`` becomes ``<arith>(site, a, b)``: the recorder does the operation
  (``operator.add``: the same as ``+``) and keeps both operands and the result; so does
  ``x += y``, for a name, an item (``a[i] += y``: the item and the whole ``a``, before and
  after) or an attribute (``obj.x += y``), with the old values copied first (the operation
  may change them in place);
- a call of an ``add`` (``np.add(a, b, out=a)``, ``tf.add``, ``torch.add``) with two
  arguments becomes ``<addcall>(site, np.add, a, b, ...)``: the recorder copies both
  arguments, makes the call and keeps its result (an addition, as ``a + b``);
- the body of every function becomes ``try: BODY finally: <exit>(site, <locals>())``: its
  locals (the builtin ``locals``, called in its own frame) when it returns or raises.

Why the source and not a profile hook (``sys.setprofile``; this Python has no
``sys.monitoring``): the source must be rewritten anyway to see inline arithmetic, a hook
pays on every Python call in the process (numpy's own included) on top of that, and a
script can replace it; rewritten code pays only at the script's own calls, operators and
functions (a Python loop of the script's runs a few times slower; numpy's work is
untouched), and stays rewritten whatever hook the script installs. The worker installs no
hook, so none is there to be taken for the script's. The recorder's names (``<call>``,
``<arith>``, ...) are not identifiers: the submission's source cannot define, call or
shadow them. Line numbers are kept, so tracebacks point where they did. Annotations and
``match`` patterns are left alone (they are not run, or must stay literal).

The recorder keeps a copy of the last array-like value of each site (a loop costs no memory
per pass): numpy arrays of numbers and framework tensors (converted to numpy when recorded),
never any other object (holding one would keep it alive: a file unflushed, a generator's
``finally`` not run), never an array larger than what one answer may carry, and within two
byte budgets, one for arrays of the shapes the task's checks want (the grader sends only
those shapes) and one for the rest, so big arrays never crowd the wanted ones out. A copy,
because the script may change an array after it was recorded (``batch[:] = 0``). What is
sent back, and in which order (``candidates``), is decided after
the run by the worker, within the answer's caps. Whatever a submission makes the recorder
hold, it had: the checks judge those values as they judge its globals, so reaching the
recorder (through ``globals()``, itself refused by the imports check) earns nothing.
"""

from __future__ import annotations

import ast
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Any

import numpy as np

CALL, ARITH, AUG, EXIT, LOCALS = "<call>", "<arith>", "<aug>", "<exit>", "<locals>"
AUG_ITEM, AUG_ATTRIBUTE, ADD_CALL, SLICE = "<aug-item>", "<aug-attribute>", "<add-call>", "<slice>"
NUMBER_KINDS = frozenset("biufc")  # dtype kinds kept (an object array holds objects)
CODE_CHARS = 200  # characters of an expression's source kept to name it
DRAWN_CAP = 4096  # arrays of display libraries' calls remembered (by identity)

OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.MatMult: operator.matmul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
}
IN_PLACE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.iadd,
    ast.Sub: operator.isub,
    ast.Mult: operator.imul,
    ast.MatMult: operator.imatmul,
    ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod,
    ast.Pow: operator.ipow,
    ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift,
    ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
    ast.BitAnd: operator.iand,
}

# Values that are never arrays: not kept (checked by exact type: no student code runs).
NOT_ARRAYS = frozenset(
    {
        type(None),
        bool,
        int,
        float,
        complex,
        str,
        bytes,
        bytearray,
        range,
        slice,
        dict,
        set,
        frozenset,
        FunctionType,
        BuiltinFunctionType,
        ModuleType,
        type,
        type(Ellipsis),
        type(NotImplemented),
    }
)


@dataclass(frozen=True)
class Site:
    """One place in the source whose values are recorded."""

    kind: str  # call | arith | aug | aug-item | aug-attribute | add-call | exit
    line: int
    column: int
    codes: tuple[str, ...]  # call: (call,); arith, add-call: (whole, left, right); aug,
    # aug-attribute: (whole, target, value); aug-item: (whole,
    # target, value, container); exit: (function name,)
    nested: bool = False  # inside a function (or lambda) of the script
    operation: Callable[[Any, Any], Any] | None = None
    addition: bool = False  # its values are the operands and result of an addition


# --------------------------------------------------------------------------- rewriting


def instrument(source: str, path: str) -> tuple[Any, list[Site]]:
    """The submission compiled from its rewritten tree, and the sites it records. Raises
    SyntaxError as ``compile`` would on the original."""
    tree = ast.parse(source, path)
    rewriter = _Rewriter(source)
    tree = ast.fix_missing_locations(rewriter.visit(tree))
    return compile(tree, path, "exec", dont_inherit=True), rewriter.sites


def _name(identifier: str) -> ast.Name:
    return ast.Name(id=identifier, ctx=ast.Load())


def _is_add_call(node: ast.Call) -> bool:
    """``np.add(a, b, ...)``, ``tf.add``, ``torch.add``, ``add(a, b)``: two plain arguments."""
    name = (
        node.func.attr
        if isinstance(node.func, ast.Attribute)
        else node.func.id
        if isinstance(node.func, ast.Name)
        else ""
    )
    return name == "add" and len(node.args) == 2 and not any(isinstance(a, ast.Starred) for a in node.args)


def _as_value(index: ast.expr) -> ast.expr:
    """A subscript's index as an expression that can be passed on: ``a:b`` as a slice."""
    if isinstance(index, ast.Slice):
        bounds = [
            part if part is not None else ast.Constant(None)
            for part in (index.lower, index.upper, index.step)
        ]
        return ast.copy_location(ast.Call(_name(SLICE), bounds, []), index)
    if isinstance(index, ast.Tuple):
        return ast.copy_location(ast.Tuple([_as_value(e) for e in index.elts], ast.Load()), index)
    return index


def _root(node: ast.expr) -> str | None:
    """The name a call's function is reached from (``plt`` in ``plt.gca().get_xticks``,
    ``axes`` in ``axes[0].plot``), or None."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _mangled(attribute: str) -> bool:
    """``self.__x`` in a class is renamed by the compiler: getattr would miss it."""
    return attribute.startswith("__") and not attribute.endswith("__")


class _Rewriter(ast.NodeTransformer):
    def __init__(self, source: str):
        self.lines = source.encode("utf-8").splitlines(keepends=True)
        self.sites: list[Site] = []
        self.depth = 0  # functions and lambdas around the node visited

    def _site(
        self, node: ast.AST, kind: str, codes: tuple[str, ...], operation=None, addition: bool = False
    ) -> ast.Constant:
        self.sites.append(
            Site(
                kind,
                getattr(node, "lineno", 0),
                getattr(node, "col_offset", 0),
                codes,
                self.depth > 0,
                operation,
                addition,
            )
        )
        return ast.Constant(len(self.sites) - 1)

    def _code(self, node: ast.AST) -> str:
        """The node's source text (columns are UTF-8 offsets), on one line, clipped."""
        try:
            first, last = node.lineno - 1, node.end_lineno - 1  # type: ignore[attr-defined]
            start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
            if first == last:
                data = self.lines[first][start:end]
            else:
                data = b"".join(
                    [self.lines[first][start:], *self.lines[first + 1 : last], self.lines[last][:end]]
                )
            text = " ".join(data.decode("utf-8", "replace").split())
        except (AttributeError, IndexError, TypeError):
            text = "?"
        return text[:CODE_CHARS]

    def visit_Call(self, node: ast.Call) -> ast.AST:
        code = self._code(node)
        if _is_add_call(node):
            codes = (code, self._code(node.args[0]), self._code(node.args[1]))
            self.generic_visit(node)
            site = self._site(node, "add-call", codes, addition=True)
            return ast.copy_location(
                ast.Call(_name(ADD_CALL), [site, node.func, *node.args], node.keywords), node
            )
        root = _root(node.func)
        self.generic_visit(node)
        site = self._site(node, "call", (code,))
        owner = _name(root) if root is not None else ast.Constant(None)
        return ast.copy_location(ast.Call(_name(CALL), [site, owner, node], []), node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        codes = (self._code(node), self._code(node.left), self._code(node.right))
        self.generic_visit(node)
        site = self._site(node, "arith", codes, OPERATORS[type(node.op)], isinstance(node.op, ast.Add))
        return ast.copy_location(ast.Call(_name(ARITH), [site, node.left, node.right], []), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        target = node.target
        codes = (self._code(node), self._code(target), self._code(node.value))
        self.generic_visit(node)
        operation, addition = IN_PLACE[type(node.op)], isinstance(node.op, ast.Add)
        if isinstance(target, ast.Name):
            site = self._site(node, "aug", codes, operation, addition)
            value = ast.Call(_name(AUG), [site, _name(target.id), node.value], [])
            return ast.copy_location(ast.Assign([ast.Name(id=target.id, ctx=ast.Store())], value), node)
        if isinstance(target, ast.Subscript):
            site = self._site(node, "aug-item", codes + (self._code(target.value),), operation, addition)
            call = ast.Call(_name(AUG_ITEM), [site, target.value, _as_value(target.slice), node.value], [])
            return ast.copy_location(ast.Expr(call), node)
        if isinstance(target, ast.Attribute) and not _mangled(target.attr):
            site = self._site(node, "aug-attribute", codes, operation, addition)
            call = ast.Call(
                _name(AUG_ATTRIBUTE), [site, target.value, ast.Constant(target.attr), node.value], []
            )
            return ast.copy_location(ast.Expr(call), node)
        return node  # (a private name, mangled by the compiler: left as it is)

    def visit_FunctionDef(self, node):  # (and AsyncFunctionDef)
        returns, node.returns = node.returns, None  # annotations are not rewritten
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        node.returns = returns
        site = self._site(node, "exit", (node.name[:CODE_CHARS],))
        record = ast.Expr(ast.Call(_name(EXIT), [site, ast.Call(_name(LOCALS), [], [])], []))
        body = node.body
        docstring = (
            body[:1]
            if (
                isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            )
            else []
        )
        rest = body[len(docstring) :] or [ast.Pass()]
        node.body = docstring + [ast.Try(body=rest, handlers=[], orelse=[], finalbody=[record])]
        return node  # (the new nodes take the def's line: ast.fix_missing_locations)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node  # its annotation is not rewritten

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        node.target = self.visit(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        if node.guard is not None:  # the pattern must stay literal
            node.guard = self.visit(node.guard)
        node.body = [self.visit(statement) for statement in node.body]
        return node


# --------------------------------------------------------------------------- recording


class Recorder:
    """Receives what the rewritten code hands over; keeps a copy of the last array-like
    values of each site (see the module's docstring for which, and the byte budgets)."""

    def __init__(
        self,
        sites: list[Site],
        largest_bytes: int,
        wanted: tuple = (),
        drawn_by: Callable[[Any], bool] | None = None,
    ):
        self.sites = sites
        self.largest_bytes = largest_bytes  # an array larger than this is never sent: not kept
        self.wanted = frozenset(tuple(shape) for shape in wanted)  # the shapes the checks want
        self.values: dict[Any, tuple] = {}  # site -> its last values (see ROLES)
        self.locals: dict[int, dict] = {}  # exit site -> the function's last locals
        # Whether a call's owner is a display library's (display.made_by_display); the
        # arrays such calls gave (kept, so that their ids stay theirs), and the ids of the
        # last array each of the script's own call sites gave.
        self.drawn_by = drawn_by
        self.drawn: dict[int, Any] = {}
        self.own_ids: dict[int, int] = {}

    def drawn_ids(self) -> frozenset[int]:
        """The ids of arrays a display library's call gave that no call of the script's
        own gave last at its site: not the script's work."""
        return frozenset(self.drawn) - frozenset(self.own_ids.values())

    def names(self) -> dict[str, Any]:
        """What the rewritten code calls, bound in the namespace it runs in: closures over
        this recorder's sites (bound once here: a call of the script's costs little)."""
        values, locals_at_exit, largest = self.values, self.locals, self.largest_bytes
        wanted, drawn_by, drawn, own_ids = self.wanted, self.drawn_by, self.drawn, self.own_ids
        operations = [site.operation for site in self.sites]
        ndarray, array, modules = np.ndarray, np.array, sys.modules
        spent = [0, 0]  # bytes held: of wanted shapes, of the others
        held_bytes: dict[Any, tuple[int, int]] = {}  # site (or exit site, name) -> its share

        def tensor_classes() -> tuple:
            """The framework tensor classes of the frameworks the script has imported."""
            found = []
            for module, names in (("torch", ("Tensor",)), ("tensorflow", ("Tensor", "Variable"))):
                loaded = modules.get(module)
                namespace = vars(loaded) if type(loaded) is ModuleType else {}
                for name in names:
                    cls = namespace.get(name)
                    if issubclass(type(cls), type):  # (torch's and tf's classes have metaclasses)
                        found.append(cls)
            return tuple(found)

        def copied(value):
            """A numpy copy of an array of numbers or a framework tensor, else None."""
            kind = type(value)
            if kind is float or kind is int or kind is bool or kind is str or value is None:
                return None
            if type(kind) is type and kind in NOT_ARRAYS:  # (a metaclass's __hash__ is not called)
                return None
            if not issubclass(kind, ndarray):
                tensors = tensor_classes()
                if not tensors or not issubclass(kind, tensors):
                    return None
                try:  # the framework's own conversion (torch: detach, cpu; tf: numpy)
                    value = value.detach().cpu().numpy() if hasattr(value, "detach") else value.numpy()
                except Exception:
                    return None
                if not isinstance(value, ndarray):
                    return None
            dtype = value.dtype
            if (
                dtype.kind not in NUMBER_KINDS
                or dtype.fields is not None
                or value.size * dtype.itemsize > largest
            ):
                return None
            return array(value, copy=True, subok=False)

        def hold(key, kept: tuple) -> None:
            """Keep ``kept`` (copies or None) as ``key``'s values, within the budgets."""
            old = held_bytes.pop(key, (0, 0))
            spent[0] -= old[0]
            spent[1] -= old[1]
            share = [0, 0]
            fitting = []
            for value in kept:
                if value is not None:
                    which = 0 if value.shape in wanted else 1
                    if spent[which] + share[which] + value.nbytes > largest:
                        value = None
                    else:
                        share[which] += value.nbytes
                fitting.append(value)
            spent[0] += share[0]
            spent[1] += share[1]
            held_bytes[key] = (share[0], share[1])
            values[key] = tuple(fitting)

        def draw(value) -> None:
            """Remember the arrays a display library's call gave (itself, or in a tuple)."""
            items = value if type(value) in (tuple, list) and len(value) <= 16 else (value,)
            for item in items:
                if isinstance(item, ndarray) and len(drawn) < DRAWN_CAP:
                    drawn[id(item)] = item

        def call(site, owner, value):
            kind = type(value)
            if not (kind is float or kind is int or kind is bool or kind is str or value is None):
                if owner is not None and drawn_by is not None and drawn_by(owner):
                    draw(value)
                    return value
                kept = copied(value)
                if kept is not None:
                    hold(site, (kept,))
                    own_ids[site] = id(value)
            return value

        def arith(site, left, right):
            result = operations[site](left, right)
            kind = type(result)
            if not (kind is float or kind is int or kind is bool or kind is str):
                hold(site, (copied(result), copied(left), copied(right)))
            return result

        def augmented(site, target, value):
            before = copied(target)  # (a copy: x += y may change x in place)
            result = operations[site](target, value)
            hold(site, (copied(result), before, copied(value)))
            return result

        def augmented_item(site, container, key, value):
            whole_before = copied(container)
            item = container[key]
            before = copied(item)
            result = operations[site](item, value)
            container[key] = result
            hold(site, (copied(result), before, copied(value), copied(container), whole_before))

        def augmented_attribute(site, owner, name, value):
            item = getattr(owner, name)
            before = copied(item)
            result = operations[site](item, value)
            setattr(owner, name, result)
            hold(site, (copied(result), before, copied(value)))

        def add_call(site, function, left, right, /, **keywords):
            operands = (copied(left), copied(right))  # before: out= may be one of them
            result = function(left, right, **keywords)
            hold(site, (copied(result), *operands))
            return result

        def exit(site, names):
            found = {}
            for name, value in names.items():
                kind = type(value)
                if kind is float or kind is int or kind is bool or kind is str or value is None:
                    continue
                if drawn and id(value) in drawn and id(value) not in own_ids.values():
                    continue  # an array a display library gave
                if type(name) is str:
                    kept = copied(value)
                    if kept is not None:
                        found[name] = kept
            hold(("locals", site), tuple(found.values()))
            kept_now = dict(zip(found, values.pop(("locals", site))))
            locals_at_exit[site] = {name: v for name, v in kept_now.items() if v is not None}

        return {
            CALL: call,
            ARITH: arith,
            AUG: augmented,
            AUG_ITEM: augmented_item,
            AUG_ATTRIBUTE: augmented_attribute,
            ADD_CALL: add_call,
            EXIT: exit,
            LOCALS: locals,
            SLICE: slice,
        }


def _operator_codes() -> frozenset:
    names = Recorder([], 0).names()
    return frozenset({names[name].__code__ for name in (ARITH, AUG, AUG_ITEM, AUG_ATTRIBUTE, ADD_CALL)})


# The code of the recorder's functions that do the script's arithmetic (its operators run
# in their frames: worker.RuntimeEvidence sees through them).
OPERATOR_CODES = _operator_codes()


# What each value of a site is, in the order of its values.
ROLES = {
    "call": ("call",),
    "arith": ("result", "left", "right"),
    "add-call": ("result", "left", "right"),
    "aug": ("result", "before", "right"),
    "aug-attribute": ("result", "before", "right"),
    "aug-item": ("result", "before", "right", "whole", "whole-before"),
}
PRIORITY = {
    "call": 0,
    "result": 0,
    "whole": 0,
    "left": 1,
    "right": 1,
    "before": 1,
    "whole-before": 1,
    "local": 2,
}


@dataclass(frozen=True)
class Candidate:
    role: str  # call | result | left | right | before | whole | whole-before | local
    site: Site
    name: str  # the local's name (role local), else ""
    value: Any
    record: int = -1  # the site whose one recording it belongs to (an addition's operands
    # and result share it), -1 for a local


def candidates(recorder: Recorder) -> list[Candidate]:
    """Everything recorded, most telling first: values of calls and results of arithmetic,
    then operands, then functions' locals; in each group, the script's top level before its
    functions (a helper's result is named where it is called: ``table(4, 6)``, not by the
    ``return`` inside), then source order."""
    found: list[Candidate] = []
    sites = recorder.sites
    # (The script can reach the recorder, say through globals(): what it handed over is
    # taken only where it fits a site, as the rewritten code hands it.)
    for index, values in list(recorder.values.items()):
        site = sites[index] if type(index) is int and 0 <= index < len(sites) else None
        if site is not None and site.kind in ROLES and type(values) is tuple:
            found += [
                Candidate(role, site, "", value, index)
                for role, value in zip(ROLES[site.kind], values)
                if value is not None
            ]
    for index, names in list(recorder.locals.items()):
        site = sites[index] if type(index) is int and 0 <= index < len(sites) else None
        if site is not None and site.kind == "exit" and type(names) is dict:
            found += [Candidate("local", site, name, value) for name, value in names.items()]
    found.sort(key=lambda c: (PRIORITY[c.role], c.site.nested, c.site.line, c.site.column))
    return found


def describe(candidate: Candidate) -> dict:
    """The plain data that names a candidate on the wire (the grader words it)."""
    site = candidate.site
    codes = site.codes
    at = {
        "call": 0,
        "result": 0,
        "local": 0,
        "left": 1,
        "before": 1,
        "right": 2,
        "whole": 3,
        "whole-before": 3,
    }[candidate.role]
    code = codes[at] if at < len(codes) else ""
    return {
        "what": candidate.role,
        "line": int(site.line),
        "code": code[:CODE_CHARS],
        "name": candidate.name[:100],
        "record": candidate.record,
        "addition": bool(site.addition),
    }
