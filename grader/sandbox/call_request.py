"""A window of calls as one request to a worker (CALLS), and, for a check that wants the
arguments after the call (a mutation check's ``return_inputs``), those arguments as the
grader then has them.

Where the worker shares memory (every sandboxed tier), the items' top-level argument arrays
go in memory the grader keeps a handle to (shared.py) and are read back from there: the
worker's word plays no part. Where it cannot (the unsandboxed tier: no descriptor passing on
macOS or Windows), the request names them (``send_back``) and the worker sends them back
after the call: on a student's own machine, checking their own kit, their worker's word is
acceptable (the sandboxed tiers never take it).
"""

from __future__ import annotations

from collections.abc import Sequence

from grader.sandbox.inside import protocol, shared, wire

WINDOW_BYTES = 1 << 20  # of arguments per message (one call may exceed it)


def calls_request(
    function: str,
    items: list[tuple[list, dict]],
    arrays: list | None = None,
    back: list[list[int]] | None = None,
) -> tuple[protocol.CallsRequest, list[bytes]]:
    """One message with as many of ``items`` as fit in WINDOW_BYTES (at least one).

    With ``arrays`` (a list to fill, one entry per item sent), the items' top-level argument
    arrays go in shared memory instead (see shared.py): the header counts their descriptors
    ("fds"), which the caller sends after the frame, and the grader keeps its own handles.
    With ``back`` (a list to fill likewise), they are sent as any argument and named for
    the worker to send back after the call (their positions among args, then kwargs)."""
    blobs: list[bytes] = []
    encoded: list[protocol.CallItem] = []
    size, fds = 0, 0
    for args, kwargs in items:
        kwargs = dict(kwargs or {})
        values = list(args) + list(kwargs.values())
        to_share = [p for p, v in enumerate(values) if shared.shareable(v)] if arrays is not None else []
        if encoded and (size > WINDOW_BYTES or fds + len(to_share) > shared.MAX_FDS):
            break
        before = len(blobs)
        mine = []
        try:
            for p in to_share:
                mine.append(shared.SharedArray(values[p], p))
            refs = {a.position: a.reference(fds + n) for n, a in enumerate(mine)}
            positional = [refs.get(p) or wire.encode(v, blobs) for p, v in enumerate(args)]
            named = {
                str(k): refs.get(len(args) + n) or wire.encode(v, blobs)
                for n, (k, v) in enumerate(kwargs.items())
            }
        except BaseException:
            close(mine)
            raise
        item: protocol.CallItem = {"args": positional, "kwargs": {"$dict": named}}
        if back is not None:
            item["send_back"] = [p for p, v in enumerate(values) if shared.shareable(v)]
            back.append(item["send_back"])
        encoded.append(item)
        if arrays is not None:
            arrays.append(mine)
        fds += len(mine)
        size += sum(len(b) for b in blobs[before:]) + sum(a.nbytes for a in mine)
    header: protocol.CallsRequest = {"op": protocol.CALLS, "function": function, "items": encoded}
    if fds:
        header["fds"] = fds
    return header, blobs


def sent_back_bytes(items: list[tuple[list, dict]]) -> int:
    """The bytes of the arrays a worker that shares no memory sends back with its answers
    to ``items`` (their answers may be that much larger than the task's cap)."""
    return sum(
        v.nbytes + 256
        for args, kwargs in items
        for v in list(args) + list((kwargs or {}).values())
        if shared.shareable(v)
    )


def read_back(item: tuple[list, dict], arrays: list) -> list:
    """The call's arguments after it (in the order args, then kwargs' values): the shared
    arrays as the grader reads them now, the rest as sent (the worker had copies)."""
    args, kwargs = item
    values: list = list(args) + list((kwargs or {}).values())
    for a in arrays:
        values[a.position] = a.read_back()
    return values


def sent_back(item: tuple[list, dict], positions: Sequence[int], returned: object) -> list:
    """The call's arguments after it, where the worker shares no memory: the arrays named
    (``positions``) as the worker sent them back (``returned``, decoded; without one for
    each, none of them: the check then sees them changed), the rest as sent."""
    args, kwargs = item
    values: list = list(args) + list((kwargs or {}).values())
    given = returned if isinstance(returned, list) and len(returned) == len(positions) else None
    for n, p in enumerate(positions):
        values[p] = given[n] if given is not None else None
    return values


def close(arrays: list) -> None:
    for a in arrays:
        a.close()
