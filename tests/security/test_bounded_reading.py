"""The bound on the grader's own reading of untrusted bytes (grader/submission/bounded.py): whatever
the bytes make the reader build or do, the grader's process is untouched and the cost is
said as that file's problem. Forked children (the usual case) and a new Python (where this
process has threads, as a Dask worker does) hold the same bound."""

import resource
import threading

import pytest

from grader.submission import bounded

SMALL = bounded.Bound(memory_bytes=256 << 20, cpu_seconds=2, wall_seconds=20.0)


@pytest.fixture(params=["forked", "spawned"])
def how(request):
    """Forked, or with a second thread alive here (then a new Python reads)."""
    if request.param == "forked":
        yield request.param
        return
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    yield request.param
    stop.set()
    thread.join()


def test_an_answer_comes_back_as_plain_data(how):
    assert bounded.call("json:loads", '{"a": [1, 2.5, "x"]}', SMALL) == {"a": [1, 2.5, "x"]}


def test_memory_past_the_bound_is_the_files_problem_not_the_graders(how):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(bounded.TooCostly) as caught:
        bounded.call("builtins:bytearray", 2 << 30, SMALL)  # 2 GiB
    assert caught.value.why == "memory" and "256 MiB" in str(caught.value)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 64 << 10  # KiB


def test_cpu_time_past_the_bound_is_stopped(how):
    with pytest.raises(bounded.TooCostly) as caught:
        bounded.call("math:factorial", 10**8, SMALL)
    assert caught.value.why == "time"


def test_a_reader_that_blocks_is_killed_at_the_deadline(how):
    with pytest.raises(bounded.TooCostly) as caught:
        bounded.call("time:sleep", 600, bounded.Bound(wall_seconds=2.0))
    assert caught.value.why == "time" and "2 s" in str(caught.value)


def test_a_reader_that_raises_is_said_so(how):
    with pytest.raises(bounded.TooCostly) as caught:
        bounded.call("json:loads", "{not json", SMALL)
    assert caught.value.why == "crashed" and "JSONDecodeError" in str(caught.value)
