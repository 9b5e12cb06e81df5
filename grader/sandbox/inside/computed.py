"""What a script computed, recorded while it runs: the values of its calls, the operands and
results of its arithmetic, and the locals of its functions when they end.

The script's code is rewritten to hand these values over (rewriting.py); this module holds
what it hands them to.

The recorder keeps a copy of the last array-like value of each site (a loop costs no memory
per pass): numpy arrays of numbers and framework tensors (converted to numpy when recorded),
never any other object (holding one would keep it alive: a file unflushed, a generator's
``finally`` not run), never an array larger than what one answer may carry, and within two
byte budgets, one for arrays of the shapes the task's checks want (the grader sends only
those shapes) and one for the rest, so big arrays never crowd the wanted ones out. A copy,
because the script may change an array after it was recorded (``batch[:] = 0``). What is
sent back, and in which order (``candidates``), is decided after the run by the worker,
within the answer's caps. Whatever a submission makes the recorder hold, it had: the checks
judge those values as they judge its globals, so reaching the recorder (through ``globals()``, itself refused by the imports check) earns nothing.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import BuiltinFunctionType, FunctionType, ModuleType
from typing import Any

import numpy as np
from rewriting import (
    ADD_CALL,
    ARITH,
    AUG,
    AUG_ATTRIBUTE,
    AUG_ITEM,
    CALL,
    CODE_CHARS,
    EXIT,
    LOCALS,
    SLICE,
    Site,
)

NUMBER_KINDS = frozenset("biufc")  # dtype kinds kept (an object array holds objects)
DRAWN_CAP = 4096  # arrays of display libraries' calls remembered (by identity)

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
        # A weak reference to each of those arrays: an id names an object only while it
        # lives, and a display library's later array may be given the id of a freed one.
        self.own_refs: dict[int, Any] = {}

    def drawn_ids(self) -> frozenset[int]:
        """The ids of arrays a display library's call gave that no call of the script's
        own gave last at its site: not the script's work."""
        return frozenset(self.drawn) - self.live_own_ids()

    def live_own_ids(self) -> frozenset[int]:
        """The ids in ``own_ids`` whose array still lives (or cannot be told: no weak reference)."""
        return frozenset(
            ident
            for site, ident in self.own_ids.items()
            if (ref := self.own_refs.get(site)) is None or ref() is not None
        )

    def names(self) -> dict[str, Any]:
        """What the rewritten code calls, bound in the namespace it runs in: closures over
        this recorder's sites (bound once here: a call of the script's costs little)."""
        values, locals_at_exit, largest = self.values, self.locals, self.largest_bytes
        wanted, drawn_by, drawn, own_ids = self.wanted, self.drawn_by, self.drawn, self.own_ids
        own_refs, live_own_ids = self.own_refs, self.live_own_ids
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

        def copied(value: Any) -> np.ndarray | None:
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

        def hold(key: object, kept: tuple[np.ndarray | None, ...]) -> None:
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

        def draw(value: Any) -> None:
            """Remember the arrays a display library's call gave (itself, or in a tuple)."""
            items = value if type(value) in (tuple, list) and len(value) <= 16 else (value,)
            for item in items:
                if isinstance(item, ndarray) and len(drawn) < DRAWN_CAP:
                    drawn[id(item)] = item

        def call(site: int, owner: object, value: Any) -> Any:
            kind = type(value)
            if not (kind is float or kind is int or kind is bool or kind is str or value is None):
                if owner is not None and drawn_by is not None and drawn_by(owner):
                    draw(value)
                    return value
                kept = copied(value)
                if kept is not None:
                    hold(site, (kept,))
                    own_ids[site] = id(value)
                    try:
                        own_refs[site] = weakref.ref(value)
                    except TypeError:  # a value that takes no weak reference: its id as before
                        own_refs[site] = None
            return value

        def arith(site: int, left: Any, right: Any) -> Any:
            result = operations[site](left, right)
            kind = type(result)
            if not (kind is float or kind is int or kind is bool or kind is str):
                hold(site, (copied(result), copied(left), copied(right)))
            return result

        def augmented(site: int, target: Any, value: Any) -> Any:
            before = copied(target)  # (a copy: x += y may change x in place)
            result = operations[site](target, value)
            hold(site, (copied(result), before, copied(value)))
            return result

        def augmented_item(site: int, container: Any, key: Any, value: Any) -> None:
            whole_before = copied(container)
            item = container[key]
            before = copied(item)
            result = operations[site](item, value)
            container[key] = result
            hold(site, (copied(result), before, copied(value), copied(container), whole_before))

        def augmented_attribute(site: int, owner: object, name: str, value: Any) -> None:
            item = getattr(owner, name)
            before = copied(item)
            result = operations[site](item, value)
            setattr(owner, name, result)
            hold(site, (copied(result), before, copied(value)))

        def add_call(
            site: int, function: Callable[..., Any], left: Any, right: Any, /, **keywords: Any
        ) -> Any:
            operands = (copied(left), copied(right))  # before: out= may be one of them
            result = function(left, right, **keywords)
            hold(site, (copied(result), *operands))
            return result

        def exit(site: int, names: dict[str, Any]) -> None:
            found = {}
            own_now = live_own_ids() if drawn else frozenset()  # (once per exit, not per name)
            for name, value in names.items():
                kind = type(value)
                if kind is float or kind is int or kind is bool or kind is str or value is None:
                    continue
                if drawn and id(value) in drawn and id(value) not in own_now:
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
# in their frames: evidence.RuntimeEvidence sees through them).
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
