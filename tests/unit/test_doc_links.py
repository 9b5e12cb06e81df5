"""The docs hold together: every relative link of README.md, docs/*.md and CONTRIBUTING.md
names a file that exists (and a #anchor, a heading in it), and the README stays a front door."""

import glob
import os
import re

import pytest
from helpers.paths import ROOT

README_LIMIT = 20 * 1024  # bytes: what the front door may weigh (issue 23)

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+).*?\1", re.S)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _documents() -> list[str]:
    paths = [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "CONTRIBUTING.md")]
    return paths + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def _prose(text: str) -> str:
    """The text outside code blocks and code spans, where a link is a link."""
    text = _FENCE.sub("", text)
    text = re.sub(r"^(?: {4}|\t).*$", "", text, flags=re.M)  # indented code blocks
    return _CODE_SPAN.sub("", text)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, markup and punctuation dropped,
    spaces made dashes."""
    text = re.sub(r"[`*]", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        name, n = base, 0
        while name in found:  # GitHub numbers repeated headings: name, name-1, name-2
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def broken_links(path: str) -> list[str]:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    broken = []
    for target in _LINK.findall(_prose(text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ... not ours to check
            continue
        file_part, _, anchor = target.partition("#")
        linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
        if not os.path.exists(linked):
            broken.append(f"{target}: no such file")
        elif anchor and linked.endswith(".md"):
            with open(linked, encoding="utf-8") as f:
                if anchor not in anchors(f.read()):
                    broken.append(f"{target}: no heading #{anchor} in {os.path.relpath(linked, ROOT)}")
    return broken


@pytest.mark.parametrize("path", _documents(), ids=lambda p: os.path.relpath(p, ROOT))
def test_every_relative_link_resolves(path):
    assert os.path.exists(path)
    assert broken_links(path) == []


def test_the_docs_exist():
    names = {os.path.relpath(p, ROOT) for p in _documents()}
    for doc in ("students", "task-writers", "operators", "integrations"):
        assert os.path.join("docs", f"{doc}.md") in names


def test_readme_is_a_front_door():
    assert os.path.getsize(os.path.join(ROOT, "README.md")) <= README_LIMIT


def test_a_broken_link_is_found(tmp_path):
    """The control: the check above can fail."""
    (tmp_path / "other.md").write_text("# A heading: `with code`\n\n## Twice\n\n## Twice\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "[ok](other.md#a-heading-with-code) [ok](other.md#twice-1) [ok](#here) [web](https://x.org/y)\n"
        "`[in code](nowhere.md)`\n\n```\n[in a block](nowhere.md)\n```\n\n# Here\n"
        "[gone](missing.md) [no heading](other.md#nothing) [no third](other.md#twice-2)\n"
    )
    assert broken_links(str(doc)) == [
        "missing.md: no such file",
        "other.md#nothing: no heading #nothing in " + os.path.relpath(str(tmp_path / "other.md"), ROOT),
        "other.md#twice-2: no heading #twice-2 in " + os.path.relpath(str(tmp_path / "other.md"), ROOT),
    ]


def test_slugs_as_github_makes_them():
    assert slug("Final grading: `grader collect`") == "final-grading-grader-collect"
    assert slug("GitHub's runners") == "githubs-runners"
    assert slug("Frameworks: TensorFlow and PyTorch") == "frameworks-tensorflow-and-pytorch"
    assert slug("task.yaml") == "taskyaml"
