"""Reports: renderers of a Result, and the class summary the class page draws.

Each format is a module with ``render(result, **options) -> str`` and one line in
``RENDERERS``; renderers only render (plain data in, text out). May import records/,
student_text and grading/ (what a student may see: redact.py); never classroom/.
"""

from collections.abc import Callable

from grader.records.result import Result
from grader.report import gradescope, json_report, junit, text

# A renderer: the result and the format's options (colour=..., for text), to the report's text
Renderer = Callable[..., str]


def _html(result: Result, **options: object) -> str:
    # The page's modules load only when a page is asked for: `grader check` stays fast.
    from grader.report import html

    return html.render(result, **options)


RENDERERS: dict[str, Renderer] = {
    "text": text.render,
    "json": json_report.render,
    "junit": junit.render,
    "gradescope": gradescope.render,
    "html": _html,
}
