"""What the grader decides about frameworks on its own side (grader/task/frameworks.py): which a
worker preloads, which log lines are left out of a file's output, which extras a zip or a
course installs."""

import importlib.util

import pytest

from grader.task import frameworks


def test_only_frameworks_the_task_allows_and_the_file_imports_are_preloaded(monkeypatch):
    monkeypatch.setattr(frameworks, "installed", lambda framework: True)
    allowed = ("numpy", "tensorflow", "torch")
    assert frameworks.preload(allowed, ["numpy"]) == ()
    assert frameworks.preload(allowed, ["torch.nn", "numpy"]) == ("torch",)
    assert frameworks.preload(("numpy", "torch"), ["tensorflow"]) == ()  # not allowed: not preloaded
    assert frameworks.preload(allowed, ["tensorflow"])[0] == "tensorflow"


def test_a_framework_that_is_not_installed_is_not_preloaded(monkeypatch):
    monkeypatch.setattr(frameworks, "installed", lambda framework: False)
    assert frameworks.preload(("numpy", "tensorflow"), ["tensorflow"]) == ()


LOG = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1796168223.556379       2 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.
To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.
2024-01-05 10:00:00.123456: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on.
Error in cpuinfo: failed to parse processor information from /proc/cpuinfo
"""


def test_framework_log_lines_are_left_out_and_counted():
    text = "step 1\n" + LOG + "(5, 8)\n"
    kept, dropped = frameworks.without_log_noise(text, ("tensorflow",))
    assert kept == "step 1\n(5, 8)\n" and dropped == 5
    shown = frameworks.shown_output(text, ("numpy", "tensorflow"))
    assert shown == "step 1\n(5, 8)\n[5 lines of TensorFlow's own log left out]\n"


def test_lines_that_only_mention_a_framework_are_kept():
    text = "I think tensorflow/core is neat\nWARNING: my own warning\nE = mc^2\n"
    assert frameworks.shown_output(text, ("tensorflow",)) == text


def test_extras_of_a_task_are_its_allowed_frameworks():
    assert [f.extra for f in frameworks.allowed_frameworks(("numpy", "torch.nn", "tensorflow"))] == [
        "tensorflow",
        "torch",
    ]
    assert frameworks.allowed_frameworks(("numpy", "math")) == ()


def test_the_zips_requirements_pin_the_frameworks_installed_here():
    from grader.integrations import self_package

    for module in ("tensorflow", "torch"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed here")
    dist = self_package.distribution()
    plain = self_package.requirements_text(dist)
    with_frameworks = self_package.requirements_text(dist, ("tensorflow", "torch"))
    assert "tensorflow" not in plain and "torch==" not in plain
    pins = with_frameworks.splitlines()
    assert any(p.replace("_", "-").lower().startswith(("tensorflow-cpu==", "tensorflow==")) for p in pins)
    torch_pin = [p for p in pins if p.startswith("torch==")]
    assert torch_pin and "nvidia" not in with_frameworks.lower()
    numpy_pin = [p for p in pins if p.startswith("numpy==")]
    assert numpy_pin and " ; " not in numpy_pin[0], numpy_pin  # the grader needs it everywhere
    if "+cpu" in torch_pin[0]:  # PyPI has no CPU build: the zip names the index that has it
        assert f"--extra-index-url {self_package.TORCH_CPU_INDEX}" in pins
