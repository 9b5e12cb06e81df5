"""The HTML pages as data: every student string escaped wherever it lands, the likely cause
first with the checks it explains, pictures drawn (and none for a hidden check), page file
names that no student id can steer."""

import re
from html.parser import HTMLParser

import pytest

from grader.classroom.page_files import page_name, student_page_path
from grader.grading.redact import for_students
from grader.records.result import FAILED, PASSED, CheckResult, Diagnosis, Picture, Result
from grader.report import RENDERERS, class_page, html, svg
from grader.report.class_summary import summarize

HOSTILE = [
    "<script>document.title='pwned'</script>",
    "</style><b>bold</b>",
    "<img src=x onerror=\"document.title='pwned'\">",
    "]]>",
    "-->",
    "<!--",
    '" onmouseover="x',
    "<svg onload=alert(1)>",
    "</title><script>alert(2)</script>",
    "&amp; &lt;",
]
EVIL = " ".join(HOSTILE)

# The tags the pages are made of: anything else would come from student text.
OUR_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "p",
    "span",
    "div",
    "section",
    "pre",
    "figure",
    "svg",
    "path",
    "g",
    "text",
    "rect",
    "ul",
    "li",
    "table",
    "tr",
    "th",
    "td",
    "a",
}


class Tags(HTMLParser):
    """Every element and attribute a browser would build from the page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]

    def handle_comment(self, data):
        self.tags.append("<!-- comment -->")

    def handle_data(self, data):
        self.text.append(data)


def parsed(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    tags.close()
    return tags


def picture(expected, got, where=""):
    def shape(rows):
        return [len(rows), len(rows[0])]

    return Picture(
        expected=expected, got=got, expected_shape=shape(expected), got_shape=shape(got), where=where
    )


SWAPPED = picture([[0.0, 1.0], [0.84, 0.54]], [[1.0, 0.0], [0.54, 0.84]])


def result(**changes) -> Result:
    checks = [
        CheckResult("loads", PASSED, 0.0, 0.0, description="the file loads"),
        CheckResult(
            "sin-even-cos-odd",
            FAILED,
            0.0,
            2.0,
            message="values differ",
            description="even columns hold sin",
            failing_input="sinusoidal_pe(2, 2)",
            output="debug line",
            reason="mismatch",
            picture=SWAPPED,
        ),
        CheckResult("table-shape", FAILED, 0.0, 1.0, message="wrong shape", reason="mismatch"),
    ]
    base = dict(
        task="positional-encoding",
        submission="dir/me.py",
        score=0.0,
        max_score=3.0,
        status=FAILED,
        isolation="bubblewrap",
        checks=checks,
    )
    base.update(changes)
    return Result(**base)


def hostile_result() -> Result:
    check = CheckResult(
        EVIL,
        FAILED,
        0.0,
        1.0,
        message=EVIL,
        description=EVIL,
        failing_input=EVIL,
        output=EVIL + "\n" + EVIL,
        reason="mismatch",
        picture=picture([[1.0, None]], [[2.0, 3.0]], where=EVIL),
    )
    # (a status is a word the grader chose, but a stored report is data: it is escaped too,
    # here in an attribute value)
    return Result(
        task=EVIL,
        submission=f"dir/{EVIL}.py",
        score=0.0,
        max_score=1.0,
        status=EVIL,
        isolation=EVIL,
        isolation_note=EVIL,
        output=EVIL,
        checks=[check],
        diagnoses=[Diagnosis(EVIL, EVIL, [EVIL])],
        grader_version=EVIL,
        cases_digest=EVIL,
    )


def assert_inert(page: str) -> None:
    tags = parsed(page)
    assert set(tags.tags) <= OUR_TAGS, set(tags.tags) - OUR_TAGS
    assert not [a for a in tags.attributes if a.startswith("on")]
    assert page.lower().count("</style>") == 1 and page.lower().count("</title>") <= page.count("<title>")
    assert "-->" not in page and "]]>" not in page and "<!--" not in page
    shown = "".join(tags.text)
    for piece in HOSTILE:
        assert piece in shown, piece  # shown as text, whole


def test_every_student_string_is_text_on_the_page_never_markup():
    assert_inert(html.render(hostile_result()))


def test_the_page_forbids_scripts_and_requests_before_anything_else():
    page = html.render(result())
    head = page[: page.index("<title>")]
    assert 'http-equiv="Content-Security-Policy"' in head
    policy = re.search(r'content="([^"]*)"', head[head.index("Content-Security") :]).group(1)
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "<script" not in page.lower()


def test_html_is_a_format_of_grader_check():
    assert "html" in RENDERERS
    assert RENDERERS["html"](result()) == html.render(result())


def test_a_failed_array_check_shows_expected_yours_and_their_difference_with_scales():
    page = html.render(result())
    assert page.count('class="heatmap"') == 3
    assert "yours − expected" in page and page.count('class="legend"') == 2
    # the swap shows: the difference is +1 and -1 in the first row, on the difference scale
    delta = svg.difference(SWAPPED.expected, SWAPPED.got)
    assert delta[0] == [1.0, -1.0]
    scale = svg.difference_scale(delta)
    assert scale.colour(1.0) != scale.colour(-1.0) != scale.colour(0.0)
    assert scale.colour(1.0) in page and scale.colour(-1.0) in page


def test_outputs_of_different_shapes_are_both_drawn_and_no_difference_is():
    shot = picture([[1.0, 2.0, 3.0]], [[1.0], [2.0], [3.0]])
    page = html.render(result(checks=[CheckResult("c", FAILED, 0.0, 1.0, picture=shot)]))
    assert page.count('class="heatmap"') == 2 and "yours − expected" not in page
    assert "The shapes differ (expected (1, 3), yours (3, 1))" in page


def test_values_that_are_not_finite_are_drawn_apart_and_tiny_inputs_stay_readable():
    shot = picture([[0.5, 1.0]], [[None, 1.0]])
    page = html.render(result(checks=[CheckResult("c", FAILED, 0.0, 1.0, picture=shot)]))
    assert svg.NOT_FINITE in page.split('class="legend"')[0]  # in a heatmap, not just the legend
    scale = svg.values_scale([[1.0]])
    assert all(scale.colour(v) != svg.NOT_FINITE for v in (-1.0, -0.5, 0.0, 0.5, 1.0))
    assert svg.cell_size(1, 2) >= 12
    assert ">0.5</text>" in page and ">nan</text>" in page  # a 1x2 grid shows its values
    assert svg.cell_size(64, 64) * 64 <= 480  # a 64x64 picture still fits beside the others


def test_one_huge_value_of_yours_does_not_wash_out_the_expected_picture():
    shot = picture([[0.0, 1.0], [0.84, 0.54]], [[1e308, 1.0], [0.84, 0.54]])
    page = html.render(result(checks=[CheckResult("c", FAILED, 0.0, 1.0, picture=shot)]))
    expected_panel = page.split('class="heatmap"')[1]
    scale = svg.values_scale(shot.expected)
    assert scale.limit == 1.0 and scale.colour(1.0) in expected_panel and scale.colour(0.84) in expected_panel


def test_a_diagnosis_comes_first_with_the_checks_it_explains_under_it():
    diagnosed = result(
        diagnoses=[
            Diagnosis("sin-cos-swapped", "Your table matches sin and cos swapped", ["sin-even-cos-odd"])
        ]
    )
    page = html.render(diagnosed)
    cause = page.index("Likely cause")
    assert cause < page.index("Your table matches sin and cos swapped") < page.index("sin-even-cos-odd")
    section = page[page.index('<section class="cause">') : page.index("Other checks")]
    assert "sin-even-cos-odd" in section and "table-shape" not in section
    assert page.index("Other checks") < page.index(">table-shape<")
    assert "Likely cause" not in html.render(result())


def test_a_hidden_check_has_no_picture_on_the_student_page():
    hidden = CheckResult(
        "hidden-big",
        FAILED,
        0.0,
        1.0,
        message="m",
        hidden=True,
        reason="mismatch",
        picture=picture([[123.456]], [[654.321]]),
    )
    page = html.render(for_students(result(checks=[hidden])))
    assert 'class="heatmap"' not in page and "123.456" not in page and "654.321" not in page
    assert "hidden check" in page


def test_the_class_page_escapes_ids_and_counts_mistakes():
    report = hostile_result().to_dict()
    stored = [(EVIL, report), ("bob", result().to_dict())]
    summary = summarize("positional-encoding", [(s, Result.from_dict(row)) for s, row in stored])
    lines = [
        class_page.StudentLine(EVIL, 0.0, 1.0, EVIL, f"pages-x/{page_name(EVIL)}"),
        class_page.StudentLine("bob", 0.0, 3.0, "failed", None),
    ]
    page = class_page.render(summary, lines)
    assert_inert(page)
    assert summary.mistakes and f"{summary.mistakes[0].students} student" in page
    assert page.count('class="bars"') == 3  # distribution, pass rates, mistakes
    hrefs = re.findall(r'href="([^"]*)"', page)
    assert hrefs == [f"pages-x/{page_name(EVIL)}"]


@pytest.mark.parametrize(
    "ids",
    [
        ["alice", "Alice", "ALICE"],  # one file on a case-insensitive disk
        ["a/b", "a_b", "a-b", "a b", "a\\\\b"],  # differ only in unsafe characters
        ["..", "../x", "x/../../etc", "-", "", "con", "CON"],
        ["alice." + "0" * 16, "Alice", "alice"],  # a plain-looking id cannot take a hashed name
    ],
)
def test_page_names_are_safe_and_never_shared(ids, tmp_path):
    names = [page_name(i) for i in ids]
    assert len({n.lower() for n in names}) == len(ids)
    for student, name in zip(ids, names):
        assert re.fullmatch(r"[a-z0-9_][a-z0-9_-]*(\.[0-9a-f]{16})?\.html", name), name
        path = student_page_path(str(tmp_path), "positional-encoding", student)
        assert path.startswith(str(tmp_path / "pages-positional-encoding") + "/")
    assert page_name("alice") == "alice.html"  # a plain id keeps its name
