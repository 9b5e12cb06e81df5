"""Submissions that change their input in place and then lie about it (issue 10, class 6).

The mutation check must not believe the worker: each forger here adds into ``x`` in place
(as submissions/positional-encoding/mistake_adds_in_place.py does honestly), computes the
right answer, and rewrites what the worker says about its arguments after the call, by
patching the worker's ``Worker.call``, its encoder, or its ``wire.send``, and claims that
its result does not alias the input. Each must lose exactly the mutation check's points,
like the honest in-place sample, while a correct sample keeps full marks. Run under every
tier, with fresh and with warm (forked) workers, like test_adversarial.py.
"""

import os

import numpy as np
import pytest
from helpers.paths import PE_SAMPLES
from helpers.tasks import write
from helpers.tiers import RLIMITS
from test_adversarial import grade_attack

from grader.records.limits import Limits
from grader.sandbox import warm
from grader.sandbox.launcher import Sandbox

MUTATION_CHECK = "add-leaves-input-unchanged"  # tasks/positional-encoding/task.yaml
IMPORTS_CHECK = "numpy-only"

CORRECT = """
import numpy as np


def sinusoidal_pe(max_len, d_model, base=10000.0):
    pe = np.zeros((max_len, d_model))
    p = np.arange(max_len)[:, None]
    i = np.arange(d_model // 2)
    angles = p / base ** (2 * i / d_model)
    pe[:, 0:2 * (d_model // 2):2] = np.sin(angles)
    pe[:, 1:2 * (d_model // 2):2] = np.cos(angles)
    return pe
"""

# The worker's module globals and its Worker, found on the stack at import time (the
# worker is loading this file) without importing anything the task forbids.
FIND_WORKER = """

def _worker_globals():
    try:
        raise RuntimeError
    except RuntimeError as exc:
        frame = exc.__traceback__.tb_frame
    while frame is not None:
        if "Worker" in frame.f_globals and "wire" in frame.f_globals:
            return frame.f_globals
        frame = frame.f_back
    return None


_worker = _worker_globals()
_state = {}
"""

# Adds in place, remembering the arguments as they were (base=None: so that it knows
# whether base was passed, as the worker lists only the arguments it was sent).
ADDS_IN_PLACE = """

def add_positional_encoding(x, base=None):
    _state["before"] = [x.copy()] + ([] if base is None else [base])
    _state["x"] = x
    x += sinusoidal_pe(x.shape[-2], x.shape[-1], 10000.0 if base is None else base)
    return x
"""

FORGERS = {
    # Worker.call wrapped: its answer says the arguments came back as they were sent.
    "patches-worker-call": """
if _worker is not None:
    _call = _worker["Worker"].call

    def _forged_call(self, *args, **kwargs):
        _state.clear()
        reply, out = _call(self, *args, **kwargs)
        if "before" in _state:
            reply["inputs_after"] = _worker["wire"].encode(_state["before"], out)
        reply["aliases_input"] = False
        return reply, out

    _worker["Worker"].call = _forged_call
""",
    # The encoder swaps the mutated argument for the copy taken before the change, and
    # numpy's may_share_memory (which the worker asks about aliasing) always says no.
    "restores-a-copy-into-what-is-sent-back": """
if _worker is not None:
    _encode = _worker["wire"].encode

    def _forged_encode(value, blobs, depth=0):
        if type(value) is list and "x" in _state:
            value = [_state["before"][0] if v is _state["x"] else v for v in value]
        return _encode(value, blobs, depth)

    _worker["wire"].encode = _forged_encode
    _worker["np"].may_share_memory = lambda *args, **kwargs: False
""",
    # wire.send rewrites every answer on its way out.
    "rewrites-the-answer-on-the-wire": """
if _worker is not None:
    _send, _encode = _worker["wire"].send, _worker["wire"].encode

    def _forged_send(sock, header, blobs=()):
        if header.get("ok") is True and "result" in header and "before" in _state:
            blobs = list(blobs)
            header["inputs_after"] = _encode(_state.pop("before"), blobs)
            header["aliases_input"] = False
        return _send(sock, header, blobs)

    _worker["wire"].send = _forged_send
""",
}


def forger(name: str) -> str:
    return CORRECT + FIND_WORKER + FORGERS[name] + ADDS_IN_PLACE


# Each hands the function a copy of the shared argument (so the grader's memory is never
# touched) by replacing the worker's map_array, reached a different way.
COPY_THE_ARGUMENT = """
    _map = _shared.map_array
    _shared.map_array = lambda *args: np.array(_map(*args))
"""
CHANGES_ITS_COPY = """

def add_positional_encoding(x, base=10000.0):
    x += sinusoidal_pe(x.shape[-2], x.shape[-1], base)
    return x.copy()     # not the input itself: only the in-place change is hidden
"""
COPIERS = {
    "through-the-stack": FIND_WORKER
    + "if _worker is not None:\n    _shared = _worker['shared']\n"
    + COPY_THE_ARGUMENT,
    "through-sys-modules": "import sys\n_state = {}\nif True:\n    _shared = sys.modules['shared']\n"
    + COPY_THE_ARGUMENT,
    # sys reached as an attribute of one of numpy's own modules: no import statement.
    "through-a-module-attribute": (
        "_state = {}\nif True:\n    _core = np._core if hasattr(np, '_core') else np.core\n"
        "    _shared = _core.records.os.sys.modules['shared']\n" + COPY_THE_ARGUMENT
    ),
    # numpy's own functions rebound: frombuffer (which maps the shared memory) copies.
    "through-numpy-itself": """
_state = {}
_frombuffer = np.frombuffer
np.frombuffer = lambda *args, **kwargs: _frombuffer(*args, **kwargs).copy()
np.may_share_memory = lambda *args, **kwargs: False
""",
    # gc finds the worker's evidence hook and silences it before doing anything else.
    "through-gc-after-erasing-the-evidence": """
import gc
_state = {}
for _o in gc.get_objects():
    if type(_o).__name__ == "RuntimeEvidence":
        _o.entries.clear()
        _o.busy = True
for _o in gc.get_objects():
    if getattr(_o, "__name__", None) == "shared" and hasattr(_o, "map_array"):
        _shared = _o
        _map = _shared.map_array
        _shared.map_array = lambda *args: np.array(_map(*args))
""",
}


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """Per mode, the reports of the honest in-place sample and of a correct sample."""
    cache = {}

    def get(mode):
        if mode.label not in cache:
            found = {}
            for name in ("mistake_adds_in_place.py", "correct_vectorized.py"):
                with open(os.path.join(PE_SAMPLES, name)) as f:
                    source = f.read()
                folder = tmp_path_factory.mktemp(f"{mode.label}-{name[:-3]}")
                found[name], _ = grade_attack(folder, mode, source, name=name)
            cache[mode.label] = found
        return cache[mode.label]

    return get


def checks(report: dict) -> dict:
    return {c["name"]: c for c in report["checks"]}


def assert_loses_exactly(report: dict, lost: tuple[str, ...]) -> None:
    by_name = checks(report)
    for name in lost:
        assert by_name[name]["status"] == "failed" and by_name[name]["score"] == 0, by_name[name]
    others = [c for name, c in by_name.items() if name not in lost]
    assert all(c["status"] == "passed" and c["score"] == c["max_score"] for c in others), [
        c for c in others if c["status"] != "passed"
    ]
    assert report["score"] == report["max_score"] - sum(by_name[n]["max_score"] for n in lost)


def assert_loses_exactly_the_mutation_points(report: dict) -> None:
    assert_loses_exactly(report, (MUTATION_CHECK,))


@pytest.mark.parametrize("attack", sorted(FORGERS))
def test_forged_inputs_after_lose_the_mutation_points(tmp_path, tier, samples, attack):
    report, _ = grade_attack(tmp_path, tier, forger(attack))
    # The frame walk that finds the worker costs the import-policy point as well.
    assert_loses_exactly(report, (MUTATION_CHECK, IMPORTS_CHECK))
    assert ".tb_frame" in checks(report)[IMPORTS_CHECK]["message"]
    message = checks(report)[MUTATION_CHECK]["message"]
    # Seen in the grader's memory, or (numpy.may_share_memory's rebinding does not reach the
    # harness) the input itself returned.
    assert "changed its argument `x` in place" in message or "returned its argument `x` itself" in message, (
        message
    )
    # The controls, in the same mode: the honest in-place sample loses the same points,
    # a correct sample keeps full marks.
    honest = samples(tier)
    assert_loses_exactly_the_mutation_points(honest["mistake_adds_in_place.py"])
    imports_points = checks(report)[IMPORTS_CHECK]["max_score"]
    assert report["score"] == honest["mistake_adds_in_place.py"]["score"] - imports_points
    correct = honest["correct_vectorized.py"]
    assert correct["score"] == correct["max_score"], correct


@pytest.mark.parametrize("attack", sorted(COPIERS))
def test_a_copied_argument_earns_no_mutation_points(tmp_path, tier, samples, attack):
    """The function really changes the array it gets in place, but that array is a copy
    the submission had the worker make: the grader's memory is untouched. The check must
    not take that for an unchanged input."""
    report, _ = grade_attack(tmp_path, tier, CORRECT + COPIERS[attack] + CHANGES_ITS_COPY)
    assert_loses_exactly(report, (MUTATION_CHECK, IMPORTS_CHECK))
    message = checks(report)[MUTATION_CHECK]["message"]
    # (Where the copy did not take, the grader's memory shows the change itself.)
    assert message.startswith("not verified") or "changed its argument `x` in place" in message, message
    correct = samples(tier)["correct_vectorized.py"]
    assert correct["score"] == correct["max_score"], correct


def test_the_argument_looks_like_any_callers_array(tmp_path, tier):
    """A function that copies only arrays it does not own (as the grader's shared memory
    would be) and changes a caller's own array in place must still lose the check."""
    report, _ = grade_attack(
        tmp_path,
        tier,
        CORRECT
        + """
def add_positional_encoding(x, base=10000.0):
    if not x.flags.owndata or x.base is not None:
        x = x.copy()
    x += sinusoidal_pe(x.shape[-2], x.shape[-1], base)
    return x.copy()
""",
    )
    assert_loses_exactly(report, (MUTATION_CHECK,))
    assert "changed its argument `x` in place" in checks(report)[MUTATION_CHECK]["message"]


def test_silencing_the_evidence_hook_takes_back_nothing(tmp_path, tier):
    """What the worker saw is sent as it happens: clearing the hook's record afterwards
    leaves the grader's copy whole."""
    report, _ = grade_attack(
        tmp_path, tier, CORRECT + COPIERS["through-gc-after-erasing-the-evidence"] + CHANGES_ITS_COPY
    )
    said = checks(report)[IMPORTS_CHECK]["message"]
    assert "gc.get_objects() (called while running)" in said, said


# --------------------------------------------------------------------------- the sandbox itself

BUMP = (
    FIND_WORKER
    + """
import os
import numpy as np

_kept = []   # every argument stays alive: mapping them must hold no descriptor


def open_fds():
    count = 0
    for fd in range(1024):
        try:
            os.fstat(fd)
            count += 1
        except OSError:
            pass
    return count


if _worker is not None:
    _call = _worker["Worker"].call

    def _forged_call(self, *args, **kwargs):
        _state.clear()
        reply, out = _call(self, *args, **kwargs)
        if "before" in _state:
            reply["inputs_after"] = _worker["wire"].encode(_state["before"], out)
        reply["aliases_input"] = False
        return reply, out

    _worker["Worker"].call = _forged_call


def bump(x, y, scale=1.0):
    _state["before"] = [x.copy(), y.copy(), scale]
    _kept.append((x, y))
    x += scale          # in place, then lies about it
    return y * 2        # y is left alone
"""
)


@pytest.fixture
def box(request, tmp_path, tier):  # every tier, fresh and warm (conftest)
    warm_workers = tier.warm
    path = write(tmp_path / "bump.py", BUMP)
    limits = Limits(call_seconds=5.0, submission_seconds=120)
    if warm_workers:
        slot = warm.Slot(limits, tier)
        request.addfinalizer(slot.close)
        sandbox = Sandbox(path, ["bump", "open_fds"], limits, tier, slot.spawn)
    else:
        sandbox = Sandbox(path, ["bump", "open_fds"], limits, tier)
    yield sandbox
    sandbox.close()


def grader_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_the_grader_reads_the_arguments_back_itself(box):
    """300 pipelined calls (windows of up to 32), each changing its first array in place
    while the worker's answers claim nothing changed: the grader sees every change in its
    own memory, the second array unchanged, the plain number as sent; no descriptor is
    left open on either side, although the submission keeps every argument alive."""
    assert box.load().status == "ok"
    worker_before = box.call("open_fds", []).value
    grader_before = grader_fds()
    items = [([np.full((3, 2), float(n)), np.arange(4.0) + n], {"scale": 0.5}) for n in range(300)]
    outcomes = list(box.calls("bump", items, return_inputs=True))
    assert [o.status for o in outcomes] == ["ok"] * len(items)
    for (args, _kwargs), outcome in zip(items, outcomes):
        x, y, scale = outcome.inputs_after
        assert np.array_equal(x, args[0] + 0.5), "the change in place was hidden"
        assert np.array_equal(y, args[1]) and scale == 0.5
        assert np.array_equal(outcome.value, args[1] * 2)
    assert box.restarts == 0
    assert grader_fds() == grader_before
    assert box.call("open_fds", []).value == worker_before


SENDS_DESCRIPTORS = """
import os
import numpy as np


def _worker_globals():
    try:
        raise RuntimeError
    except RuntimeError as exc:
        frame = exc.__traceback__.tb_frame
    while frame is not None:
        if "Worker" in frame.f_globals and "wire" in frame.f_globals:
            return frame.f_globals
        frame = frame.f_back
    return None


_worker = _worker_globals()
if _worker is not None:
    _wire, _socket = _worker["wire"], _worker["socket"]

    def _send_with_descriptors(sock, header, blobs=()):
        data = _wire.pack(header, blobs)
        fds = [fd for fd in range(64) if fd != sock.fileno() and _is_open(fd)][:16]
        _socket.send_fds(sock, [data], fds)   # one small frame, descriptors attached

    _wire.send = _send_with_descriptors


def _is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def bump(x, y, scale=1.0):
    return y * 2
"""


def test_the_grader_takes_no_descriptor_from_the_worker(tmp_path):
    """Descriptors go one way: a worker attaching its own to every answer gets none of
    them into the grader (which reads with no ancillary buffer), and its answers still
    count. (A guard of the new channel's direction: it holds on the old code too.)"""
    path = write(tmp_path / "sends.py", SENDS_DESCRIPTORS)
    with Sandbox(path, ["bump"], Limits(call_seconds=5.0, submission_seconds=60), RLIMITS) as sandbox:
        assert sandbox.load().status == "ok"
        before = grader_fds()
        items = [([np.zeros((2, 2)), np.arange(3.0)], {}) for _ in range(40)]
        outcomes = list(sandbox.calls("bump", items, return_inputs=True))
        assert [o.status for o in outcomes] == ["ok"] * len(items)
        assert all(np.array_equal(o.value, np.arange(3.0) * 2) for o in outcomes)
        assert grader_fds() == before


# --------------------------------------------------------------------------- the judge


# --------------------------------------------------------------------------- round three
# Code run through allowed APIs that turn data into code (issue 22, class 5): typing
# evaluates a string annotation, numpy unpickles bytes the file made. What runs there
# rewrites the harness that hands the function its argument and writes back what it did:
# the module's name for it (the old harness looked it up at each call), or the default the
# new one binds it to. Neither may turn an in-place add into a pass.

# What the smuggled code does, as one expression (it is evaluated, not executed).
REBIND_COPY_BACK = (
    "__import__('sys').modules['__main__'].__dict__.__setitem__('_copy_back', lambda *args, **kwargs: None)"
)
REPLACE_DEFAULTS = (
    "[setattr(f, '__defaults__', tuple((lambda *args, **kwargs: None) "
    "if n == '_copy_back' else d for n, d in zip(c.co_varnames[c.co_argcount - "
    "len(f.__defaults__):c.co_argcount], f.__defaults__))) for m in "
    "[__import__('sys').modules['__main__']] if hasattr(m, 'Worker') "
    "for f in [m.Worker.call] for c in [f.__code__]]"
)

SMUGGLERS = {
    # typing.get_type_hints evaluates the annotation (a string of the file) as code. (The
    # defaults variant attacks the harness as it is now; on main there were none to replace.)
    "type-hints-rebind-the-copy-back": f"""
import typing


class _Hints:
    x: "{REBIND_COPY_BACK}"


try:
    typing.get_type_hints(_Hints)
except Exception:
    pass
""",
    "type-hints-replace-the-defaults": f"""
import typing


class _Hints:
    x: "{REPLACE_DEFAULTS}"


try:
    typing.get_type_hints(_Hints)
except Exception:
    pass
""",
    # np.load(allow_pickle=True) of a pickle the file wrote: builtins.eval of the same code.
    "pickle-rebinds-the-copy-back": f"""
_PICKLE = b"cbuiltins\\neval\\n(V{REBIND_COPY_BACK}\\ntR."
with open("smuggled.pkl", "wb") as _f:
    _f.write(_PICKLE)
try:
    np.load("smuggled.pkl", allow_pickle=True)
except Exception:
    pass
""",
    # ... with the keyword spelled so that no scan of the source can read it.
    "pickle-keyword-hidden": f"""
_PICKLE = b"cbuiltins\\neval\\n(V{REBIND_COPY_BACK}\\ntR."
with open("smuggled.pkl", "wb") as _f:
    _f.write(_PICKLE)
try:
    np.load("smuggled.pkl", **{{"allow" + "_pick" + "le": True}})
except Exception:
    pass
""",
}


@pytest.mark.parametrize("attack", sorted(SMUGGLERS))
def test_code_smuggled_through_allowed_apis_earns_no_mutation_points(tmp_path, tier, samples, attack):
    # (it returns a copy of what it changed in place: only the grader's memory can tell)
    report, _ = grade_attack(tmp_path, tier, CORRECT + SMUGGLERS[attack] + CHANGES_ITS_COPY)
    by_name = checks(report)
    assert by_name[MUTATION_CHECK]["score"] == 0, by_name[MUTATION_CHECK]
    assert by_name[IMPORTS_CHECK]["score"] == 0, by_name[IMPORTS_CHECK]
    honest = samples(tier)["mistake_adds_in_place.py"]
    assert report["score"] <= honest["score"] - by_name[IMPORTS_CHECK]["max_score"], [
        c for c in report["checks"] if c["status"] != "passed"
    ]


def test_an_unrelated_import_costs_only_the_imports_point(tmp_path, tier):
    """One fault, one deduction: an unused `import os` is not evidence that the file reached
    the harness, so the mutation check still counts (it did not on main: 30/33)."""
    with open(os.path.join(PE_SAMPLES, "correct_vectorized.py")) as f:
        source = "import os\n" + f.read()
    report, _ = grade_attack(tmp_path, tier, source)
    assert_loses_exactly(report, (IMPORTS_CHECK,))


# The argument changed in place, then its shape or dtype changed too, so that no value-for-
# value copy back fits (red team, second pass: 33/33 on main, the copy back's failure read
# as "unchanged").
UNFITTING = {
    "resized": "    try:\n        x.resize(x.size + 1, refcheck=False)\n    except ValueError:\n        pass\n",
    "dtype-reinterpreted": "    try:\n        x.dtype = np.uint8\n    except (ValueError, AttributeError):\n        pass\n",
    "reshaped": "    try:\n        x.shape = (-1,)\n    except (ValueError, AttributeError):\n        pass\n",
}


@pytest.mark.parametrize("attack", sorted(UNFITTING))
def test_an_argument_changed_then_reshaped_still_counts_as_changed(tmp_path, tier, attack):
    source = (
        CORRECT
        + """

def add_positional_encoding(x, base=10000.0):
    x += sinusoidal_pe(x.shape[-2], x.shape[-1], base)
    out = x.copy()
"""
        + UNFITTING[attack]
        + "    return out\n"
    )
    report, _ = grade_attack(tmp_path, tier, source)
    assert_loses_exactly(report, (MUTATION_CHECK,))
    assert "changed its argument `x` in place" in checks(report)[MUTATION_CHECK]["message"]


# Honest files the route rules must leave alone (red team, second pass: each lost 3 points).
HONEST_ROUTES = {
    "singledispatch-with-future-annotations": "from __future__ import annotations\n"
    "from functools import singledispatch\n"
    + CORRECT.replace(
        "import numpy as np\n",
        """import numpy as np


@singledispatch
def _width(value: object) -> int:
    return int(value)


@_width.register
def _(value: np.ndarray) -> int:
    return int(value.shape[-1])
""",
    )
    + """

def add_positional_encoding(x: np.ndarray, base: float = 10000.0) -> np.ndarray:
    return x + sinusoidal_pe(x.shape[-2], _width(x), base)
""",
    "docstring-naming-dict": '"""Positional encoding. (Not stored in a __dict__ or globals(): plain numpy.)"""\n'
    + CORRECT
    + """

def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
""",
}


@pytest.mark.parametrize("honest", sorted(HONEST_ROUTES))
def test_honest_typing_and_prose_keep_full_marks(tmp_path, tier, honest):
    report, _ = grade_attack(tmp_path, tier, HONEST_ROUTES[honest])
    assert report["score"] == report["max_score"], [c for c in report["checks"] if c["status"] != "passed"]


def test_an_import_of_sys_for_a_constant_costs_the_imports_point_alone(tmp_path, tier):
    report, _ = grade_attack(
        tmp_path,
        tier,
        "import sys\n"
        + CORRECT
        + """

def add_positional_encoding(x, base=10000.0):
    assert sys.float_info.epsilon < 1e-10
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
""",
    )
    assert_loses_exactly(report, (IMPORTS_CHECK,))


def test_the_processs_own_memory_opened_is_a_route_to_the_harness(tmp_path, tier):
    """/proc/self/mem opened (its path built so no scan reads it) gives write access to every
    object of the process, the harness's included: the mutation check is not verified."""
    report, _ = grade_attack(
        tmp_path,
        tier,
        CORRECT
        + """
_where = "/pr" + "oc/self/m" + "em"
try:
    open(_where, "rb").close()
except OSError:
    pass


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
""",
    )
    assert_loses_exactly(report, (MUTATION_CHECK, IMPORTS_CHECK))
    assert checks(report)[MUTATION_CHECK]["message"].startswith("not verified"), checks(report)[
        MUTATION_CHECK
    ]


REBINDS_WHAT_THE_CHECK_USES = """
import builtins
import operator

import numpy as np

_real = np.frombuffer


def sinusoidal_pe(max_len, d_model, base=10000.0):
    # What the worker's look at numpy's names could use, made to say "nothing changed":
    builtins.all = lambda values: True
    builtins.map = lambda *a: iter(())
    operator.is_ = lambda a, b: True
    np.frombuffer = lambda *a, **k: _real(*a, **k)
    positions = np.arange(max_len, dtype=np.float64)[:, None]
    pairs = np.arange(d_model // 2, dtype=np.float64)
    angles = positions / np.power(base, 2.0 * pairs / d_model)
    table = np.zeros((max_len, d_model))
    table[:, 0 : 2 * len(pairs) : 2] = np.sin(angles)
    table[:, 1 : 2 * len(pairs) : 2] = np.cos(angles)
    return table


def add_positional_encoding(x, base=10000.0):
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""


def test_rebinding_numpy_is_seen_when_the_builtins_the_look_uses_are_rebound_too(tmp_path, tier):
    report, _ = grade_attack(tmp_path, tier, REBINDS_WHAT_THE_CHECK_USES)
    assert "numpy.frombuffer replaced()" in checks(report)[IMPORTS_CHECK]["message"]
    assert checks(report)[MUTATION_CHECK]["status"] != "passed"  # (not verified, as the message says)
