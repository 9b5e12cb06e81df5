"""Reading a worker's answers on the trusted side: what one call came to (CallOutcome),
built only from fields checked here; anything else in an answer is a ``WireError``.
Everything in an answer is the submission's: strings are bounded here and made visible
here too (``sanitised``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from grader.records.statuses import OK, RAISED, CallStatus
from grader.records.worker_error import ErrorFrame, WorkerError
from grader.sandbox.inside import protocol, wire
from grader.student_text import CODE_BYTES, LINE_BYTES, MESSAGE_BYTES, line, visible
from grader.submission.source_map import SourceMap


@dataclass
class CallOutcome:
    """What one call in the worker came to (``status``: records/statuses.py; ``error``
    whenever it is not OK).

    ``inputs_after`` (calls made with ``return_inputs``, that returned or raised) are the
    arguments as the grader read them back from the memory it shared with the worker,
    after the answer came: the
    worker's word plays no part in them; except in the unsandboxed tier (a student's own
    machine), whose worker shares no memory: there they are what it sent back
    (``returned``, call_request.sent_back). ``aliases_input`` is what the worker says it saw
    (the result is an input array or a view of one): it can only be observed inside the
    sandbox, so it may cost a submission points but never earn them."""

    status: CallStatus
    value: object = None
    inputs_after: object = None
    returned: list | None = None
    aliases_input: bool = False
    error: WorkerError | None = None
    stdout: str = ""
    stderr: str = ""
    # A notebook's load: the cells that raised (the first protocol.CELL_ERRORS), and how
    # many did (the worker's word: it can only hide its own failures, never earn a point).
    cell_errors: tuple[WorkerError, ...] = ()
    cells_failed: int = 0


def shown_id(value: object) -> str:
    return str(value) if type(value) is int else "without a valid id"


def outcome_from_reply(
    reply: dict,
    blobs: Sequence[bytes | bytearray],
    op: str,
    functions: Sequence[str] = (),
    where: Callable[[int], str] = SourceMap().where,
) -> CallOutcome:
    """The outcome an answer to an ``op`` request (load, run or call) describes. Strict:
    every field used is checked here, and anything else is a ``WireError``. ``where``
    writes a line of the submission as its author finds it (a notebook's cell and line)."""
    ok = reply.get("ok")
    if type(ok) is not bool:
        raise wire.WireError("answer has neither a result nor an error")
    if not ok and not isinstance(reply.get("error"), dict):
        raise wire.WireError("a failed answer without its error")
    if op == protocol.RUN:
        value = dict(_script_info(reply, blobs, where), stand_ins=_stand_ins(reply))
        if ok:
            return CallOutcome(OK, value=value)
        return CallOutcome(RAISED, value=value, error=_clean_error(reply["error"]))
    if op == protocol.LOAD:
        value = dict(_load_info(reply, functions, require_functions=ok), stand_ins=_stand_ins(reply))
        if ok:
            errors, failed = _cell_errors(reply)
            return CallOutcome(OK, value=value, cell_errors=errors, cells_failed=failed)
        return CallOutcome(RAISED, value=value, error=_clean_error(reply["error"]))
    if op != protocol.CALL:
        raise ValueError(f"no such request: {op}")
    returned = reply.get("inputs_after")  # (after a return or a raise alike)
    if returned is not None and not isinstance(returned, list):
        raise wire.WireError("malformed call answer (inputs_after)")
    sent_back = None if returned is None else [wire.decode(r, blobs) for r in returned]
    if not ok:
        return CallOutcome(RAISED, error=_clean_error(reply["error"]), returned=sent_back)
    if "result" not in reply:
        raise wire.WireError("answer has neither a result nor an error")
    aliases = reply.get("aliases_input", False)
    if type(aliases) is not bool:
        raise wire.WireError("malformed call answer (aliases_input)")
    return CallOutcome(
        OK,
        value=wire.decode(reply["result"], blobs),
        aliases_input=aliases,
        returned=sent_back,
    )


def _cell_errors(reply: dict) -> tuple[tuple[WorkerError, ...], int]:
    """A notebook load's failed cells: at most CELL_ERRORS described, and a count of them
    that is at least that many and at most the cells there can be."""
    errors, count = reply.get("cell_errors", []), reply.get("cells_failed", 0)
    if (
        not isinstance(errors, list)
        or len(errors) > protocol.CELL_ERRORS
        or not all(isinstance(e, dict) for e in errors)
        or type(count) is not int
        or not len(errors) <= count <= protocol.CELLS_CAP
    ):
        raise wire.WireError("malformed load answer (cell_errors)")
    return tuple(_clean_error(e) for e in errors), count


def _stand_ins(reply: dict) -> list[str]:
    """The display libraries the worker says it stood in for (the worker's word: it decides
    only a note, and the grader keeps only names the task lists)."""
    return _strings(reply.get("stand_ins", []), "stand_ins", 16)


def _strings(value: object, what: str, cap: int = 100) -> list[str]:
    if not isinstance(value, list) or len(value) > cap or not all(isinstance(v, str) for v in value):
        raise wire.WireError(f"malformed answer ({what})")
    return [v[:100] for v in value]


def _load_info(reply: dict, functions: Sequence[str] = (), require_functions: bool = True) -> dict:
    """The load answer: which functions exist. It must describe exactly the functions
    asked for, each as the worker does."""
    if not require_functions and "functions" not in reply:
        return {"functions": {}}
    found = reply.get("functions")
    if not isinstance(found, dict) or sorted(found) != sorted(functions):
        raise wire.WireError("malformed load answer (functions)")
    described = {}
    for name, entry in found.items():
        if (
            not isinstance(entry, dict)
            or type(entry.get("defined")) is not bool
            or type(entry.get("callable")) is not bool
        ):
            raise wire.WireError(f"malformed load answer (function {name[:100]!r})")
        params = entry.get("params")
        described[name] = {
            "defined": entry["defined"],
            "callable": entry["callable"],
            "params": None if params is None else _strings(params, "params", 50),
        }
    return {"functions": described}


GLOBALS_CAP, COMPUTED_CAP = protocol.GLOBALS_CAP, protocol.COMPUTED_CAP  # (wire.Caps.blob_count holds both)
CODE_SHOWN = 60  # characters of an expression quoted in a name


def _script_info(
    reply: dict, blobs: Sequence[bytes | bytearray], where: Callable[[int], str] = SourceMap().where
) -> dict:
    """A script's answer: {"arrays": {name: (array, type name, role, record, addition)}},
    its globals first (named ``variable 'x'``, role "variable", record -1), then the arrays
    it computed elsewhere, named by where (``_label``; role, record and addition as
    inside/computed.py says: call, result, left, right, before, whole, whole-before,
    local; values of one record with addition true are the operands and result of one
    addition)."""
    left, made = reply.get("globals"), reply.get("computed")
    if (
        not isinstance(left, dict)
        or len(left) > GLOBALS_CAP
        or not isinstance(made, list)
        or len(made) > COMPUTED_CAP
    ):
        raise wire.WireError("malformed script answer")
    arrays: dict[str, tuple] = {}
    entries = [(f"variable '{name[:100]}'", entry) for name, entry in left.items()]
    roles = ["variable"] * len(entries)
    for entry in made:
        if (
            not isinstance(entry, dict)
            or entry.get("what") not in _ROLES
            or type(entry.get("line")) is not int
            or not isinstance(entry.get("code"), str)
            or not isinstance(entry.get("name"), str)
            or type(entry.get("record", -1)) is not int
            or type(entry.get("addition", False)) is not bool
        ):
            raise wire.WireError("malformed script answer (a computed array)")
        entries.append((_label(entry, where), entry))
        roles.append(entry["what"])
    for (label, entry), role in zip(entries, roles):
        if (
            not isinstance(entry, dict)
            or type(entry.get("$nd")) is not int
            or not isinstance(entry.get("type", "?"), str)
        ):
            raise wire.WireError("malformed script answer")
        unique, n = label, 1
        while unique in arrays:
            n += 1
            unique = f"{label} #{n}"
        arrays[unique] = (
            wire.decode({"$nd": entry["$nd"]}, blobs),
            entry.get("type", "?")[:100],
            role,
            entry.get("record", -1) if role != "variable" else -1,
            entry.get("addition", False) if role != "variable" else False,
        )
    return {"arrays": arrays}


# How a computed array is named, by its role (see inside/computed.py).
_ROLES = {
    "call": "`{code}` ({where})",
    "result": "`{code}` ({where})",
    "left": "`{code}` ({where})",
    "right": "`{code}` ({where})",
    "before": "`{code}` as it was before {where}",
    "whole": "`{code}` after {where}",
    "whole-before": "`{code}` as it was before {where}",
    "local": "'{name}' in {code}() ({where})",
}


def _label(entry: dict, where: Callable[[int], str]) -> str:
    code = " ".join(entry["code"].split())
    if len(code) > CODE_SHOWN:
        code = code[: CODE_SHOWN - 3] + "..."
    return _ROLES[entry["what"]].format(code=code, where=where(entry["line"]), name=entry["name"][:100])


def _clean_error(error: dict) -> WorkerError:
    frames = error.get("frames", [])
    if not isinstance(frames, list):
        frames = []
    return WorkerError(
        type=str(error.get("type", "Error"))[: protocol.TYPE_CHARS],
        missing_module=str(error["missing_module"])[: protocol.TYPE_CHARS]
        if error.get("missing_module")
        else None,
        message=str(error.get("message", ""))[: protocol.TEXT_CAP],
        line=error.get("line") if type(error.get("line")) is int else None,
        frames=tuple(
            ErrorFrame(
                line=f.get("line") if type(f.get("line")) is int else None,
                function=str(f.get("function", ""))[:100],
                code=str(f.get("code", ""))[: protocol.CODE_CHARS],
            )
            for f in frames[: protocol.ERROR_FRAMES]
            if isinstance(f, dict)
        ),
    )


# The boundary: every string an answer carries made safe (student_text.py).
def sanitised(outcome: CallOutcome) -> CallOutcome:
    """A worker's answer (a CallOutcome) with every string it carries made safe: the
    error's fields, the output, and the names and reprs inside the value. Arrays and
    numbers are left as they are: verdicts are computed on them."""
    if outcome.error is not None:
        outcome.error = _sanitised_error(outcome.error)
    outcome.cell_errors = tuple(_sanitised_error(e) for e in outcome.cell_errors)
    # (capped where it was captured: WorkerProcess.take_output)
    outcome.stdout = visible(outcome.stdout or "", multiline=True)
    outcome.stderr = visible(outcome.stderr or "", multiline=True)
    outcome.value = _value(outcome.value)
    return outcome


def _sanitised_error(error: WorkerError) -> WorkerError:
    return dataclasses.replace(
        error,
        type=_line_or_none(error.type, LINE_BYTES),
        missing_module=_line_or_none(error.missing_module, LINE_BYTES),
        message=line(error.message, MESSAGE_BYTES),
        frames=tuple(_frame(f) for f in error.frames),
    )


def _line_or_none(text: str | None, cap: int) -> str | None:
    return None if text is None else line(text, cap)


def _frame(frame: ErrorFrame) -> ErrorFrame:
    return dataclasses.replace(
        frame, function=line(frame.function, LINE_BYTES), code=line(frame.code, CODE_BYTES)
    )


def _value(value: object, depth: int = 0) -> object:
    """Strings inside a returned value or a load/script description, made safe."""
    if depth > 64:
        return value
    if isinstance(value, str):
        return line(value)
    if isinstance(value, dict):
        return {line(k): _value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_value(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(_value(v, depth + 1) for v in value)
    if isinstance(value, wire.Opaque):
        return wire.Opaque(line(value.type_name), line(value.text, MESSAGE_BYTES))
    if isinstance(value, wire.ForeignArray):
        return dataclasses.replace(value, container=line(value.container))
    return value
