"""An upload read as `grader check` reads a file: a hand-in format's name (its suffix says
how it is read), at most the same size cap, and a name that is only ever shown escaped.
Nothing of it is run here: its bytes are stored, then graded in a pool process's sandbox."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from grader.student_text import name as visible_name
from grader.submission.file import MAX_SOURCE_BYTES, source_stem
from grader.submission.formats import accepted_text, format_of, lookalike_reason

MAX_NAME_CHARS = 200
# A request body larger than this is refused before it is read whole (the file's cap, and
# room for the form's other fields and the multipart framing).
MAX_BODY_BYTES = MAX_SOURCE_BYTES + (64 << 10)


class UploadRefused(Exception):
    """What was wrong with an upload, in words for the person who sent it; ``status`` is
    the HTTP status it is answered with."""

    def __init__(self, message: str, status: int = 400, retry_after: int | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after  # seconds, for a 429 that waiting cures

    def headers(self) -> dict[str, str]:
        return {} if self.retry_after is None else {"retry-after": str(self.retry_after)}


@dataclass(frozen=True)
class Upload:
    task: str
    filename: str  # safe to store and show (escaped where shown)
    content: bytes


def read_upload(task: object, tasks: Mapping[str, object], filename: object, content: bytes | None) -> Upload:
    """The upload of ``filename`` for ``task`` (a key of ``tasks``), checked; UploadRefused
    otherwise, saying what to do."""
    if not isinstance(task, str) or task not in tasks:
        known = ", ".join(sorted(tasks))
        raise UploadRefused(f"no such task; this service grades: {known}")
    if content is None or not isinstance(filename, str) or not filename:
        raise UploadRefused(f"no file: upload one {accepted_text()} file as the form's 'file' field")
    name = filename.replace("\\", "/").rsplit("/", 1)[-1][:MAX_NAME_CHARS]  # (a browser may send a path)
    if "\x00" in name:  # (no system names a file so, and PostgreSQL cannot store it: a 500)
        raise UploadRefused(f"'{visible_name(name)}' is not a file's name: it holds a NUL character")
    if source_stem(name) is None:
        why = lookalike_reason(name)
        raise UploadRefused(
            f"'{visible_name(name)}' is not a {accepted_text()} file" + (f" ({why})" if why else "")
        )
    if len(content) > MAX_SOURCE_BYTES:
        raise UploadRefused(
            f"'{visible_name(name)}' is larger than {MAX_SOURCE_BYTES >> 10} KiB; a solution to this "
            "task is far smaller",
            413,
        )
    format_of(name)  # (a name with a hand-in suffix has a format: checked above)
    return Upload(task, name, content)
