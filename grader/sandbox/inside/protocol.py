"""The worker protocol, declared once: the op names, the fields of every request and answer,
the confinement a tier asks a worker (or a fork server) for, and the caps both sides hold.

Both sides import this module: the worker and the fork server as ``import protocol``, the
trusted side as ``grader.sandbox.inside.protocol``. Standard library only (and Python 3.10's
typing: optional fields are a ``total=False`` subclass). The messages themselves are JSON
headers (wire.py; the fork server's control socket sends bare JSON): these types name their
fields and change nothing of what goes over the socket. Nothing a worker sends is trusted
for being declared here: the trusted side checks every field it reads (replies.py).
"""

from __future__ import annotations

from typing import Final, TypedDict

# -- Ops: the grader's requests to a worker ("op" of a request header).
LOAD: Final = "load"  # import the submission, say which of the functions it defines
RUN: Final = "run"  # run the submission as a script, send back the arrays it made
CALLS: Final = "calls"  # call one function on each of several items, one answer each
# What the trusted side reads one answer to a CALLS item as (never sent: answers carry no op).
CALL: Final = "call"

# -- Ops a worker sends of its own accord (before it serves, and between answers).
READY: Final = "ready"  # the hello: confined, before any student code
NOT_READY: Final = "not-ready"  # the sandbox could not be applied (with "error")
EVIDENCE: Final = "evidence"  # one entry of runtime evidence (with "entry")

# -- Ops of a fork server's control socket (warm.py <-> forkserver.py).
FORK: Final = "fork"  # with three descriptors: the worker's channel, stdout, stderr
STATUS: Final = "status"  # how worker "pid" ended (waits up to "wait" seconds)
END: Final = "end"  # kill worker "pid" and remove its folder
USAGE: Final = "usage"  # bytes and inodes of the scratch space in use

# -- The unsandboxed tier's channel (connect_back.py, plain_worker.py): a loopback connection
# the worker opens, that sends first the token the grader wrote on the worker's stdin.
LOOPBACK: Final = "127.0.0.1"
TOKEN_CHARS: Final = 64  # hex digits

# -- Caps.
TEXT_CAP: Final = 4000  # characters of an exception message or repr a worker sends
OUTPUT_BYTES_CAP: Final = 256 << 20  # an output array larger than this is refused in the worker
GLOBALS_CAP: Final = 64  # arrays a script left in its globals that are sent back
COMPUTED_CAP: Final = 128  # arrays it computed elsewhere (computed.py) that are sent back
ARRAYS_BYTES_CAP: Final = 128 << 20  # the bytes of all of them together
EVIDENCE_CAP: Final = 100  # entries of runtime evidence per submission
# An evidence entry for a module the submission's namespace holds once its code ran (a
# library reached through another's names, ``from matplotlib.image import PIL``): HELD + name.
HELD: Final = "held:"
EVIDENCE_ENTRY_CHARS: Final = 160  # characters of one entry
OVERFLOW: Final = "evidence-overflow()"  # more entries than the cap: itself evidence
ERROR_FRAMES: Final = 5  # of the submission's own frames in an error
TYPE_CHARS: Final = 100  # of an exception's type name, a missing module's name
CODE_CHARS: Final = 200  # of a frame's line of code
CELL_ERRORS: Final = 20  # a notebook's failed cells described in a load answer (and how many failed)
CELLS_CAP: Final = 100_000  # code cells a load request may name


# -- Requests.
class _SubmissionRequired(TypedDict):
    op: str  # LOAD or RUN
    path: str  # where the worker writes the submission (its private folder)
    source: int  # the blob that holds the submission's bytes


class SubmissionRequest(_SubmissionRequired, total=False):
    """LOAD or RUN: the submission's bytes come with it."""

    answer_bytes: int  # the task's cap on one answer's arrays (a courtesy: the grader holds it)
    shapes: list[list[int]]  # RUN: the shapes the checks want, sent back first
    display: list[str]  # display libraries the worker stands in for (display.py)
    functions: list[str]  # LOAD: the functions to describe
    cells: list[int]  # LOAD of a notebook: the line where each code cell begins (run one by one)
    id: int


class _CallItemRequired(TypedDict):
    args: list  # wire records; a shared array is {"$shared": n, "descr", "shape"}
    kwargs: dict  # {"$dict": {name: wire record}}


class CallItem(_CallItemRequired, total=False):
    id: int
    # The unsandboxed tier (no shared memory): the positions, among the args then the
    # kwargs' values, of the arrays the worker sends back after the call ("inputs_after").
    send_back: list[int]


class _CallsRequired(TypedDict):
    op: str  # CALLS
    function: str
    items: list[CallItem]


class CallsRequest(_CallsRequired, total=False):
    fds: int  # shared arrays' descriptors, sent after the frame


class ForkServerRequest(TypedDict, total=False):
    op: str  # FORK, STATUS, END or USAGE
    pid: int
    wait: float


# -- Answers (what a worker sends; the trusted side checks each field before use).
class ErrorFrame(TypedDict):
    line: int | None
    function: str
    code: str


class _ErrorRequired(TypedDict):
    type: str
    message: str


class ErrorRecord(_ErrorRequired, total=False):
    """An exception the submission raised, with its own frames only."""

    frames: list[ErrorFrame]
    missing_module: str | None  # an ImportError's module (a missing package)
    line: int | None  # a SyntaxError's line


class FunctionEntry(TypedDict, total=False):
    defined: bool
    callable: bool
    params: list[str] | None


class ComputedEntry(TypedDict, total=False):
    """An array a script computed elsewhere than in its globals (computed.py)."""

    what: str  # its role: call, result, left, right, before, whole, whole-before, local
    line: int
    code: str
    name: str
    record: int
    addition: bool
    type: str


class Answer(TypedDict, total=False):
    """A worker's answer to one request (LOAD, RUN or a CALLS item)."""

    ok: bool
    error: ErrorRecord
    id: int | None
    output_at: list[int]  # how far stdout and stderr had got
    stand_ins: list[str]  # display libraries stood in for
    result: object  # CALLS: the value, as a wire record
    aliases_input: bool  # CALLS: the result shares memory with an input
    inputs_after: list  # CALLS with "send_back": those arguments after the call, wire records
    functions: dict[str, FunctionEntry]  # LOAD
    cell_errors: list[ErrorRecord]  # LOAD of a notebook: the first CELL_ERRORS cells that raised
    cells_failed: int  # LOAD of a notebook: how many cells raised
    globals: dict[str, dict]  # RUN: {name: wire record}
    computed: list[dict]  # RUN: ComputedEntry with a "$nd"


class Notice(TypedDict, total=False):
    """What a worker or a fork server sends unasked: READY, NOT_READY, EVIDENCE."""

    op: str
    error: str
    entry: str


# -- Confinement: what a tier asks a worker to apply to itself, in this order (worker.py's
# become_worker): "private_namespaces" (namespaces.py; with "scratch" [path, bytes], also a
# capped tmpfs over that folder), else "drop_capabilities"; the syscall filter's groups; a
# Landlock policy; then the frameworks to preload.
class LandlockPolicy(TypedDict, total=False):
    read: list[str]
    write: list[str]
    own_process: bool


class Confinement(TypedDict, total=False):
    private_namespaces: bool
    scratch: list | None  # [folder, bytes]
    drop_capabilities: bool
    deny_sockets: bool
    deny_keys: bool
    deny_ipc: bool
    deny_processes: bool
    landlock: LandlockPolicy
    preload: list[str]


class UnsandboxedConfig(TypedDict, total=False):
    """The unsandboxed tier's worker's start-up (connect_back.py): the rlimits it sets on
    itself where the system has them (limits.rlimits' arguments), the frameworks to preload."""

    limits: dict[str, float]
    preload: list[str]


class ForkServerConfig(TypedDict, total=False):
    """A fork server's start-up: warm.py's part, then the tier's (Tier.fork_server)."""

    rlimits: list[tuple[int, int, int]]  # each worker's own (the server has no CPU limit)
    deny_sockets: bool
    deny_keys: bool
    preload: list[str]
    scratch_root: str  # where the workers' folders are
    scratch_bytes: int | None  # a tmpfs of this size over it
    server_landlock: LandlockPolicy | None
    worker_landlock: LandlockPolicy
