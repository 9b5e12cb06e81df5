"""No module of the grader over 500 lines: one that grows past it holds more than one idea
and is split (CONTRIBUTING.md: the layout)."""

import pathlib

LIMIT = 500
GRADER = pathlib.Path(__file__).resolve().parents[2] / "grader"


def over_limit(root: pathlib.Path) -> dict[str, int]:
    sizes = {
        str(p.relative_to(root)): len(p.read_text(encoding="utf-8").splitlines()) for p in root.rglob("*.py")
    }
    return {name: n for name, n in sizes.items() if n > LIMIT}


def test_no_module_is_over_500_lines():
    assert over_limit(GRADER) == {}


def test_control_a_long_module_is_found(tmp_path):
    (tmp_path / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * LIMIT)
    assert over_limit(tmp_path) == {"long.py": LIMIT + 1}
