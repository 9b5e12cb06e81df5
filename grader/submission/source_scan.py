"""A submission's code as the grader knows it, read from its bytes in a bounded child.

Everything the trusted side reads of a hand-in's content happens here: decoding it as Python
decodes a file, making a notebook's code cells into one module (notebook.py), and the static
scan the imports and mutation checks decide on (import_scan.py ``scan_imports``). The bytes are
the student's, and each of these steps builds what they choose: an 866-byte notebook of
format 3 becomes gigabytes when converted, a 1 MiB file of ``a;a;a;...`` a syntax tree of a
million nodes. So they run in a child under a bound (bounded.py), and a file that breaks it
is refused as unreadable, with the reason: that student's problem, never the grader's.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from grader.student_text import name as visible_name
from grader.submission import bounded, source_numbers
from grader.submission.file import SubmissionFile, submission_source
from grader.submission.formats import warm_readers
from grader.submission.import_scan import scan_imports
from grader.submission.python_file import PythonSource, SourceScan
from grader.submission.source_map import SourceMap

# Far above what any hand-in Jupyter or an editor saves needs (a few MiB, a fraction of a second).
BOUND = bounded.Bound(memory_bytes=512 << 20, cpu_seconds=10, wall_seconds=30.0)


def read_source(
    submission: SubmissionFile,
    allowed_names: Sequence[str],
    numbers: bool = False,
    display: Sequence[str] = (),
    tested: Sequence[str] = (),
) -> PythonSource:
    """The submission's code and its scan (``allowed_names``: the task's allowed imports,
    which decide whether a module reached as an attribute is a route); with ``numbers``, the
    numbers its text holds too (source_numbers.py: for the typed-in rule). ``display``: the
    task's display libraries, whose values a notebook cell's last line does not show, and
    which the functions under test (``tested``) may not use (import_scan.py)."""
    warm_readers(submission.name, submission.data)
    request = {
        "name": submission.name,
        "data": base64.b64encode(submission.data).decode("ascii"),
        "allowed": list(allowed_names),
        "numbers": numbers,
        "display": list(display),
        "tested": list(tested),
    }
    try:
        answer = bounded.call("grader.submission.source_scan:read_in_child", request, BOUND)
    except bounded.TooCostly as exc:
        return PythonSource(
            None,
            f"{visible_name(submission.name)} cannot be read: {exc}, and "
            "no file a student writes needs that much",
        )
    return _from_answer(answer, submission)


def read_in_child(request: dict) -> dict:
    """In the bounded child: decode, convert, scan; plain data back."""
    data = base64.b64decode(request["data"])
    source = submission_source(SubmissionFile(request["name"], data), tuple(request.get("display", ())))
    answer: dict[str, Any] = {
        "text": source.text,
        "problem": source.problem,
        "notebook": source.code != data,
        "origins": source.source_map.origins,
        "written": source.source_map.written,
        "notes": source.notes,
        "uncompiled": source.uncompiled,
    }
    if source.text is not None:
        try:
            found = scan_imports(
                source.text,
                request["allowed"],
                source.where,
                tuple(request.get("display", ())),
                tuple(request.get("tested", ())),
            )
        except RecursionError:
            return {
                "text": None,
                "problem": f"{visible_name(request['name'])} is nested too deeply "
                "for the grader to read its code",
            }
        except MemoryError:  # (bounded.py says it in its words, and the file is not run)
            raise
        answer["scan"] = {
            "imports": found.imports,
            "routes": found.routes,
            "definitions": found.definitions,
            "problem": found.problem,
            "display_uses": found.display_uses,
        }
        if request.get("numbers"):
            held = source_numbers.scan_numbers(source.text)
            answer["numbers"] = {
                "written": held.written,
                "decoded": held.decoded,
                "capped": held.capped,
                "precise_tokens": held.precise_tokens,
            }
    return answer


def _from_answer(answer: Any, submission: SubmissionFile) -> PythonSource:
    """The child's answer as records (it is our own code's, made from hostile bytes: read
    strictly, and anything else is the file's problem)."""
    try:
        text = answer["text"]
        problem = str(answer["problem"])
        if text is None:
            return PythonSource(None, problem)
        scan = answer["scan"]
        held = answer.get("numbers")
        numbers = (
            None
            if held is None
            else source_numbers.SourceNumbers(
                tuple((float(v), int(n)) for v, n in held["written"]),
                tuple((float(v), int(n)) for v, n in held["decoded"]),
                bool(held["capped"]),
                int(held["precise_tokens"]),
            )
        )
        return PythonSource(
            str(text),
            problem,
            code=str(text).encode("utf-8") if answer["notebook"] else submission.data,
            source_map=SourceMap(
                tuple((int(c), int(n)) for c, n in answer["origins"]),
                tuple(str(w) for w in answer["written"]),
            ),
            notes=tuple(str(n) for n in answer["notes"]),
            uncompiled=tuple((int(c), str(t)) for c, t in answer["uncompiled"]),
            scan=SourceScan(
                tuple((str(m), int(n)) for m, n in scan["imports"]),
                tuple(str(r) for r in scan["routes"]),
                tuple((str(f), int(n)) for f, n in scan["definitions"]),
                str(scan["problem"]),
                None if "display_uses" not in scan else tuple(str(u) for u in scan["display_uses"]),
            ),
            numbers=numbers,
        )
    except (KeyError, TypeError, ValueError) as exc:
        return PythonSource(None, f"the grader could not read it ({type(exc).__name__})")
