"""A report format is one renderer in the registry: `--format` offers exactly those."""

import json

from grader.cli.parser import build_parser as _parser
from grader.records.result import FAILED, CheckResult, Result
from grader.report import RENDERERS


def _format_choices():
    parser = _parser()
    commands = next(a for a in parser._actions if a.dest == "command")
    check = commands.choices["check"]
    return next(a for a in check._actions if a.dest == "format").choices


def test_check_offers_every_registered_renderer(monkeypatch):
    assert list(_format_choices()) == list(RENDERERS)
    monkeypatch.setitem(RENDERERS, "shout", lambda result, **_: result.task.upper())
    assert "shout" in _format_choices()


def test_every_renderer_renders_a_result_to_text():
    result = Result(
        task="t",
        submission="s.py",
        score=0,
        max_score=1,
        status=FAILED,
        isolation="bubblewrap",
        checks=[CheckResult("c", FAILED, 0.0, 1.0, message="m")],
    )
    for name, render in RENDERERS.items():
        text = render(result)
        assert isinstance(text, str) and text, name
    assert json.loads(RENDERERS["json"](result))["task"] == "t"
