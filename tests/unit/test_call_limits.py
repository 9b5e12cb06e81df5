"""A call's limit follows the reference's time on its case (call_limits.py), and the CPU
time a worker used is read from /proc on the grader's side (sandbox/cpu_time.py)."""

import os

from grader.cases.call_limits import derived_limit
from grader.records.limits import Limits
from grader.sandbox import cpu_time


def test_a_multiple_of_the_reference_above_the_floor():
    limit = derived_limit(Limits(call_multiple=20, call_floor_seconds=0.5), 0.03)
    assert limit.seconds == 0.6
    assert limit.why == "20 × the reference's 30 ms on this case, at least 0.5 s"


def test_the_floor_for_a_fast_reference():
    limit = derived_limit(Limits(call_multiple=20, call_floor_seconds=0.5), 12e-6)
    assert limit.seconds == 0.5
    assert "the reference's 12 µs" in limit.why


def test_call_seconds_is_the_ceiling_of_a_derived_limit():
    limit = derived_limit(Limits(call_seconds=2, call_multiple=100, call_floor_seconds=0.5), 1.0)
    assert limit.seconds == 2 and limit.backstop == 2
    assert limit.why.endswith("at most the task's 2 s")


def test_the_wall_clock_backstop_is_a_few_times_the_limit_within_call_seconds():
    limit = derived_limit(Limits(call_seconds=10, call_floor_seconds=0.5), 1e-5)
    assert limit.seconds < limit.backstop <= 10
    assert derived_limit(Limits(call_seconds=1, call_floor_seconds=0.5), 1e-5).backstop == 1


def test_absolute_limits_and_unmeasured_ones_are_call_seconds():
    for limit in (
        derived_limit(Limits(call_seconds=3, call_limit="absolute"), 0.001),
        derived_limit(Limits(call_seconds=3), None),
    ):  # a kit: no reference to time
        assert (limit.seconds, limit.backstop) == (3, 3)
        assert limit.why == "the fixed limit of 3 s per call"


def test_cpu_time_is_read_after_the_process_name(tmp_path):
    """A process names itself (comm), brackets and spaces included: the fields that count
    are read after its last ')'."""
    ticks = os.sysconf("SC_CLK_TCK")
    forged = (
        b"42 (x) 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16) S 1 1 1 0 -1 4194560 0 0 0 0 "
        + f"{ticks} {2 * ticks} {3 * ticks} {4 * ticks} 20 0 1 0".encode()
    )
    assert cpu_time.stat_seconds(forged) == 10.0
    spent = cpu_time.process_seconds(os.getpid())
    assert spent > 0
    assert cpu_time.process_seconds(2**22 + 12345) == 0.0  # no such process
    assert os.getpid() in cpu_time.tree_pids(os.getpid())


def test_two_checks_sending_the_same_case_give_it_one_limit(monkeypatch):
    """The reference is timed per check, so one case may be measured 8.2 ms by one check
    and 6.3 ms by another: both get the larger, or a slow-but-correct call could pass in
    one check and time out in the other on timing noise."""
    from types import SimpleNamespace

    import numpy as np

    from grader.cases import call_limits

    task = SimpleNamespace(id="t")
    bounds = SimpleNamespace(call="f", name="bounds")
    precision = SimpleNamespace(call="f", name="precision")
    big, small = {"n": 8192, "x": np.zeros((2, 3))}, {"n": 2, "x": np.zeros((2, 3))}
    measured = {("bounds", 8192): 0.0082, ("precision", 8192): 0.0063, ("precision", 2): 1e-5}
    monkeypatch.setattr(call_limits, "_key", lambda task, freeze, check, count: check.name)
    monkeypatch.setattr(
        call_limits, "_time_one", lambda task, ref, check, args: measured[(check.name, args["n"])]
    )
    times = call_limits.ReferenceTimes(task, object(), "", use_disk=False)
    for check, cases in ((bounds, [big]), (precision, [small, big])):
        times.seconds(check, SimpleNamespace(cases=cases))
    seconds = times.seconds(precision, SimpleNamespace(cases=[small, big]))
    assert seconds == [1e-5, 0.0063]
    assert times.pooled(precision, SimpleNamespace(cases=[small, big]), seconds) == [1e-5, 0.0082]
