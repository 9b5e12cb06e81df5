"""GitHub's workflow commands (::error file=...::text), read as the runner reads them: shared
by tests/unit/test_github_annotations.py and tests/integration/test_github_actions.py."""


def parse_command(line: str):
    """A workflow command as actions/runner reads it (ActionCommand.TryParseV2): the
    properties end at the first '::' after the command, split at ',' then at the first '=',
    and are unescaped like the data (%0D, %0A, %3A, %2C, then %25)."""
    assert line.startswith("::"), line
    end = line.index("::", 2)
    head, data = line[2:end], line[end + 2:]
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
