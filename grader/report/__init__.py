"""Renderers of a Result: each module has ``render(result, **options) -> str``; add a format here."""
from . import gradescope, json_report, junit, text

RENDERERS = {
    "text": text.render,
    "json": json_report.render,
    "junit": junit.render,
    "gradescope": gradescope.render,
}
