"""A worker's answers are taken in step with the requests: a stale or doubled answer is that
call's error, never the next call's result. In process: the worker is played by a thread
(the forging workers themselves run in tests/security/test_hostile_answers.py)."""

import socket
import threading


class _FakeProcess:
    """A worker seen from the Sandbox, played by a thread that answers as told."""

    inner_path = "/nowhere.py"

    def __init__(self, answer):
        self.sock, theirs = socket.socketpair()
        self.ready = True
        self.thread = threading.Thread(target=self._serve, args=(theirs, answer), daemon=True)
        self.thread.start()

    def cpu_seconds(self):
        return None  # no CPU reading: the wall-clock time alone counts

    @staticmethod
    def _serve(sock, answer):
        from grader.sandbox import wire

        try:
            while True:
                header, _ = wire.recv(sock)
                for reply in answer(header):
                    wire.send(sock, reply)
        except (wire.WireError, OSError):
            sock.close()

    def take_output(self, until=None):
        return "", ""

    def exit_description(self):
        return "ended"

    def kill(self):
        self.sock.close()


def test_stale_answer_is_not_taken_for_the_next_call():
    from grader.records.limits import Limits
    from grader.sandbox import wire
    from grader.sandbox.launcher import Sandbox

    def answer(header):
        if header["op"] == "load":
            return [
                {
                    "ok": True,
                    "id": header.get("id"),
                    "imports": [],
                    "functions": {"f": {"defined": True, "callable": True, "params": ["x"]}},
                }
            ]
        replies = []
        for item in header["items"]:
            x = wire.decode(item["args"], [])[0]
            replies.append({"ok": True, "id": item.get("id"), "result": x * 10})
            if x == 1:  # answered twice
                replies.append({"ok": True, "id": item.get("id"), "result": x * 10})
        return replies

    with Sandbox(b"", ["f"], Limits(), spawn=lambda *a: _FakeProcess(answer)) as box:
        outcomes = list(box.calls("f", [([x], {}) for x in range(1, 6)]))
    assert outcomes[0].status == "ok" and outcomes[0].value == 10
    assert outcomes[1].status == "malformed" and "answers request" in outcomes[1].error.message
    # the worker was replaced; the calls after it are answered by the new one, in step
    assert [(o.status, o.value) for o in outcomes[2:]] == [("ok", 30), ("ok", 40), ("ok", 50)]
