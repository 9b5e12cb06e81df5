"""The pages as a student and an instructor open them: made by the real commands, loaded in
a real headless Chromium (tests/helpers/chromium.py). They load with no console error and no request
but the file itself, their pictures are drawn (a screenshot of a picture has many colours),
and a submission's printed `<script>` or a hostile student file name runs nothing and shows
as text.

Skipped with the reason when Chromium is missing; with GRADER_REQUIRE_BROWSER=1 (CI) a
missing browser fails instead."""

import os
import re
import shutil

import pytest
from helpers.chromium import NOTHING_RAN, chromium_or_skip, png_colours
from helpers.cli import run_cli
from helpers.paths import PE_SAMPLES, PE_TASK

PWNED = "pwned"
HOSTILE_PRINT = (
    "<script>document.title='pwned'</script> </style> "
    "<img src=x onerror=\"document.title='pwned'\"> ]]> --> "
    "<svg onload=\"document.title='pwned'\"></svg>"
)
# Prints its hostile text while imported and in every call, and swaps sin and cos.
HOSTILE_SUBMISSION = f"""
import numpy as np
TEXT = {HOSTILE_PRINT!r}
print(TEXT)

def sinusoidal_pe(max_len, d_model, base=10000.0):
    print(TEXT)
    pos = np.arange(max_len)[:, None]
    i = np.arange(d_model)[None, :]
    angle = pos / base ** ((i - i % 2) / d_model)
    table = np.where(i % 2 == 0, np.cos(angle), np.sin(angle))
    if d_model % 2:
        table[:, -1] = 0.0
    return table

def add_positional_encoding(x, base=10000.0):
    print(TEXT)
    return x + sinusoidal_pe(x.shape[-2], x.shape[-1], base)
"""
HOSTILE_NAMES = ["<script>document.title='pwned'<!--", "<img src=x onerror=document.title='pwned'>"]


@pytest.fixture(scope="module")
def browser():
    yield from chromium_or_skip()


def opened(browser, path):
    """The page at ``path``, checked for what every page must be: quiet and self-contained."""
    url = "file://" + str(path)
    page = browser.open(url)
    assert page.requests == [url], "a page may request nothing but itself"
    assert page.console == [] and page.errors == []
    title, elements, handlers = page.evaluate(NOTHING_RAN)
    assert title != PWNED and title.startswith("positional-encoding") and elements == 0 and not handlers
    return page


def picture_colours(page, index=0) -> int:
    box = page.evaluate(
        f"(() => {{ const r = document.querySelectorAll('figure.picture')[{index}]"
        ".getBoundingClientRect(); return [r.x, r.y + window.scrollY, r.width, r.height]; })()"
    )
    page.call(
        "Emulation.setDeviceMetricsOverride",
        width=1200,
        height=int(page.evaluate("document.documentElement.scrollHeight")),
        deviceScaleFactor=1,
        mobile=False,
    )
    shot = page.screenshot({"x": box[0], "y": box[1], "width": box[2], "height": box[3]})
    return png_colours(shot)


@pytest.mark.parametrize("sample", ["mistake_sin_cos_swapped.py", "mistake_column_index_exponent.py"])
def test_a_student_page_loads_quietly_and_draws_its_pictures(browser, tmp_path, sample):
    out = tmp_path / "page.html"
    done = run_cli("check", PE_TASK, os.path.join(PE_SAMPLES, sample), "--format", "html", "-o", str(out))
    assert done.returncode == 1, done.stderr
    page = opened(browser, out)
    assert page.evaluate("document.title").startswith(f"positional-encoding · {sample}")
    assert page.evaluate("document.querySelectorAll('figure.picture svg.heatmap').length") >= 3
    # expected, yours, difference and two legends: far more colours than text on white
    assert picture_colours(page) >= 12
    shown = page.evaluate("document.body.innerText")
    assert "FAIL" in shown and "example-table-3x4" in shown and "Score:" in shown


def test_a_correct_file_gets_a_page_without_pictures(browser, tmp_path):
    out = tmp_path / "page.html"
    done = run_cli(
        "check", PE_TASK, os.path.join(PE_SAMPLES, "correct_loops.py"), "--format", "html", "-o", str(out)
    )
    assert done.returncode == 0, done.stderr
    page = opened(browser, out)
    assert page.evaluate("document.querySelectorAll('figure.picture').length") == 0
    assert "passed" in page.evaluate("document.body.innerText")


def test_what_a_submission_prints_is_shown_and_runs_nothing(browser, tmp_path):
    source = tmp_path / "hostile.py"
    source.write_text(HOSTILE_SUBMISSION)
    out = tmp_path / "page.html"
    done = run_cli("check", PE_TASK, str(source), "--format", "html", "-o", str(out))
    assert done.returncode == 1, done.stderr
    page = opened(browser, out)
    shown = page.evaluate("document.body.innerText")
    assert shown.count(HOSTILE_PRINT) >= 2  # at import, and in a failed check's output
    assert picture_colours(page) >= 12


def test_a_batch_writes_quiet_pages_for_every_student_and_hostile_names_run_nothing(browser, tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    students = {
        "alice": "mistake_sin_cos_swapped.py",
        "Alice": "correct_vectorized.py",
        HOSTILE_NAMES[0]: "mistake_exponent_missing_two.py",
        HOSTILE_NAMES[1]: "broken_syntax_error.py",
    }
    for student, sample in students.items():
        shutil.copy(os.path.join(PE_SAMPLES, sample), klass / f"{student}.py")
    (klass / "printer.py").write_text(HOSTILE_SUBMISSION)
    out = tmp_path / "out"
    done = run_cli("batch", PE_TASK, str(klass), "--out", str(out), "--jobs", "2", timeout=300)
    assert done.returncode == 0, done.stderr
    class_page = opened(browser, out / "class-positional-encoding.html")
    shown = class_page.evaluate("document.body.innerText")
    for student in [*students, "printer"]:
        assert student in shown
    links = class_page.evaluate("[...document.querySelectorAll('a')].map(a => [a.textContent, a.href])")
    assert sorted(name for name, _ in links) == sorted([*students, "printer"])
    assert class_page.evaluate("document.querySelectorAll('svg.bars').length") >= 2
    pages = os.listdir(out / "pages-positional-encoding")
    assert len(pages) == 5 and all(re.fullmatch(r"[a-z0-9_.-]+\.html", p) for p in pages)
    for student, href in links:
        assert href.startswith(f"file://{out}/pages-positional-encoding/")
        page = opened(browser, href[len("file://") :])
        assert f"· {student}.py" in page.evaluate("document.body.innerText")
    printer = dict(links)["printer"][len("file://") :]
    assert HOSTILE_PRINT in opened(browser, printer).evaluate("document.body.innerText")
