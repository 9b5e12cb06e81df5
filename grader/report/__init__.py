"""Renderers of a Result: each module has ``render(result, **options) -> str``; add a format here."""

from grader.report import gradescope, json_report, junit, text


def _html(result, **options) -> str:
    # The page's modules load only when a page is asked for: `grader check` stays fast.
    from grader.report import html

    return html.render(result, **options)


RENDERERS = {
    "text": text.render,
    "json": json_report.render,
    "junit": junit.render,
    "gradescope": gradescope.render,
    "html": _html,
}
