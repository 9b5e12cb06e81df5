"""What a script computed, recorded while it runs: the values of its calls, the operands and
results of its arithmetic, and the locals of its functions when they end.

The worker compiles the submission from a rewritten syntax tree (``instrument``):

- a call ``f(x)`` becomes ``<call>(site, f(x))``: the call itself is unchanged, its result
  is handed to the recorder on the way out;
- arithmetic ``a + b`` becomes ``<arith>(site, a, b)``: the recorder does the operation
  (``operator.add``: the same as ``+``) and keeps both operands and the result; so does
  ``x += y`` for a plain name, with the old value of an array copied first (the operation
  may change it in place);
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

The recorder keeps the last array-like value of each site (a loop costs no memory per
pass), never a Python number, string or None, and never an array larger than what one
answer may carry; what is sent back, and in which order (``candidates``), is decided after
the run by the worker, within the answer's caps. Whatever a submission makes the recorder
hold, it had: the checks judge those values as they judge its globals, so reaching the
recorder (through ``globals()``, itself refused by the imports check) earns nothing.
"""
from __future__ import annotations

import ast
import operator
from dataclasses import dataclass
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Any, Callable

import numpy as np

CALL, ARITH, AUG, EXIT, LOCALS = "<call>", "<arith>", "<aug>", "<exit>", "<locals>"
CODE_CHARS = 200          # characters of an expression's source kept to name it

OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.MatMult: operator.matmul, ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.Pow: operator.pow, ast.LShift: operator.lshift,
    ast.RShift: operator.rshift, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_}
IN_PLACE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.iadd, ast.Sub: operator.isub, ast.Mult: operator.imul,
    ast.MatMult: operator.imatmul, ast.Div: operator.itruediv, ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod, ast.Pow: operator.ipow, ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift, ast.BitOr: operator.ior, ast.BitXor: operator.ixor,
    ast.BitAnd: operator.iand}

# Values that are never arrays: not kept (checked by exact type: no student code runs).
NOT_ARRAYS = frozenset({type(None), bool, int, float, complex, str, bytes, bytearray, range,
                        slice, dict, set, frozenset, FunctionType, BuiltinFunctionType,
                        ModuleType, type, type(Ellipsis), type(NotImplemented)})


@dataclass(frozen=True)
class Site:
    """One place in the source whose values are recorded."""

    kind: str              # call | arith | aug | exit
    line: int
    column: int
    codes: tuple[str, ...]  # call: (call,); arith: (whole, left, right); aug: (whole, name);
                            # exit: (function name,)
    nested: bool = False    # inside a function (or lambda) of the script
    operation: Callable[[Any, Any], Any] | None = None


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


class _Rewriter(ast.NodeTransformer):
    def __init__(self, source: str):
        self.lines = source.encode("utf-8").splitlines(keepends=True)
        self.sites: list[Site] = []
        self.depth = 0          # functions and lambdas around the node visited

    def _site(self, node: ast.AST, kind: str, codes: tuple[str, ...], operation=None) -> ast.Constant:
        self.sites.append(Site(kind, getattr(node, "lineno", 0), getattr(node, "col_offset", 0),
                               codes, self.depth > 0, operation))
        return ast.Constant(len(self.sites) - 1)

    def _code(self, node: ast.AST) -> str:
        """The node's source text (columns are UTF-8 offsets), on one line, clipped."""
        try:
            first, last = node.lineno - 1, node.end_lineno - 1          # type: ignore[attr-defined]
            start, end = node.col_offset, node.end_col_offset           # type: ignore[attr-defined]
            if first == last:
                data = self.lines[first][start:end]
            else:
                data = b"".join([self.lines[first][start:], *self.lines[first + 1:last],
                                 self.lines[last][:end]])
            text = " ".join(data.decode("utf-8", "replace").split())
        except (AttributeError, IndexError, TypeError):
            text = "?"
        return text[:CODE_CHARS]

    def visit_Call(self, node: ast.Call) -> ast.AST:
        code = self._code(node)
        self.generic_visit(node)
        site = self._site(node, "call", (code,))
        return ast.copy_location(ast.Call(_name(CALL), [site, node], []), node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        codes = (self._code(node), self._code(node.left), self._code(node.right))
        self.generic_visit(node)
        site = self._site(node, "arith", codes, OPERATORS[type(node.op)])
        return ast.copy_location(ast.Call(_name(ARITH), [site, node.left, node.right], []), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        codes = (self._code(node), self._code(node.target))
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):   # an item or attribute: left as it is
            return node
        site = self._site(node, "aug", codes, IN_PLACE[type(node.op)])
        value = ast.Call(_name(AUG), [site, _name(node.target.id), node.value], [])
        return ast.copy_location(ast.Assign([ast.Name(id=node.target.id, ctx=ast.Store())], value), node)

    def visit_FunctionDef(self, node):   # (and AsyncFunctionDef)
        returns, node.returns = node.returns, None      # annotations are not rewritten
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        node.returns = returns
        site = self._site(node, "exit", (node.name[:CODE_CHARS],))
        record = ast.Expr(ast.Call(_name(EXIT), [site, ast.Call(_name(LOCALS), [], [])], []))
        body = node.body
        docstring = body[:1] if (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                                 and isinstance(body[0].value.value, str)) else []
        rest = body[len(docstring):] or [ast.Pass()]
        node.body = docstring + [ast.Try(body=rest, handlers=[], orelse=[], finalbody=[record])]
        return node   # (the new nodes take the def's line: ast.fix_missing_locations)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node                                     # its annotation is not rewritten

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        node.target = self.visit(node.target)
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        if node.guard is not None:                      # the pattern must stay literal
            node.guard = self.visit(node.guard)
        node.body = [self.visit(statement) for statement in node.body]
        return node


# --------------------------------------------------------------------------- recording

class Recorder:
    """Receives what the rewritten code hands over; keeps the last array-like values of each
    site (a Python number, string or None is never kept: no array is among them)."""

    def __init__(self, sites: list[Site], largest_bytes: int):
        self.sites = sites
        self.largest_bytes = largest_bytes   # an array larger than this is never sent: not kept
        self.values: dict[int, tuple] = {}   # site -> its last values (see ROLES)
        self.locals: dict[int, dict] = {}    # exit site -> the function's last locals

    def names(self) -> dict[str, Any]:
        """What the rewritten code calls, bound in the namespace it runs in: closures over
        this recorder's sites (bound once here: a call of the script's costs little)."""
        values, locals_at_exit, largest = self.values, self.locals, self.largest_bytes
        operations = [site.operation for site in self.sites]
        ndarray, nbytes, copy = np.ndarray, np.ndarray.nbytes.__get__, np.ndarray.copy

        def kept(value):
            kind = type(value)
            if kind is float or kind is int or kind is bool or kind is str or value is None:
                return None
            if type(kind) is type and kind in NOT_ARRAYS:   # (a metaclass's __hash__ is not called)
                return None
            if issubclass(kind, ndarray) and nbytes(value) > largest:
                return None
            return value

        def call(site, value):
            kind = type(value)
            if not (kind is float or kind is int or kind is bool or kind is str or value is None):
                value_kept = kept(value)
                if value_kept is not None:
                    values[site] = (value_kept,)
            return value

        def arith(site, left, right):
            result = operations[site](left, right)
            kind = type(result)
            if not (kind is float or kind is int or kind is bool or kind is str):
                values[site] = (kept(result), kept(left), kept(right))
            return result

        def augmented(site, target, value):
            before = kept(target)
            if before is not None and issubclass(type(before), ndarray):
                before = copy(before)   # x += y may change x in place
            result = operations[site](target, value)
            if before is not None or kept(result) is not None:
                values[site] = (kept(result), before)
            return result

        def exit(site, names):
            found = {}
            for name, value in names.items():
                kind = type(value)
                if kind is float or kind is int or kind is bool or kind is str or value is None:
                    continue
                value = kept(value)
                if value is not None and type(name) is str:
                    found[name] = value
            locals_at_exit[site] = found

        return {CALL: call, ARITH: arith, AUG: augmented, EXIT: exit, LOCALS: locals}


def _operator_codes() -> frozenset:
    names = Recorder([], 0).names()
    return frozenset({names[ARITH].__code__, names[AUG].__code__})


# The code of the recorder's functions that do the script's arithmetic (its operators run
# in their frames: worker.RuntimeEvidence sees through them).
OPERATOR_CODES = _operator_codes()


# What each value of a site is, in the order of Site.codes' values.
ROLES = {"call": ("call",), "arith": ("result", "left", "right"), "aug": ("result", "before")}
PRIORITY = {"call": 0, "result": 0, "left": 1, "right": 1, "before": 1, "local": 2}


@dataclass(frozen=True)
class Candidate:
    role: str      # call | result | left | right | before | local
    site: Site
    name: str      # the local's name (role local), else ""
    value: Any


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
            found += [Candidate(role, site, "", value) for role, value in zip(ROLES[site.kind], values)
                      if value is not None]
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
    code = {"call": codes[0], "result": codes[0], "left": codes[1] if len(codes) > 1 else "",
            "right": codes[2] if len(codes) > 2 else "", "before": codes[1] if len(codes) > 1 else "",
            "local": codes[0]}[candidate.role]
    return {"what": candidate.role, "line": int(site.line), "code": code[:CODE_CHARS],
            "name": candidate.name[:100]}
