"""Hostile submissions, round two: what workers share with the grader and with each other
beyond files, processes and the network. Run under every tier and mode that works here,
like test_adversarial.py.

- The kernel's keyrings: a worker must neither read the grader's keys (keyctl, /proc/keys)
  nor leave a key behind for the next student's worker.
- Memory and disk: a worker's scratch space is capped and dies with it; what it leaves
  (even in a folder it made unlistable) must not cost the next students points, and in the
  landlock tier it must not fill the machine's disk.
"""

import ctypes
import json
import os
import re
import secrets
import tempfile
import textwrap
import threading
import time

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK
from helpers.tiers import ISOLATING
from test_adversarial import BUDGET_SECONDS, CALL_SECONDS, ZEROS

SYS_ADD_KEY, SYS_KEYCTL = 248, 250  # x86_64
KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = -3, -4
KEYCTL_UNLINK, KEYCTL_SEARCH = 9, 10
MIB = 1 << 20
SCRATCH_CAP = 256 * MIB  # Limits.scratch_mib's default

pytestmark = pytest.mark.skipif(os.uname().machine != "x86_64", reason="system call numbers are x86_64's")


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def add_key(description: str, payload: bytes, keyring: int) -> int:
    key = _libc().syscall(
        ctypes.c_long(SYS_ADD_KEY),
        b"user",
        description.encode(),
        payload,
        ctypes.c_size_t(len(payload)),
        ctypes.c_int(keyring),
    )
    assert key > 0, f"add_key failed: {os.strerror(ctypes.get_errno())}"
    return key


def find_key(description: str, keyring: int) -> int:
    return _libc().syscall(
        ctypes.c_long(SYS_KEYCTL),
        ctypes.c_int(KEYCTL_SEARCH),
        ctypes.c_int(keyring),
        b"user",
        description.encode(),
        ctypes.c_int(0),
    )


def unlink_key(key: int, keyring: int) -> None:
    _libc().syscall(
        ctypes.c_long(SYS_KEYCTL), ctypes.c_int(KEYCTL_UNLINK), ctypes.c_int(key), ctypes.c_int(keyring)
    )


def grade_class(tmp_path, tier, files: dict[str, str], extra=()):
    """Grade a class folder in one ``grader batch --jobs 1`` (warm workers in warm modes, a
    fresh worker per file otherwise); returns {student: report}."""
    folder = tmp_path / "class"
    folder.mkdir()
    for name, source in files.items():
        (folder / name).write_text(textwrap.dedent(source))
    out = tmp_path / "out"
    warmth = [] if tier.warm else ["--no-warm"]
    done = run_cli(
        "batch",
        PE_TASK,
        str(folder),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--force",
        "--isolation",
        tier,
        "--call-seconds",
        str(CALL_SECONDS),
        "--submission-seconds",
        str(BUDGET_SECONDS),
        *warmth,
        *extra,
        *(["--trusted-submissions"] if tier == "rlimits" else []),  # (test_unsafe_tiers)
        timeout=BUDGET_SECONDS * 4 * len(files) + 60,
    )
    assert done.returncode in (0, 1), f"the grader itself failed: {done.stderr[-2000:]}"
    reports = [
        json.loads(line) for line in (out / "reports-positional-encoding.jsonl").read_text().splitlines()
    ]
    assert len(reports) == len(files), done.stderr[-2000:]
    by_student = {r["student"]: r for r in reports}
    assert all(r["isolation"] == tier for r in reports)
    return by_student


def grade_one(tmp_path, tier, source):
    return grade_class(tmp_path, tier, {"attack.py": source})["attack"]


# --------------------------------------------------------------------------- keyrings

KEY_THIEF = """
import ctypes, os
import numpy as np

def _loot():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    found = []
    def keyctl(*args):
        return libc.syscall(ctypes.c_long(250), *[ctypes.c_long(a) if isinstance(a, int) else a
                                                  for a in args])
    ids = set()
    for ring in (-3, -4, -5, -1, -2):   # session, user, user-session, thread, process
        key = keyctl(10, ring, b"user", b"DESCRIPTION", 0)   # KEYCTL_SEARCH
        if key > 0:
            ids.add(key)
    try:
        listing = open("/proc/keys").read()
        found.append("PROC-KEYS:" + listing)
        ids.update(int(line.split()[0], 16) for line in listing.splitlines() if line.strip())
    except OSError as exc:
        found.append(f"no /proc/keys: {exc}")
    for key in ids:
        buf = ctypes.create_string_buffer(4096)
        n = keyctl(11, key, buf, 4096)   # KEYCTL_READ
        if n > 0:
            found.append("READ:" + buf.raw[:min(n, 4096)].decode("latin-1"))
    for ring in (-3, -4, -5):
        note = libc.syscall(ctypes.c_long(248), b"user", b"NOTE-DESCRIPTION", b"NOTE-PAYLOAD",
                            ctypes.c_size_t(12), ctypes.c_int(ring))
        if note > 0:
            found.append(f"ADDED-KEY:{ring}")
    raise RuntimeError(" | ".join(found))

def sinusoidal_pe(max_len, d_model, base=10000.0):
    _loot()

def add_positional_encoding(x, base=10000.0):
    _loot()
"""


def test_the_graders_keys_are_out_of_reach(tmp_path, tier):
    """The test (standing in for the grader's user) holds a key in its session keyring; the
    worker can neither read it (keyctl search/read, /proc/keys) nor add a key anywhere."""
    description, payload = f"grader-test-{secrets.token_hex(6)}", f"s3cr3t-{secrets.token_hex(8)}"
    note = f"grader-note-{secrets.token_hex(6)}"
    key = add_key(description, payload.encode(), KEY_SPEC_SESSION_KEYRING)
    try:
        report = grade_one(
            tmp_path, tier, KEY_THIEF.replace("NOTE-DESCRIPTION", note).replace("DESCRIPTION", description)
        )
    finally:
        unlink_key(key, KEY_SPEC_SESSION_KEYRING)
        left = find_key(note, KEY_SPEC_USER_KEYRING)
        if left > 0:
            unlink_key(left, KEY_SPEC_USER_KEYRING)
    text = json.dumps(report)
    assert "READ:" in text or "no /proc/keys" in text or "PROC-KEYS" in text, "the attack did not run"
    assert payload not in text, "the worker read the grader's key"
    assert "ADDED-KEY" not in text, "the worker added a key"
    assert left <= 0, "the worker left a key in the user keyring"
    if tier in ISOLATING:  # the rlimits tier reads what the grader's user can (/proc/keys)
        assert description not in text, "the worker saw the grader's key listed"


NOTE_WRITER = (
    """
import ctypes
import numpy as np

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for ring in (-3, -4, -5):   # session, user, user-session keyrings
    libc.syscall(ctypes.c_long(248), b"user", b"DESCRIPTION", b"PAYLOAD", ctypes.c_size_t(len(b"PAYLOAD")),
                 ctypes.c_int(ring))
"""
    + ZEROS
)

NOTE_READER = """
import ctypes
import numpy as np

def _read_note():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    found = []
    for ring in (-3, -4, -5):
        key = libc.syscall(ctypes.c_long(250), ctypes.c_long(10), ctypes.c_long(ring), b"user",
                           b"DESCRIPTION", ctypes.c_long(0))
        if key > 0:
            buf = ctypes.create_string_buffer(256)
            n = libc.syscall(ctypes.c_long(250), ctypes.c_long(11), ctypes.c_long(key), buf, ctypes.c_long(256))
            found.append(f"FOUND:{buf.raw[:max(n, 0)].decode('latin-1')}")
    raise RuntimeError(" ".join(found) or "nothing found")

def sinusoidal_pe(max_len, d_model, base=10000.0):
    _read_note()

def add_positional_encoding(x, base=10000.0):
    _read_note()
"""


def test_no_note_in_a_keyring_for_the_next_student(tmp_path, tier):
    """Two students in one batch (one warm server in warm modes): the first leaves a key in
    every keyring it can reach, the second looks for it."""
    description, payload = f"grader-note-{secrets.token_hex(6)}", f"note-{secrets.token_hex(8)}"
    try:
        reports = grade_class(
            tmp_path,
            tier,
            {
                "a_writer.py": NOTE_WRITER.replace("DESCRIPTION", description).replace("PAYLOAD", payload),
                "b_reader.py": NOTE_READER.replace("DESCRIPTION", description),
            },
        )
    finally:
        left = find_key(description, KEY_SPEC_USER_KEYRING)
        if left > 0:
            unlink_key(left, KEY_SPEC_USER_KEYRING)
    text = json.dumps(reports["b_reader"])
    assert "nothing found" in text or "FOUND" in text, "the reader did not run"
    assert payload not in text, "the second student read the first one's note"
    assert left <= 0, "a note was left in the user keyring"


# --------------------------------------------------------------------------- memory and disk

HOARDER = """
import os
import numpy as np

def _hoard():
    os.mkdir("hoard")
    os.chmod("hoard", 0o300)   # unlistable: a plain rmtree cannot empty it
    block = b"x" * (8 << 20)
    written = 0
    try:
        while written < (MEBIBYTES << 20):
            with open(f"hoard/{written}", "wb") as f:
                for _ in range(8):
                    f.write(block)
                    written += len(block)
    except OSError:
        pass
    return written

WRITTEN = _hoard()
""" + ZEROS.replace(
    "    return np.zeros((max_len, d_model))", "    raise RuntimeError(f'WROTE {WRITTEN} bytes')"
)


def _correct() -> str:
    with open(os.path.join(PE_SAMPLES, "correct_vectorized.py")) as f:
        return f.read()


def test_a_hoard_in_an_unlistable_folder_costs_the_next_students_nothing(tmp_path, tier):
    """The first student fills an unlistable folder of its scratch space with nearly all the
    memory the slot has (a tmpfs is charged to it); the correct students after it in the
    same batch (the same warm server in warm modes) must keep full marks."""
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier does not confine writes; its reports say so")
    memory_mib = 512
    reports = grade_class(
        tmp_path,
        tier,
        {
            "a_hoarder.py": HOARDER.replace("MEBIBYTES", str(memory_mib - 32)),
            "b_correct.py": _correct(),
            "c_correct.py": _correct(),
            "d_correct.py": _correct(),
        },
        extra=["--memory-mib", str(memory_mib)],
    )
    for student in ("b_correct", "c_correct", "d_correct"):
        r = reports[student]
        assert r["score"] == r["max_score"], (student, [c["message"] for c in r["checks"] if c["message"]])


def _host_bytes(folders) -> int:
    total = 0
    for folder in folders:
        for here, _dirs, files in os.walk(folder):
            for name in files:
                try:
                    total += os.lstat(os.path.join(here, name)).st_blocks * 512
                except OSError:
                    pass
    return total


def test_scratch_writes_stay_under_the_cap(tmp_path, tier):
    """The worker writes 1 GiB into its folder (64 MiB per file, the per-file cap): it is
    stopped at the scratch cap, and not a byte of it lands on the machine's disk."""
    if tier not in ISOLATING:
        pytest.skip("the rlimits tier does not confine writes; its reports say so")
    tmp = tempfile.gettempdir()
    before = set(os.listdir(tmp))
    peak, done = [0], threading.Event()

    def watch():
        while not done.is_set():
            new = [os.path.join(tmp, n) for n in set(os.listdir(tmp)) - before if n.startswith("grader-")]
            peak[0] = max(peak[0], _host_bytes(new))
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        report = grade_one(
            tmp_path,
            tier,
            HOARDER.replace("MEBIBYTES", "1024").replace(
                "WRITTEN = _hoard()", "WRITTEN = _hoard()\nimport time; time.sleep(0.5)  # for the watcher"
            ),
        )
    finally:
        done.set()
        watcher.join()
    text = json.dumps(report)
    wrote = [int(n) for n in re.findall(r"WROTE (\d+) bytes", text)[:1]]
    assert wrote, f"the attack did not report: {text[:2000]}"
    print(
        f"{tier.label}: the worker wrote {wrote[0] / MIB:.0f} MiB; "
        f"the host's temp folder held at most {peak[0] / MIB:.0f} MiB"
    )
    assert wrote[0] <= SCRATCH_CAP, f"the worker wrote {wrote[0] / MIB:.0f} MiB"
    assert peak[0] < 16 * MIB, f"{peak[0] / MIB:.0f} MiB landed on the host's disk"
