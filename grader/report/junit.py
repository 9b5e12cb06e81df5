"""JUnit XML, one testcase per check, as GitHub, GitLab and Jenkins test reporters read it.

Each testcase names the student's file (``file``, relative to ``workspace`` when one is
given: course CI passes the repository's, so a reporter can link to the code) and, for a
failure, the line it points at (``line``: where the code raised, else where the function
is defined); what the code printed during the check is its ``<system-out>``, and what the
file printed while it was imported is the suite's."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from grader.records.result import ERROR, FAILED, SKIPPED, Result
from grader.report.github import failure_line, relative_path
from grader.report.text import check_details
from grader.student_text import visible
from grader.submission.file import source_stem

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    """Text XML 1.0 can hold (ElementTree escapes & < > and quotes): controls shown, not sent."""
    return _NOT_XML.sub("?", visible(text, multiline=True))


def suite(result: Result, workspace: str | None = None) -> ET.Element:
    counts = {s: sum(c.status == s for c in result.checks) for s in (FAILED, ERROR, SKIPPED)}
    element = ET.Element(
        "testsuite",
        name=_clean(result.task),
        tests=str(len(result.checks)),
        failures=str(counts[FAILED]),
        errors=str(counts[ERROR]),
        skipped=str(counts[SKIPPED]),
        time=f"{result.seconds:.3f}",
    )
    properties = ET.SubElement(element, "properties")
    ET.SubElement(properties, "property", name="score", value=f"{result.score:g}/{result.max_score:g}")
    # where it was graded, and what is weaker there (a kit graded unsandboxed says so)
    ET.SubElement(properties, "property", name="isolation", value=_clean(result.isolation))
    if result.isolation_note:
        ET.SubElement(properties, "property", name="isolation_note", value=_clean(result.isolation_note))
    # (every string below may be student text, or come from an old stored report)
    file = result.submission if workspace is None else relative_path(result.submission, workspace)
    causes = {d.mistake: f"likely cause: {d.explanation}" for d in result.diagnoses}
    for check in result.checks:
        case = ET.SubElement(
            element,
            "testcase",
            classname=_clean(f"{result.task}.{_stem(result.submission)}"),
            name=_clean(check.name),
            time=f"{check.seconds:.3f}",
        )
        if file:
            case.set("file", _clean(file))
        cause = [causes[check.mistake]] if check.mistake in causes else []
        details = _clean("\n".join(cause + check_details(check)))
        tag = {FAILED: "failure", ERROR: "error", SKIPPED: "skipped"}.get(check.status)
        if tag:
            ET.SubElement(case, tag, message=_clean(check.message[:500])).text = details
        line = failure_line(result, check) if file and check.status in (FAILED, ERROR) else None
        if line is not None:
            case.set("line", str(line))
        if check.output:
            ET.SubElement(case, "system-out").text = _clean(check.output)
    if result.output:
        ET.SubElement(element, "system-out").text = _clean(result.output)
    return element


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return re.sub(r"\W", "_", source_stem(name) or name)


def render_many(results: list[Result], workspace: str | None = None) -> str:
    root = ET.Element("testsuites")
    root.extend(suite(r, workspace) for r in results)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def render(result: Result, **_options: object) -> str:
    return render_many([result])
