"""Renderers of a Result: each module has ``render(result, **options) -> str``; add a format here."""
from . import json_report, text

RENDERERS = {
    "text": text.render,
    "json": json_report.render,
}
