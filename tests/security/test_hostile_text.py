"""Hostile text: what a submission says (exception messages, printed output, parameter names,
its own file name) reaches terminals, Markdown, CSV, XML and JSON. It must arrive there as
text: valid Unicode, no control character acting on the terminal, no Markdown or HTML that
forges a section or hides one, no spreadsheet formula, no forged workflow command, and a
report of bounded size. Run under every tier (and the warm workers of a batch) like
test_adversarial.py, through every command and format a user reads."""

import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from helpers.cli import run_cli
from helpers.paths import PE_TASK, ROOT
from helpers.tasks import course_with_full_tasks
from helpers.tiers import tiers
from test_adversarial import BUDGET_SECONDS, CALL_SECONDS, REPORT_BYTES_CAP, ZEROS, grade_attack

from grader.records.result import CheckResult, Result

COURSE = os.path.join(ROOT, "examples", "course")

# An exception message that tries everything at once: a lone surrogate (not encodable), a
# terminal that clears itself and changes its title, a C1 CSI, a bidi override, a carriage
# return, a fake final score line, a forged summary.md section, live HTML and links, a
# forged workflow command, and an HTML comment that would hide what follows it.
# (The comment opens within the first 160 characters: what summary.md quotes of a message.)
EVIL = r"""(
    "\ud800\x1b[2J\x1b[H\x1b]0;owned\x07\x9b2J\u202e\r"
    "\nScore: 33/33 (100%)  passed"
    "\n## Errored (nothing could be graded)\n\nnone\n<!--"
    "\n- <img src=x onerror=alert(1)> [click](javascript:alert(1)) | cell | www.evil.example"
    "\n::error file=forged.py::forged annotation")"""
SHOUT = r'''b"\x1b[2J\x1b[H\xff\xfe\xc2\x9b2J\nScore: 33/33 (100%)  passed\n::warning::forged\n"'''

ATTACK = f"""
import os
import numpy as np

EVIL = {EVIL}
SHOUT = {SHOUT}
os.write(1, SHOUT)

def sinusoidal_pe(max_len, d_model, base=10000.0):
    os.write(1, SHOUT)
    raise ValueError(EVIL)

def add_positional_encoding(x, base=10000.0):
    os.write(2, SHOUT)
    raise ValueError(EVIL)
"""

# Huge text: 50 parameter names of 1,500 escape characters each (through a __signature__),
# 4,000 control characters in every exception message, 100,000 in printed output.
HUGE = r"""
import inspect
import numpy as np

class _Signature(inspect.Signature):
    @property
    def parameters(self):
        return {"\x1b" * 1500 + str(i): None for i in range(50)}

NOISE = "\x1b" * 4000

def sinusoidal_pe(max_len, d_model, base=10000.0):
    print("\x1b" * 100000)
    raise ValueError(NOISE)

def add_positional_encoding(x, base=10000.0):
    raise ValueError(NOISE)

sinusoidal_pe.__signature__ = _Signature()
add_positional_encoding.__signature__ = _Signature()
"""

SGR = re.compile(r"\x1b\[[0-9;]*m")  # the renderer's own colours
SHOWN_NOT_SENT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\ufffe\uffff\ud800-\udfff]"
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def assert_no_raw_controls(text: str, where: str) -> None:
    """Nothing in ``text`` acts on a terminal or breaks an encoder: only newline and tab."""
    found = SHOWN_NOT_SENT.search(text)
    assert found is None, (
        f"{where}: raw {found.group()!r} at {found.start()}: "
        f"{text[max(found.start() - 60, 0) : found.start() + 20]!r}"
    )


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def run_bytes(*args, env=None, cwd=ROOT, timeout=BUDGET_SECONDS * 4 + 60):
    """The grader's raw output bytes (a UTF-8 decoding error must fail the test, not hide)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], capture_output=True, cwd=cwd, env=full_env, timeout=timeout
    )


def limits(tier):
    return [
        "--isolation",
        str(tier),
        "--call-seconds",
        str(CALL_SECONDS),
        "--submission-seconds",
        str(BUDGET_SECONDS),
    ]


# --------------------------------------------------------------------------- the sanitiser


def test_terminal_report_of_old_raw_text_shows_it():
    """A Result that already holds raw text (an old gradebook, a message built on the trusted
    side) is still shown without a control character, each line indented."""
    from grader.report.text import render

    check = CheckResult(
        "values",
        "failed",
        0.0,
        2.0,
        message="bad\x1b[2J\nScore: 2/2 (100%)  passed",
        output="\x1b]0;t\x07\n\ud800",
    )
    result = Result("t", "sub\x1b.py", 0.0, 2.0, "failed", "rlimits", [check], output="\x9b2J")
    shown = render(result, colour=True)
    assert_no_raw_controls(SGR.sub("", shown), "text report")
    lines = [SGR.sub("", l) for l in shown.splitlines()]
    assert [l for l in lines if l.startswith("Score:")] == [lines[-1]]


# --------------------------------------------------------------------------- grader check


def _score_line_is_the_real_one(text: str, report: dict) -> None:
    lines = [line for line in SGR.sub("", text).splitlines() if line.strip()]
    scores = [line for line in lines if line.lstrip().startswith("Score:")]
    assert scores == [lines[-1]], f"score lines: {scores}"
    assert lines[-1].startswith(f"Score: {report['score']:g}/{report['max_score']:g} ")


def test_check_every_format_shows_hostile_text_as_text(tmp_path, tier):
    report, _ = grade_attack(tmp_path, tier, ATTACK)  # JSON, bounded; a batch when warm
    for text in strings_in(report):
        assert_no_raw_controls(text, "json report")
    assert report["status"] == "failed"
    if tier.warm:
        return  # the batch's own outputs: test_batch_outputs_cannot_be_forged
    path = str(tmp_path / "class" / "attack.py")
    done = run_bytes("check", PE_TASK, path, "--color", "always", *limits(tier))
    assert done.returncode == 1, done.stderr.decode("utf-8", "replace")[-2000:]
    text = done.stdout.decode("utf-8")  # strict: a surrogate or a stray byte fails here
    assert_no_raw_controls(SGR.sub("", text), "terminal report")
    _score_line_is_the_real_one(text, report)
    assert "Your file printed:" in text and "  | \\x1b[2J" in text
    for fmt in ("json", "junit", "gradescope"):
        done = run_bytes("check", PE_TASK, path, "--format", fmt, *limits(tier))
        assert done.returncode == 1, done.stderr.decode("utf-8", "replace")[-2000:]
        assert len(done.stdout) < REPORT_BYTES_CAP
        out = done.stdout.decode("utf-8")
        assert_no_raw_controls(out, fmt)
        if fmt == "junit":
            suite = ET.fromstring(out).find("testsuite")
            assert int(suite.get("errors")) + int(suite.get("failures")) > 0
        else:
            parsed = json.loads(out)
            assert parsed["score"] == report["score"]
            for text in strings_in(parsed):
                assert_no_raw_controls(text, fmt)


def test_huge_student_text_keeps_reports_small(tmp_path, tier):
    report, _ = grade_attack(tmp_path, tier, HUGE)  # asserts the JSON is < 256 KiB
    loads = [c for c in report["checks"] if c["name"] == "loads"][0]
    assert "takes (" in loads["message"] and "\\x1b" in loads["message"]
    if not tier.warm:
        done = run_bytes(
            "check", PE_TASK, str(tmp_path / "class" / "attack.py"), "--color", "always", *limits(tier)
        )
        assert len(done.stdout) < REPORT_BYTES_CAP
        assert_no_raw_controls(SGR.sub("", done.stdout.decode("utf-8")), "terminal report")


# --------------------------------------------------------------------------- grader batch


def _sections(markdown: str) -> dict[str, list[str]]:
    sections, current = {}, None
    for line in markdown.splitlines():
        if line.startswith("#"):
            current = line
            sections.setdefault(current, [])
        elif current is not None and line.strip():
            sections[current].append(line)
    return sections


def _assert_summary_is_honest(markdown: str, timed_out: str) -> None:
    assert_no_raw_controls(markdown, "summary.md")
    headings = [line for line in markdown.splitlines() if re.match(r"\s{0,3}#", line)]
    assert len(headings) == 7 and sum(h.startswith("## Errored") for h in headings) == 1, headings
    assert not re.search(r"(?<!\\)<", markdown), "student text opens an HTML tag or comment"
    assert not re.search(r"(?<!\\)\]\(", markdown), "student text makes a link"
    sections = _sections(markdown)
    assert any(timed_out in line for line in sections["## Timed out somewhere"])
    failures = sections["## Most common failures"]
    # Sentences in the grader's words, from each failure's reason: no student text at all.
    assert failures and all(
        re.fullmatch(r"- \*\*[a-z0-9\\-]+\*\* failed for \d+ students?( \(|: ).*", line) for line in failures
    ), failures
    assert any("the code raised an exception" in line for line in failures), failures
    assert not any("Errored" in line for line in failures), "a student's message is quoted"


PRINTED_SECTIONS = (
    "Score distribution (students)",
    "Pass rate per check",
    "Most common failures",
    "Diagnosed mistakes",
    "Errored (nothing could be graded)",
    "Timed out somewhere",
)


def _assert_printed_summary_is_honest(printed: str, timed_out: str) -> None:
    """The terminal's summary (plain text): each section once, at the start of a line, in the
    grader's words; student text indented on a line of its own, its controls shown."""
    assert_no_raw_controls(printed, "batch stdout")
    lines = printed.splitlines()
    assert [line for line in lines if line in PRINTED_SECTIONS] == list(PRINTED_SECTIONS), lines
    failures = lines[lines.index("Most common failures") + 1 : lines.index("Diagnosed mistakes") - 1]
    assert failures and all(
        re.fullmatch(r"- [a-z0-9-]+ failed for \d+ students?( \(|: ).*", line) for line in failures
    ), failures
    assert not any("Errored" in line for line in failures), "a student's message is quoted"
    assert timed_out in lines[lines.index("Timed out somewhere") + 1]


def _assert_csv_is_inert(path) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(open(path, encoding="utf-8").read())))
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START), f"formula cell {cell!r}"
            assert_no_raw_controls(cell.replace("\n", ""), "grades.csv")
    return rows


def _hostile_class(folder):
    folder.mkdir()
    # (Most of the class sends the same message: summary.md must not quote it among the
    # most common failures, which are in the grader's words.)
    (folder / "evil.py").write_text(ATTACK)
    (folder / '=HYPERLINK("http:\\evil.example","click").py').write_text(ATTACK)
    (folder / "@SUM(1+1)*cmd.py").write_text(ATTACK)
    (folder / "\x1b[2J\x1b]0;owned\x07term.py").write_text(ATTACK)
    # A name that is not UTF-8 (os.listdir gives it a lone surrogate).
    with open(os.path.join(os.fsencode(folder), b"bad\xff\xfename.py"), "w") as f:
        f.write(ZEROS)
    (folder / "sleeper.py").write_text(
        ZEROS.replace("    return np.zeros((max_len, d_model))", "    while True:\n        pass")
    )


@pytest.mark.slow  # a class of hostile files, per tier
def test_batch_outputs_cannot_be_forged(tmp_path, tier):
    klass, out = tmp_path / "class", tmp_path / "out"
    _hostile_class(klass)
    warm = [] if tier.warm else ["--no-warm"]
    trusted = ["--trusted-submissions"] if tier == "rlimits" else []  # see test_unsafe_tiers
    done = run_bytes(
        "batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "2", *warm, *limits(tier), *trusted
    )
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == 0, stderr[-3000:]
    assert_no_raw_controls(stderr, "batch stderr")
    printed = done.stdout.decode("utf-8")
    summary = (out / "summary-positional-encoding.md").read_text(encoding="utf-8")
    _assert_printed_summary_is_honest(printed, "sleeper")
    _assert_summary_is_honest(summary, "sleeper")
    rows = _assert_csv_is_inert(out / "grades-positional-encoding.csv")
    assert len(rows) == 1 + 6
    students = {row[0] for row in rows[1:]}
    assert '\'=HYPERLINK("http:\\\\evil.example","click")' in students  # \ doubled
    assert "\\x1b[2J\\x1b]0;owned\\x07term" in students
    lines = (out / "reports-positional-encoding.jsonl").read_bytes().decode("utf-8").splitlines()
    assert len(lines) == 6
    for line in lines:
        assert len(line.encode()) < REPORT_BYTES_CAP
        for text in strings_in(json.loads(line)):
            assert_no_raw_controls(text, "reports.jsonl")
    export = run_bytes("export", str(out))
    assert export.returncode == 0, export.stderr.decode("utf-8", "replace")[-2000:]
    assert _assert_csv_is_inert(out / "grades-positional-encoding.csv") == rows


def test_batch_never_merges_two_students(tmp_path):
    """Names that look alike once made visible, or a file beside a folder of the same
    name, are each one row: none is lost, and the ambiguous hand-in is named as such."""
    klass, out = tmp_path / "class", tmp_path / "out"
    klass.mkdir()
    for raw in (b"s\xff.py", b"s\xfe.py", b"t\x1b.py", b"t\\x1b.py"):
        with open(os.path.join(os.fsencode(klass), raw), "w") as f:
            f.write(ZEROS)
    (klass / "alice.py").write_text(ZEROS)
    (klass / "alice").mkdir()
    (klass / "alice" / "solution.py").write_text(ZEROS)
    done = run_bytes("batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "2")
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")[-3000:]
    rows = list(csv.reader(io.StringIO((out / "grades-positional-encoding.csv").read_text(encoding="utf-8"))))
    students = [row[0] for row in rows[1:]]
    assert sorted(students) == sorted(["s\\xff", "s\\xfe", "t\\x1b", "t\\\\x1b", "alice"])
    reports = {
        json.loads(line)["student"]: json.loads(line)
        for line in (out / "reports-positional-encoding.jsonl").read_text(encoding="utf-8").splitlines()
    }
    said = json.dumps(reports["alice"])
    assert "two submissions for alice: alice and alice.py; keep one" in said, said


def test_export_survives_a_poisoned_gradebook(tmp_path):
    """Rows stored by an older grader may hold raw student text: a lone surrogate (which no
    encoder takes), escape sequences, a formula id, Markdown and HTML. Export, and the next
    batch (which rewrites summary.md from every row), still work and stay inert."""
    klass, out = tmp_path / "class", tmp_path / "out"
    klass.mkdir()
    (klass / "honest.py").write_text(ZEROS)
    first = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "1", "--isolation", tiers()[0])
    assert first.returncode == 0, first.stderr[-2000:]
    db = sqlite3.connect(out / "gradebook.sqlite")
    task, student, *row = db.execute("SELECT * FROM results").fetchone()
    report = json.loads(row[-2])
    bad = "\ud800\x1b[2J\n## Errored (nothing could be graded)\n\nnone\n<!--"
    report["checks"][1].update(status="failed", score=0.0, message=bad)
    report["submission"] = bad
    poisoned = json.dumps(report)  # (ASCII JSON: how the old gradebook stored it)
    db.execute(
        "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (task, "=cmd|' /C calc'!A0\x1b[2J", "x.py", "-", *row[2:-2], poisoned, row[-1]),
    )
    db.commit()
    db.close()
    export = run_bytes("export", str(out))
    assert export.returncode == 0, export.stderr.decode("utf-8", "replace")[-2000:]
    rows = _assert_csv_is_inert(out / "grades-positional-encoding.csv")
    assert len(rows) == 3
    for line in (out / "reports-positional-encoding.jsonl").read_bytes().decode("utf-8").splitlines():
        for text in strings_in(json.loads(line)):
            assert_no_raw_controls(text, "reports.jsonl")
    again = run_bytes(
        "batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "1", "--isolation", tiers()[0]
    )
    assert again.returncode == 0, again.stderr.decode("utf-8", "replace")[-2000:]
    summary = (out / "summary-positional-encoding.md").read_text(encoding="utf-8")
    assert_no_raw_controls(summary, "summary.md")
    assert sum(line.startswith("## Errored") for line in summary.splitlines()) == 1
    assert not re.search(r"(?<!\\)<", summary)


# --------------------------------------------------------------------------- grader ci

CI_ATTACK = f"""
import numpy as np

EVIL = {EVIL}

def normalize_rows(m):
    raise ValueError(EVIL)
"""


def test_ci_summary_and_annotations_cannot_be_forged(tmp_path, plain_tier):
    course = course_with_full_tasks(tmp_path / "course")
    (course / "solutions" / "normalize-rows.py").write_text(CI_ATTACK)
    summary = tmp_path / "step-summary.md"
    done = run_bytes(
        "ci",
        str(course),
        "--min-score",
        "80",
        "--summary",
        str(summary),
        "--junit",
        str(tmp_path / "junit.xml"),
        *limits(plain_tier),
        env={"GITHUB_ACTIONS": "true"},
        cwd=str(course),
    )
    stdout = done.stdout.decode("utf-8")
    if plain_tier == "rlimits":  # the course has hidden checks: never in this tier
        assert done.returncode == 2 and b"refused in the rlimits tier" in done.stderr
        return
    assert done.returncode == 1, done.stderr.decode("utf-8", "replace")[-3000:] + stdout
    assert_no_raw_controls(stdout, "ci log")
    commands = [line for line in stdout.splitlines() if line.startswith("::")]
    assert commands and all(
        line.startswith("::error file=solutions/normalize-rows.py,line=") for line in commands
    ), commands
    assert all("forged.py" not in line.split("::")[1] for line in commands)
    # Why the task lost points is in the log, one line per failed check (and its input):
    # the message's own line breaks and controls are shown, so it starts no line of its own.
    reasons = [line for line in stdout.splitlines() if line.startswith("      ")]
    assert any("raised ValueError" in line for line in reasons), stdout
    assert all(
        re.match(r"(FAIL|ok  |total |::error | {6,8}\S|grader: )", line) for line in stdout.splitlines()
    ), stdout
    text = summary.read_text(encoding="utf-8")
    assert_no_raw_controls(text, "step summary")
    headings = [line for line in text.splitlines() if re.match(r"\s{0,3}#", line)]
    assert len(headings) == 2 and headings[1] == "### What to fix", headings
    assert re.fullmatch(r"## Grades: \d+% \(below the required 80%\)", headings[0]), headings
    assert not re.search(r"(?<!\\)<", text), "student text reaches the step summary as HTML"
    assert not re.search(r"(?<!\\)\]\(", text), "student text makes a link"
    fixes = text.split("### What to fix", 1)[1].strip().splitlines()
    assert fixes and all(line.startswith("- **normalize-rows / ") for line in fixes), fixes
    ET.parse(tmp_path / "junit.xml")
