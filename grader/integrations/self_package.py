"""The running grader as files to ship elsewhere: a wheel of it, and pins of what it runs on.

Built from what is installed, not from a source checkout, so ``grader gradescope`` works
after a plain ``pip install``: the package files are those of the imported ``grader``
(whatever runs here is what ships, an editable install included), the metadata is the
installed distribution's. The pins are the exact versions installed here of everything the
grader needs, so Gradescope grades with the same numpy, Hypothesis... as the instructor.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import platform
import re
import sys
import zipfile
from collections.abc import Iterator
from importlib import metadata

import grader

DISTRIBUTION = "numgrader"  # the name on PyPI; the import package is `grader`
# Installer bookkeeping, the old RECORD and WHEEL: written anew for the wheel.
_NOT_SHIPPED = {"RECORD", "WHEEL", "INSTALLER", "REQUESTED", "direct_url.json"}
_REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?[^;]*(?:;(.*))?$")


class NotInstalled(Exception):
    """The grader runs without its distribution's metadata (e.g. from a checkout put on
    PYTHONPATH): there is nothing to take the wheel's metadata from."""


def distribution() -> metadata.Distribution:
    # The installed distribution's dist-info first: an editable install also leaves an
    # egg-info in the checkout, found first when the grader runs from there, without METADATA.
    found = sorted(metadata.distributions(name=DISTRIBUTION), key=lambda d: d.read_text("METADATA") is None)
    try:
        if not found:
            raise metadata.PackageNotFoundError(DISTRIBUTION)
        dist = found[0]
    except metadata.PackageNotFoundError:
        raise NotInstalled(
            f"no installed '{DISTRIBUTION}' distribution found for the grader at "
            f"{os.path.dirname(grader.__file__)}: install it (pip install . "
            "or pip install -e . in the grader's folder)"
        ) from None
    if dist.version != grader.__version__:
        raise NotInstalled(
            f"the installed '{DISTRIBUTION}' is version {dist.version} but the grader "
            f"being run is {grader.__version__}: reinstall it"
        )
    return dist


def wheel_name(dist: metadata.Distribution) -> str:
    return f"{DISTRIBUTION}-{dist.version}-py3-none-any.whl"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _package_files() -> Iterator[tuple[str, bytes]]:
    folder = os.path.dirname(os.path.abspath(grader.__file__))
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                yield "grader/" + os.path.relpath(path, folder).replace(os.sep, "/"), f.read()


def _metadata_files(dist: metadata.Distribution, info: str) -> Iterator[tuple[str, bytes]]:
    shipped: set[str] = set()
    for file in dist.files or []:
        parts = file.parts
        if (
            len(parts) >= 2
            and parts[0].endswith(".dist-info")
            and parts[-1] not in _NOT_SHIPPED
            and "__pycache__" not in parts
        ):
            name = "/".join(parts[1:])
            shipped.add(name)
            yield f"{info}/{name}", file.read_binary()
    for name in ("METADATA", "entry_points.txt"):  # an install without a RECORD
        text = dist.read_text(name) if name not in shipped else None
        if text is not None:
            yield f"{info}/{name}", text.encode()


def wheel_bytes(dist: metadata.Distribution) -> bytes:
    """A py3-none-any wheel of the grader being run (the grader is pure Python)."""
    info = f"{DISTRIBUTION}-{dist.version}.dist-info"
    members = list(_package_files()) + list(_metadata_files(dist, info))
    members.append(
        (
            f"{info}/WHEEL",
            (
                f"Wheel-Version: 1.0\nGenerator: {DISTRIBUTION} "
                f"{dist.version} (repacked from the installed grader)\n"
                "Root-Is-Purelib: true\nTag: py3-none-any\n"
            ).encode(),
        )
    )
    record = [_record_line(name, data) for name, data in members] + [f"{info}/RECORD,,"]
    members.append((f"{info}/RECORD", ("\n".join(record) + "\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in members:
            info_entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info_entry.external_attr = 0o644 << 16
            info_entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info_entry, data)
    return buffer.getvalue()


def pinned_requirements(dist: metadata.Distribution, extras: tuple[str, ...] = ()) -> list[str]:
    """``name==version[ ; marker]`` for every distribution the grader needs (its dependencies
    and theirs, and those of its own ``extras``: the frameworks a task allows), at the
    versions installed here. A dependency kept
    out by its marker on this machine is not installed here and so not pinned; pip resolves
    it on the other side if that side needs it. Markers are kept so the other side judges
    them for itself."""
    pins: dict[str, str] = {}
    pending: list[tuple[str, tuple[str, ...]]] = [(r, tuple(extras)) for r in dist.requires or []]
    while pending:
        requirement, extras = pending.pop()
        match = _REQUIREMENT.match(requirement)
        if not match:
            continue
        name, wanted, marker = match.group(1), match.group(2), (match.group(3) or "").strip()
        if "extra" in marker:
            # Only the extras asked for by whoever required this one; the clause itself
            # cannot be judged by pip outside that package, so it is dropped.
            if not any(re.search(rf"extra\s*==\s*['\"]{re.escape(e)}['\"]", marker) for e in extras):
                continue
            marker = ""
        try:
            dep = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        key = re.sub(r"[-_.]+", "-", dep.metadata["Name"]).lower()
        if key in pins:
            if not marker:  # needed unconditionally by someone (numpy by the grader itself)
                pins[key] = pins[key].split(" ; ")[0]
            continue
        pins[key] = f"{dep.metadata['Name']}=={dep.version}" + (f" ; {marker}" if marker else "")
        asked = tuple(e.strip() for e in (wanted or "").split(",") if e.strip())
        pending.extend((r, asked) for r in dep.requires or [])
    return [pins[k] for k in sorted(pins)]


# Where pip finds PyTorch's CPU-only builds ("torch==2.13.0+cpu"): PyPI has only the CUDA ones.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def extra_index(pins: list[str]) -> str | None:
    """The index beside PyPI that the pins need (PyTorch's CPU build), if any."""
    return TORCH_CPU_INDEX if any(p.lower().startswith("torch==") and "+cpu" in p for p in pins) else None


def requirements_text(
    dist: metadata.Distribution,
    extras: tuple[str, ...] = (),
    pins: list[str] | None = None,
    checked_for: str = "",
) -> str:
    """requirements.txt: ``pins`` (default: those installed here), ``checked_for`` the
    Python they were checked to install on (target_pins.py; empty: unchecked)."""
    pins = pinned_requirements(dist, extras) if pins is None else pins
    index = extra_index(pins)
    built = f"{DISTRIBUTION} {dist.version}, Python {platform.python_version()}, {sys.platform} {platform.machine()}"
    header = (
        f"# For Python {checked_for} on Linux x86_64 (wheels only), checked against the package index\n"
        f"# when this autograder was built ({built}): the versions installed there, or the newest\n"
        f"# that install on Python {checked_for} where those do not.\n"
        if checked_for
        else f"# The versions installed where this autograder was built ({built}), not checked\n"
        "# against the package index (--offline).\n"
    )
    return (
        header
        + "# setup.sh installs exactly these, then the grader's wheel.\n"
        + "\n".join(
            ([f"# PyTorch's CPU build is not on PyPI.\n--extra-index-url {index}"] if index else []) + pins
        )
        + "\n"
    )
