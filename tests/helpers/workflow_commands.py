"""GitHub Actions as the runner reads it: workflow commands (::error file=...::text), shared
by tests/unit/test_github.py and tests/integration/test_github_actions.py, and
the run steps of an example workflow file, run here as the runner runs them (bash -e, the
step's env, ${{ }} expressions from given values)."""

import os
import re
import subprocess


def parse_command(line: str):
    """A workflow command as actions/runner reads it (ActionCommand.TryParseV2): the
    properties end at the first '::' after the command, split at ',' then at the first '=',
    and are unescaped like the data (%0D, %0A, %3A, %2C, then %25)."""
    assert line.startswith("::"), line
    end = line.index("::", 2)
    head, data = line[2:end], line[end + 2 :]
    kind, _, props = head.partition(" ")
    properties = {}
    for pair in filter(None, props.split(",")):
        key, value = pair.split("=", 1)
        properties[key] = _unescape(value, prop=True)
    return kind, properties, _unescape(data, prop=False)


def _unescape(text, prop):
    pairs = [("%0D", "\r"), ("%0A", "\n")] + ([("%3A", ":"), ("%2C", ",")] if prop else [])
    for escaped, char in pairs + [("%25", "%")]:
        text = text.replace(escaped, char)
    return text


# --------------------------------------------------------------------------- workflow files


def workflow_steps(path: str, job: str = "grade") -> list[dict]:
    import yaml

    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)["jobs"][job]["steps"]


_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def expand(text: str, values: dict) -> str:
    """``${{ a || b }}`` as the runner evaluates it, from ``values`` (name -> string; an
    unknown name fails the test, so the test says what the workflow reads)."""

    def one(match):
        result = ""
        for name in (part.strip() for part in match.group(1).split("||")):
            assert name in values, f"the workflow reads {name}, which the test does not give"
            result = values[name]
            if result:
                break
        return result

    return _EXPRESSION.sub(one, text)


def run_step(step: dict, cwd, values: dict, env: dict, timeout: float = 900):
    """A ``run:`` step as the runner runs it (``bash --noprofile --norc -eo pipefail``)."""
    step_env = {k: expand(str(v), values) for k, v in (step.get("env") or {}).items()}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", expand(step["run"], values)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=dict(os.environ, **env, **step_env),
        timeout=timeout,
    )
