"""The class page of a batch: the score distribution, each check's pass rate, how many
students each known mistake was diagnosed in, the most common failures, who errored or timed
out, and every student with their score and a link to their page. Self-contained like the
student page (html.page: no script, no request). Student ids and every stored string are
escaped (student_text.for_html); links go to the safe file names the batch chose (page_files)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from grader.records.wording import counted
from grader.report import svg
from grader.report.class_summary import (
    BUCKETS,
    ClassSummary,
    CommonFailure,
    how_many_students,
    pass_rate_words,
)
from grader.report.html import page
from grader.report.svg import Bar
from grader.student_text import for_html


@dataclass(frozen=True)
class StudentLine:
    student: str
    score: float
    max_score: float
    status: str
    page: str | None  # the student's page, relative to the class page; None: no page


def _failure(failure: CommonFailure) -> str:
    return "<li>" + failure.sentence(for_html, '<span class="name">{}</span>') + "</li>"


def _names(students: list[str]) -> str:
    return for_html(", ".join(students)) if students else "none"


def render(summary: ClassSummary, students: list[StudentLine]) -> str:
    width = 100 // BUCKETS
    most = max(summary.distribution, default=0)
    body = [
        f"<h1>{for_html(summary.task)}: {counted(summary.students, 'submission')}</h1>",
        f'<p class="score">Mean {summary.mean_percent:.0f}%, median {summary.median_percent:.0f}%</p>',
        "<h2>Score distribution</h2>",
        svg.bars(
            [
                Bar(
                    f"{i * width}-{(i + 1) * width}%",
                    n,
                    str(n),
                    f"{how_many_students(n)} scored {i * width}-{(i + 1) * width}%",
                )
                for i, n in enumerate(summary.distribution)
            ],
            most,
            "#3f6fb5",
            "students per score band",
        ),
        "<h2>Pass rate per check</h2>",
        f"<p>{for_html(pass_rate_words(summary))}</p>",
        svg.bars(
            [
                Bar(name, rate, f"{rate:.0%}", f"{name}: {rate:.0%} passed")
                for name, rate in summary.pass_rates.items()
            ],
            1.0,
            "#2e7d32",
            "share of students who passed each check",
        ),
        "<h2>Diagnosed mistakes</h2>",
    ]
    if summary.mistakes:
        top = max(m.students for m in summary.mistakes)
        body.append(
            svg.bars(
                [
                    Bar(
                        m.mistake,
                        m.students,
                        str(m.students),
                        f"{how_many_students(m.students)}: {m.explanation}",
                    )
                    for m in summary.mistakes
                ],
                top,
                "#c62828",
                "students per diagnosed mistake",
            )
        )
        body.append(
            "<ul>"
            + "".join(
                f'<li><span class="name">{for_html(m.mistake)}</span>: {how_many_students(m.students)}: '
                f"{for_html(m.explanation)}</li>"
                for m in summary.mistakes
            )
            + "</ul>"
        )
    else:
        body.append("<p>none diagnosed</p>")
    body += [
        "<h2>Most common failures</h2>",
        "<ul>" + ("".join(_failure(f) for f in summary.common_failures) or "<li>none</li>") + "</ul>",
        "<h2>Errored (nothing could be graded)</h2>",
        f"<p>{_names(summary.errored)}</p>",
        "<h2>Timed out somewhere</h2>",
        f"<p>{_names(summary.timed_out)}</p>",
        "<h2>Students</h2>",
        _table(students),
    ]
    return page(f"{summary.task}: class of {summary.students}", "".join(body))


def _table(students: list[StudentLine]) -> str:
    rows = ["<table><tr><th>student</th><th>score</th><th>status</th></tr>"]
    for line in students:
        name = for_html(line.student)
        if line.page:
            name = f'<a href="{for_html(quote(line.page))}">{name}</a>'
        rows.append(
            f"<tr><td>{name}</td><td>{line.score:g}/{line.max_score:g}</td>"
            f'<td class="{for_html(line.status)}">{for_html(line.status)}</td></tr>'
        )
    rows.append("</table>")
    return "".join(rows)
