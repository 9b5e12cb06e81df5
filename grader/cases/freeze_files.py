"""Frozen cases: a task's cases and the reference's outputs, generated once and kept in the
task folder as plain data, so a grade never depends on the installed Hypothesis or numpy.

``TASK/frozen/`` holds ``cases.json`` (every check's argument sets and expected outputs,
as JSON with arrays named by their SHA-256, and for each generated array drawn from a seed
its recipe, which only the failing input shown to a student uses), ``arrays/<sha256>.npy`` (each array once,
read with ``allow_pickle=False``; a file must hash to its name) and ``manifest.json`` (the
grader version that froze it, the SHA-256 of ``task.yaml`` and of the reference it was
frozen from, and the digest of it all). A freeze is stale when ``task.yaml`` or the
reference changed since: grading refuses it with the command that refreezes.

Written here too (``write_freeze``, from the entries ``cases_entry`` and ``value_entry`` make), by
``grader freeze`` (authoring/freezing.py, which computes what goes in), so that the format is
one module's. A kit (kit.py) carries a freeze of the public checks only, made from the full task, with
no reference: its manifest says ``kit`` and records the kit's own ``task.yaml``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

from grader import __version__
from grader.cases.model import CaseSet
from grader.disk import read_json, swap_folder, write_json
from grader.sandbox import wire
from grader.task.spec import CheckSpec, SpecError, Task

FREEZE_FOLDER, CASES, MANIFEST, ARRAYS = "frozen", "cases.json", "manifest.json", "arrays"
# Hashing every array on every run costs more than decoding them (20 MB for the
# positional-encoding task): a file found to hash to its name is remembered in the cache by
# its size, times and inode, as git's index does, and hashed again only when one changed.
VERIFIED = "verified"
FORMAT = 1
_CAPS = wire.Caps(json_bytes=256 << 20, blob_count=1 << 20, total_bytes=4 << 30)


@dataclass(frozen=True)
class Freeze:
    digest: str  # over the spec, the reference and every byte of the data
    grader_version: str  # the grader that froze it
    kit: bool
    checks: dict  # check name -> its entry in cases.json (encoded, arrays by sha)
    folder: str
    # the values checks one repeated value passes (policy.one_fill_checks), found when it
    # was frozen; None in a freeze older than that (found when the task is prepared)
    one_fill: frozenset[str] | None = None
    # the known mistakes' profile, found when it was frozen (mistakes.MistakeRuns.frozen_profile:
    # which checks each fails, and the mistakes.py it was found with); None: not kept
    mistakes: dict | None = None
    # the arrays read so far (each once, however many checks share it), and which files
    # were found to hash to their names (kept across runs: VERIFIED)
    _read: dict[str, bytes] = field(default_factory=dict, compare=False, repr=False)
    _stamps: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)
    _new_stamps: dict[str, list[int]] = field(default_factory=dict, compare=False, repr=False)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return sha256(f.read())
    except OSError:
        return None


def freeze_present(task_folder: str) -> bool:
    return os.path.isfile(os.path.join(task_folder, FREEZE_FOLDER, MANIFEST))


def refreeze_command(task: Task) -> str:
    return f"grader freeze {task.folder}"


def digest_of(
    spec_sha: str | None, reference_sha: str | None, cases_sha: str | None, array_shas: list[str]
) -> str:
    h = hashlib.sha256(json.dumps([FORMAT, spec_sha, reference_sha, cases_sha, array_shas]).encode())
    return h.hexdigest()[:24]


# --------------------------------------------------------------------------- reading


def load_freeze(task: Task) -> Freeze | None:
    """The task's freeze, checked current; None when the task has none. A stale or damaged
    freeze is a SpecError (exit 2) that says how to refreeze."""
    folder = os.path.join(task.folder, FREEZE_FOLDER)
    manifest_path = os.path.join(folder, MANIFEST)
    if not os.path.isfile(manifest_path):
        return None
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
        with open(os.path.join(folder, CASES), "rb") as f:
            cases_json = f.read()
        data = json.loads(cases_json)
        checks = data["checks"]
        kit = manifest.get("kit") is True
        one_fill = data.get("one_fill")
        if one_fill is not None and not (
            isinstance(one_fill, list) and all(isinstance(n, str) for n in one_fill)
        ):
            raise TypeError("its one_fill is not a list of check names")
        mistakes = data.get("mistakes")
        if mistakes is not None and not isinstance(mistakes, dict):
            raise TypeError("its mistakes is not a mapping")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SpecError(
            [f"{folder}: the frozen cases cannot be read ({exc}); run: {refreeze_command(task)}"]
        ) from None
    problems = []
    if manifest.get("format") != FORMAT:
        problems.append(
            f"{manifest_path}: frozen with format {manifest.get('format')!r}, "
            f"this grader reads format {FORMAT}"
        )
    if manifest.get("spec_sha256") != file_sha(task.spec_path):
        problems.append(f"{task.spec_path}: changed since the cases were frozen")
    if not kit and manifest.get("reference_sha256") != file_sha(task.reference_path):
        problems.append(f"{task.reference_path}: changed since the cases were frozen")
    if manifest.get("cases_sha256") != sha256(cases_json):
        problems.append(f"{os.path.join(folder, CASES)}: changed since it was written")
    array_names = sorted({n for entry in checks.values() for n in entry.get("arrays", [])})
    if manifest.get("digest") != digest_of(
        manifest.get("spec_sha256"),
        manifest.get("reference_sha256"),
        manifest.get("cases_sha256"),
        array_names,
    ):
        problems.append(f"{manifest_path}: its digest does not match its contents")
    if problems:
        how = "ask for a new kit" if kit else f"run: {refreeze_command(task)}"
        raise SpecError(
            [f"the frozen cases of {task.id} are stale: {p}" for p in problems]
            + [f"  Grading never falls back to new cases; {how}."]
        )
    return Freeze(
        manifest["digest"],
        str(manifest.get("grader_version", "?")),
        kit,
        checks,
        folder,
        None if one_fill is None else frozenset(one_fill),
        mistakes,
    )


def _blobs(freeze: Freeze, entry: dict) -> list[bytes]:
    return [_blob(freeze, name) for name in entry.get("arrays", [])]


def _blob(freeze: Freeze, name: str) -> bytes:
    blob = freeze._read.get(name)
    if blob is not None:
        return blob
    path = os.path.join(freeze.folder, ARRAYS, f"{name}.npy")
    try:
        with open(path, "rb") as f:
            info = os.fstat(f.fileno())
            blob = f.read()
    except OSError as exc:
        raise SpecError([f"{path}: a frozen array is missing ({exc.strerror})"]) from None
    stamp = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
    if not freeze._stamps and not freeze._new_stamps:
        freeze._stamps.update(_verified(freeze))
    if freeze._stamps.get(name) != stamp or len(blob) != info.st_size:
        if sha256(blob) != name:
            raise SpecError([f"{path}: a frozen array does not match its name (damaged)"])
        freeze._new_stamps[name] = stamp
    freeze._read[name] = blob
    return blob


def _verified_key(freeze: Freeze) -> str:
    return sha256(f"{os.path.realpath(freeze.folder)}\0{freeze.digest}".encode())[:32]


def _verified(freeze: Freeze) -> dict[str, list[int]]:
    """The arrays of this freeze found intact before, by file stamp (VERIFIED)."""
    data = read_json(VERIFIED, _verified_key(freeze))
    if not isinstance(data, dict):
        return {}
    return {
        str(k): v
        for k, v in data.items()
        if isinstance(v, list) and len(v) == 4 and all(type(n) is int for n in v)
    }


def remember_verified(freeze: Freeze) -> None:
    """Keep the stamps of the arrays hashed in this run, so the next run need not."""
    if freeze._new_stamps:
        freeze._stamps.update(freeze._new_stamps)
        freeze._new_stamps.clear()
        write_json(VERIFIED, _verified_key(freeze), freeze._stamps)


def frozen_cases(freeze: Freeze, check: CheckSpec) -> CaseSet:
    """A check's frozen cases, decoded (read and checked once per prepared task: read per
    submission, they cost a pool process ~0.25 s each)."""
    entry = _entry(freeze, check)
    blobs = _blobs(freeze, entry)
    return CaseSet(  # (read-only views of the arrays read: trusted data, never written)
        wire.decode(entry["cases"], blobs, _CAPS, read_only=True),
        wire.decode(entry["expected"], blobs, _CAPS, read_only=True),
        int(entry["literal_count"]),
        _recipes(entry),
    )


def _recipes(entry: dict) -> list[dict]:
    """The recipes of a check's cases (display only: one that is not a dict of recipes
    is left out, and rebuild.py checks each against its array before showing it)."""
    recipes = entry.get("recipes")
    if not isinstance(recipes, list):
        return []
    return [r if isinstance(r, dict) else {} for r in recipes]


def value(freeze: Freeze, check: CheckSpec) -> Any:
    """The reference's value a script check compares with."""
    entry = _entry(freeze, check)
    return wire.decode(entry["value"], _blobs(freeze, entry), _CAPS)


def _entry(freeze: Freeze, check: CheckSpec) -> dict:
    entry = freeze.checks.get(check.name)
    if not isinstance(entry, dict):
        raise SpecError(
            [
                f"{freeze.folder}: no frozen cases for check '{check.name}'; "
                f"the freeze is older than the task: refreeze it"
            ]
        )
    return entry


# --------------------------------------------------------------------------- writing


def cases_entry(cases: CaseSet, arrays: dict[str, bytes]) -> dict:
    """A check's case set as its entry in cases.json; its arrays added to ``arrays``."""
    blobs: list[bytes] = []
    entry: dict[str, Any] = {
        "cases": wire.encode(cases.cases, blobs),
        "expected": wire.encode(cases.expected, blobs),
        "literal_count": cases.literal_count,
    }
    if any(cases.recipes):
        entry["recipes"] = cases.recipes
    return _with_arrays(entry, blobs, arrays)


def value_entry(value: Any, arrays: dict[str, bytes]) -> dict:
    """A script check's reference value as its entry in cases.json."""
    blobs: list[bytes] = []
    return _with_arrays({"value": wire.encode(value, blobs)}, blobs, arrays)


def _with_arrays(entry: dict, blobs: list[bytes], arrays: dict[str, bytes]) -> dict:
    names = []
    for blob in blobs:
        arrays[sha256(blob)] = blob
        names.append(sha256(blob))
    entry["arrays"] = names
    return entry


def write_freeze(
    target: str,
    task: Task,
    data: dict,
    arrays: dict[str, bytes],
    spec_sha: str | None,
    reference_sha: str | None,
    kit: bool,
) -> str:
    """Write a freeze of ``data`` (its ``checks`` entries, and what else cases.json keeps)
    to ``target``; returns its digest."""
    cases_json = json.dumps({"format": FORMAT, "task": task.id, **data}, sort_keys=True, indent=1).encode()
    digest = digest_of(spec_sha, reference_sha, sha256(cases_json), sorted(arrays))
    manifest = {
        "format": FORMAT,
        "grader_version": __version__,
        "task": task.id,
        "kit": kit,
        "spec_sha256": spec_sha,
        "reference_sha256": reference_sha,
        "cases_sha256": sha256(cases_json),
        "digest": digest,
    }
    _write_folder(target, cases_json, arrays, manifest)
    return digest


def _write_folder(target: str, cases_json: bytes, arrays: dict[str, bytes], manifest: dict) -> None:
    """Write the whole freeze beside the old one, then swap: never half a freeze."""
    parent = os.path.dirname(target)
    os.makedirs(parent, exist_ok=True)
    fresh = tempfile.mkdtemp(prefix=".frozen-", dir=parent)
    try:
        os.makedirs(os.path.join(fresh, ARRAYS))
        for name, blob in arrays.items():
            with open(os.path.join(fresh, ARRAYS, name + ".npy"), "wb") as f:
                f.write(blob)
        with open(os.path.join(fresh, CASES), "wb") as f:
            f.write(cases_json)
        with open(os.path.join(fresh, MANIFEST), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
            f.write("\n")
        os.chmod(fresh, 0o755)
        swap_folder(fresh, target)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
