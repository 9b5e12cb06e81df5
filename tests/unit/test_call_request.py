"""What a worker that shares no memory hands back of a call's arguments
(grader/sandbox/call_request.py): the arrays named in the request, read back as sent."""

import numpy as np

from grader.sandbox.call_request import calls_request, sent_back


def test_arrays_a_worker_without_shared_memory_sends_back_are_named_and_read_as_sent():
    m, k = np.ones((2, 3)), np.arange(4)
    items = [([m, 5], {"k": k}), ([[1.0, 2.0]], {})]
    back: list = []
    header, blobs = calls_request("f", items, back=back)
    assert back == [[0, 2], []] and [i["send_back"] for i in header["items"]] == back
    assert "fds" not in header  # nothing shared: the arrays went as any argument
    changed = m * 2
    assert [np.asarray(v).tolist() for v in sent_back(items[0], back[0], [changed, k])] == [
        changed.tolist(),
        5,
        k.tolist(),
    ]
    # Without one array back for each named, none is taken: the check sees them changed.
    for returned in (None, [changed], "no"):
        after = sent_back(items[0], back[0], returned)
        assert after[0] is None and after[2] is None and after[1] == 5
