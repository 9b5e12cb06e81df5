"""The student's feedback page: one self-contained HTML file that works offline.

It shows what the text report shows (task, file, isolation, each check with its status,
points, description, failing input, message and printed output, the score), the likely
causes first (result.Diagnosis) with the checks each explains under it, and for a failed
array check pictures of the expected output, the submission's and their difference
(svg.py). No script at all, and a Content-Security-Policy that forbids scripts and every
request, so even a mistake in escaping could run nothing and fetch nothing.

Every string of the result is student-controlled (printed output, messages, names, the file
name): each goes through ``student_text.for_html`` (control characters shown, then every
markup character escaped, quotes too) wherever it lands, content or attribute. Hidden checks
are redacted before this renders (redact.for_students drops their pictures too).
"""

from __future__ import annotations

import os

from grader.records.result import ERROR, FAILED, PASSED, SKIPPED, CheckResult, Diagnosis, Picture, Result
from grader.records.wording import final_grading_summary
from grader.report import svg
from grader.student_text import for_html

# No script, no request of any kind; inline styles only; images only as data: (none today).
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
_LABEL = {PASSED: "PASS", FAILED: "FAIL", ERROR: "ERROR", SKIPPED: "SKIP"}

STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1100px;
padding:1.5rem;color:#1d1d1d;background:#fff}
h1{font-size:1.35rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:1.6rem 0 .6rem}
.meta,.note{color:#555;margin:.2rem 0}.note{background:#fff7e0;padding:.3rem .6rem;border-radius:4px}
.score{font-size:1.25rem;font-weight:600;margin:.8rem 0}
.check{border:1px solid #ddd;border-left:6px solid #999;border-radius:4px;padding:.5rem .8rem;margin:.6rem 0}
.check.passed{border-left-color:#2e7d32}.check.failed{border-left-color:#c62828}
.check.error{border-left-color:#8e24aa}.check.skipped{border-left-color:#f9a825}
.status{display:inline-block;min-width:3.6em;font-weight:700}
.passed .status{color:#2e7d32}.failed .status{color:#c62828}.error .status{color:#8e24aa}
.skipped .status{color:#8d6e00}
.name{font-family:ui-monospace,monospace;font-weight:600}.points{float:right;color:#444}
.description{color:#444}
pre{background:#f5f5f5;padding:.4rem .6rem;border-radius:4px;white-space:pre-wrap;
overflow-wrap:anywhere;margin:.3rem 0;font-size:13px}
.label{font-size:.85rem;color:#555;margin-top:.4rem}
.cause{border:2px solid #c62828;border-radius:6px;padding:.6rem 1rem;margin:.8rem 0;background:#fff5f5}
.cause .explanation{font-size:1.05rem;font-weight:600}
figure.picture{margin:.6rem 0;padding:0}
.panels{display:flex;flex-wrap:wrap;gap:1.2rem;align-items:flex-start}
.panel figcaption,.panel .caption{font-size:.85rem;color:#333;margin-bottom:.2rem}
.where{font-size:.85rem;color:#555}
table{border-collapse:collapse}td,th{padding:.15rem .8rem;border-bottom:1px solid #eee;text-align:left}
"""


def render(result: Result, **_options: object) -> str:
    file_name = os.path.basename(result.submission)
    percent = 100 * result.score / result.max_score if result.max_score else 0
    title = f"{result.task} · {file_name}: {result.score:g}/{result.max_score:g}"
    body = [
        f"<h1>{for_html(result.task)} · {for_html(file_name)}</h1>",
        f'<p class="meta">isolation: {for_html(result.isolation)}</p>',
    ]
    if result.isolation_note:
        body.append(f'<p class="note">note: {for_html(result.isolation_note)}</p>')
    if result.kit:
        body.append(
            '<p class="note">note: graded on a student kit: the public checks only; '
            "hidden checks may be added at final grading.</p>"
        )
        if later := final_grading_summary(result.checks):
            body.append(f'<p class="note">note: {for_html(later)}.</p>')
    body.append(
        f'<p class="score">Score: {result.score:g}/{result.max_score:g} ({percent:.0f}%) '
        f'<span class="{for_html(result.status)}">{for_html(result.status)}</span></p>'
    )
    body += _checks(result)
    if result.output.strip():
        body += ["<h2>Your file printed</h2>", f"<pre>{for_html(result.output)}</pre>"]
    body.append(
        f'<p class="meta">graded by grader {for_html(result.grader_version or "?")}, '
        f"cases {for_html(result.cases_digest or '?')}</p>"
    )
    return page(title, "".join(body))


def page(title: str, body: str) -> str:
    """The HTML document around ``body`` (already escaped): the CSP comes first in <head>,
    before anything the policy must cover."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{for_html(title)}</title><style>{STYLE}</style></head>\n"
        f"<body>\n{body}\n</body></html>\n"
    )


def _checks(result: Result) -> list[str]:
    """The likely causes first, each with the checks it explains; then the other checks."""
    by_name = {c.name: c for c in result.checks}
    explained: set[str] = set()
    parts = []
    if result.diagnoses:
        parts.append("<h2>Likely cause</h2>")
        for diagnosis in result.diagnoses:
            mine = [by_name[n] for n in diagnosis.checks if n in by_name and n not in explained]
            explained.update(c.name for c in mine)
            parts.append(_cause(diagnosis, mine))
    rest = [c for c in result.checks if c.name not in explained]
    if rest:
        parts.append("<h2>Other checks</h2>" if explained else "<h2>Checks</h2>")
        previous_skip = None
        for check in rest:
            repeat = check.status == SKIPPED and check.message == previous_skip
            previous_skip = check.message if check.status == SKIPPED else None
            parts.append(_check(check, details=not repeat))
    return parts


def _cause(diagnosis: Diagnosis, checks: list[CheckResult]) -> str:
    names = ", ".join(for_html(c.name) for c in checks) or "none"
    return (
        f'<section class="cause"><p class="explanation">{for_html(diagnosis.explanation)}</p>'
        f'<p class="meta">known mistake: <span class="name">{for_html(diagnosis.mistake)}</span>; '
        f"it explains {len(checks)} failed check{'s' if len(checks) != 1 else ''}: {names}</p>"
        + "".join(_check(c) for c in checks)
        + "</section>"
    )


def _check(check: CheckResult, details: bool = True) -> str:
    points = (
        f"{check.score:g}/{check.max_score:g}"
        if check.max_score
        else f"{check.final_points:g} later"
        if check.final_points
        else ""
    )
    status = check.status if check.status in _LABEL else "error"
    parts = [
        f'<section class="check {for_html(status)}">',
        f'<span class="status">{for_html(_LABEL.get(check.status, check.status))}</span> '
        f'<span class="name">{for_html(check.name)}</span>'
        f'<span class="points">{for_html(points)}</span>',
    ]
    if check.description:
        parts.append(f'<div class="description">{for_html(check.description)}</div>')
    if details:
        parts += _details(check)
    parts.append("</section>")
    return "".join(parts)


def _details(check: CheckResult) -> list[str]:
    """What the text report says under a check (text.check_details), and its picture."""
    if check.status not in (FAILED, ERROR):
        return [f'<div class="message">{for_html(check.message)}</div>'] if check.message else []
    parts = []
    if check.failing_input:
        parts += ['<div class="label">failing input</div>', f"<pre>{for_html(check.failing_input)}</pre>"]
    if check.message:
        parts.append(f"<pre>{for_html(check.message)}</pre>")
    if check.output:
        parts += ['<div class="label">your code printed</div>', f"<pre>{for_html(check.output)}</pre>"]
    if check.picture is not None:
        parts.append(picture_html(check.picture))
    return parts


def _shape(shape: list[int]) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


def picture_html(shot: Picture) -> str:
    """Expected, yours and (when the shapes agree) yours minus expected, as heatmaps on one
    colour scale with its legend; the difference on a scale of its own. The values' scale
    spans the expected output (yours beyond it shows in the end colours): one huge value of
    yours must not wash the expected picture out."""
    same = shot.expected_shape == shot.got_shape and [len(r) for r in shot.expected] == [
        len(r) for r in shot.got
    ]
    scale = svg.values_scale(shot.expected)
    panels = [
        _panel(f"expected {_shape(shot.expected_shape)}", shot.expected, scale),
        _panel(f"yours {_shape(shot.got_shape)}", shot.got, scale),
    ]
    legends = [svg.legend(scale, "values (the expected range; yours beyond it in the end colours)")]
    if same:
        delta = svg.difference(shot.expected, shot.got)
        delta_scale = svg.difference_scale(delta)
        panels.append(_panel("yours − expected", delta, delta_scale))
        legends.append(svg.legend(delta_scale, "difference (yours − expected)"))
        note = ""
    else:
        note = (
            f'<p class="where">The shapes differ (expected {_shape(shot.expected_shape)}, '
            f"yours {_shape(shot.got_shape)}): both are drawn, no difference can be.</p>"
        )
    where = f'<p class="where">drawn: {for_html(shot.where)}</p>' if shot.where else ""
    return (
        f'<figure class="picture"><div class="panels">{"".join(panels)}</div>'
        f'<div class="panels">{"".join(legends)}</div>{note}{where}</figure>'
    )


def _panel(caption: str, grid: list, scale: svg.Scale) -> str:
    return (
        f'<div class="panel"><div class="caption">{for_html(caption)}</div>'
        f"{svg.heatmap(grid, scale, caption)}</div>"
    )
