"""How a script is rewritten so that what it computes is recorded (computed.py records it).

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
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CALL, ARITH, AUG, EXIT, LOCALS = "<call>", "<arith>", "<aug>", "<exit>", "<locals>"
AUG_ITEM, AUG_ATTRIBUTE, ADD_CALL, SLICE = "<aug-item>", "<aug-attribute>", "<add-call>", "<slice>"
CODE_CHARS = 200  # characters of an expression's source kept to name it

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
    def __init__(self, source: str) -> None:
        self.lines = source.encode("utf-8").splitlines(keepends=True)
        self.sites: list[Site] = []
        self.depth = 0  # functions and lambdas around the node visited

    def _site(
        self,
        node: ast.AST,
        kind: str,
        codes: tuple[str, ...],
        operation: Callable[[Any, Any], Any] | None = None,
        addition: bool = False,
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

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:  # (and Async)
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
