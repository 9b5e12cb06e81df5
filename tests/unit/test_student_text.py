"""Student text made safe (split from tests/security/test_hostile_text.py: the sanitiser
itself, in process; the suite there shows it holds end to end under every tier)."""

import html
import os
import re

from grader import student_text
from grader.records.worker_error import ErrorFrame, WorkerError
from grader.sandbox import Opaque
from grader.sandbox.launcher import CallOutcome
from grader.sandbox.replies import sanitised

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def test_visible_makes_text_valid_and_shows_every_control_character():
    text = "a\ud800b\x1b[2J\x07\x9b\u202e\u2028\r\n\tz"
    shown = student_text.visible(text)
    assert shown == "a\ufffdb\\x1b[2J\\x07\\x9b\\u202e\\u2028\\r\\n\\tz"
    assert student_text.visible(text, multiline=True) == "a\ufffdb\\x1b[2J\\x07\\x9b\\u202e\\u2028\n\tz"
    shown.encode("utf-8")  # encodable
    for once in (shown, student_text.visible(text, multiline=True)):
        assert student_text.visible(once, multiline="\n" in once) == once  # idempotent
    assert student_text.visible("ordinary text, ünïcode ✓") == "ordinary text, ünïcode ✓"


def test_clip_caps_bytes_after_showing_and_says_so():
    huge = student_text.line("\x1b" * 4000, 2000)
    assert len(huge.encode()) <= 2000 and huge.startswith("\\x1b") and "cut: 16000 bytes in all" in huge
    kept = student_text.output("first\n" + "é" * 10000 + "\nlast line", 1000)
    assert len(kept.encode()) <= 1000 and kept.startswith("first") and kept.endswith("last line")
    assert student_text.clip(huge, 2000) == huge


def test_sanitised_outcome_from_a_worker():
    outcome = CallOutcome(
        "raised",
        value={
            "functions": {"f\x1b": {"params": ["\x1b" * 5000, "x"]}},
            "r": Opaque("T\x1b", "\ud800" * 9000),
        },
        error=WorkerError(
            type="E\x1b",
            message="\x1b" * 4000 + "\ud800",
            frames=(ErrorFrame(line=1, function="\x07", code="\x1b" * 999),),
        ),
        stdout="ok\n\x1b[2J\n",
        stderr="\ud800",
    )
    clean = sanitised(outcome)
    assert clean.error.type == "E\\x1b" and len(clean.error.message.encode()) <= 2000
    assert clean.error.frames[0].function == "\\x07"
    assert len(clean.error.frames[0].code.encode()) <= student_text.CODE_BYTES
    assert clean.stdout == "ok\n\\x1b[2J\n" and clean.stderr == "\ufffd"
    params = clean.value["functions"]["f\\x1b"]["params"]
    assert len(params[0].encode()) <= student_text.LINE_BYTES and params[1] == "x"
    assert clean.value["r"].type_name == "T\\x1b" and "\ud800" not in repr(clean.value["r"])


def test_markdown_escaping_opens_nothing():
    text = student_text.for_markdown("## Errored\n<!-- x --> <b>[a](http://e) *b* `c` | www.e.com &amp; - d")
    assert "\n" not in text
    assert not re.search(r"(?<!\\)[<>#\[\]()*`|&]", text), text
    assert "normalize-rows" == student_text.for_markdown("normalize-rows")
    assert student_text.for_markdown("-x").startswith("\\-")
    code = student_text.for_markdown_code("a `` b")
    assert code.startswith("``` ") and code.endswith(" ```")


def test_html_escaping_is_html_escape_after_showing_controls():
    for text in ("<b onclick='x'>\"a\" & b</b>", "&amp; \x1b[31m\n\tline\u202e", "plain"):
        assert student_text.for_html(text) == html.escape(
            student_text.visible(text, multiline=True), quote=True
        )
    assert student_text.for_html("a\nb") == "a\nb" and student_text.for_html(3) == "3"


def test_csv_and_workflow_escaping():
    for cell in ("=HYPERLINK(1)", "+1", "-1", "@SUM(A1)", "\tx", "\rx"):
        assert not student_text.for_csv(cell).startswith(FORMULA_START)
        assert student_text.for_csv(cell).lstrip("'").endswith(cell[1:])
    assert student_text.for_csv("alice") == "alice"
    assert student_text.for_csv("  =1+1") == "'  =1+1" and student_text.for_csv(" -2+3") == "' -2+3"
    assert student_text.for_workflow_data("50%\r\n::x") == "50%25%0A::x"
    assert student_text.for_workflow_property("a:b,c") == "a%3Ab%2Cc"


def test_student_ids_stay_one_to_one():
    names = [
        os.fsdecode(b"a\xff"),
        os.fsdecode(b"a\xfe"),
        "a\x1b",
        "a\\x1b",
        "a\x9b",
        os.fsdecode(b"a\x9b"),
        "a\\",
        "a\u202e",
        "a\\u202e",
        "plain",
        "\u00e9l\u00e8ve",
    ]
    ids = [student_text.student_id(n) for n in names]
    assert len(set(ids)) == len(names), ids
    assert ids[-2:] == ["plain", "\u00e9l\u00e8ve"]
    for shown in ids:
        assert student_text.visible(shown) == shown
