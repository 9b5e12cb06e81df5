"""`grader serve` under a crowd and a flood, on SQLite and PostgreSQL, beside the command
line grading the same files in the same run (issue 27).

    .venv/bin/python bench/serve_speed.py [--runs 3] [--jobs 2] [--databases sqlite,postgresql]

Each run starts a real `grader serve` (tests/service/durable_server.py: its own process
group, port 0, tokens from the store) on the positional-encoding task and:

- **crowd**: 10 students send 50 uploads at once (the mixed class of bench/classes.py:
  correct and buggy samples, half and half), each from a connection of its own. Upload to
  feedback is read from the database (``finished - uploaded``, both stamped by the server;
  a client polling 50 ids sees it later by the time its polls take). Baseline in the same run:
  `grader batch --jobs N` of the same 50 files (the class's time) and `grader check` of
  one file (the wait a student has on the command line).
- **flood**: one student sends 30 uploads, then an honest student sends one. The honest
  student's wait (``finished - uploaded``), against the same upload on the idle server
  (after a first upload has started the pool's workers) and against one grading slot (the
  median grading time, ``finished - started``).

PostgreSQL is a throwaway cluster (tests/service/postgres.py: Debian's binaries, a Unix
socket in a temporary folder); without it that database is left out, said on stderr.
Prints medians over the runs (and each run's figure in brackets).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from classes import ROOT, SAMPLES, TASK, make_class  # (bench/ is on sys.path when run)

sys.path.insert(0, os.path.join(ROOT, "tests", "service"))
from durable_server import Client, Server, rows, upload_all, write_roster  # noqa: E402

TASK_ID = "positional-encoding"
CROWD_STUDENTS, CROWD_EACH, FLOOD = 10, 5, 30


def tokens(db: str, people: list[str]) -> dict[str, str]:
    from grader.service.store import Store

    store = Store(db)
    try:
        return {p: store.issue_token(p) for p in people}
    finally:
        store.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def accepted(answers) -> list[str]:
    bad = [a.text for a in answers if a.status_code != 202]
    if bad:
        raise SystemExit(f"an upload was refused: {bad[:3]}")
    return [a.json()["id"] for a in answers]


def crowd(server: Server, db: str, files: list[str]) -> dict[str, float]:
    people = [f"student{i:02}" for i in range(CROWD_STUDENTS)]
    secret = tokens(db, people)
    uploads = []
    for k, path in enumerate(files):
        with open(path, "rb") as f:
            uploads.append((secret[people[k % CROWD_STUDENTS]], TASK_ID, os.path.basename(path), f.read()))
    sent = time.time()
    ids = accepted(upload_all(server.url, uploads, threads=len(uploads)))
    client = Client(server.url)
    client.wait_done(dict(zip(ids, (u[0] for u in uploads))), timeout=600, poll=0.05)
    client.close()
    found = {r.public_id: r for r in rows(db)}
    waits = [found[i].finished - found[i].uploaded for i in ids]
    return {
        "median": statistics.median(waits),
        "p95": percentile(waits, 0.95),
        "class": max(found[i].finished for i in ids) - sent,
        "slot": statistics.median(found[i].finished - found[i].started for i in ids),
    }


def flood(server: Server, db: str, content: bytes) -> dict[str, float]:
    secret = tokens(db, ["flood", "honest", "idle"])
    client = Client(server.url)
    for name in ("warm-up.py", "alone.py"):  # the first upload also starts the pool's workers
        idle = client.upload(secret["idle"], TASK_ID, name, content).json()["id"]
        client.wait_done({idle: secret["idle"]}, timeout=300, poll=0.02)
    flooded = [client.upload(secret["flood"], TASK_ID, f"flood_{k}.py", content) for k in range(FLOOD)]
    accepted(flooded)
    honest = client.upload(secret["honest"], TASK_ID, "mine.py", content).json()["id"]
    client.wait_done({honest: secret["honest"]}, timeout=600, poll=0.02)
    client.close()
    found = {r.public_id: r for r in rows(db)}
    graded = [r for r in found.values() if r.started is not None and r.finished is not None]
    return {
        "honest": found[honest].finished - found[honest].uploaded,
        "idle": found[idle].finished - found[idle].uploaded,
        "slot": statistics.median(r.finished - r.started for r in graded),
    }


SLOW = 1100  # round four's attack: connections from one address sending their heads slowly


def slow_connections(server: Server, db: str, _unused: object) -> dict[str, float]:
    """/healthz's answer time from an honest address, idle and while one other address
    (127.0.0.2) holds SLOW connections that each send a byte of a head and no more; and how
    many of them the server held (the rest answered 503 at the door)."""
    import resource
    import socket

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, SLOW + 300)), hard))
    host, port = server.url.removeprefix("http://").rsplit(":", 1)

    def healthz_seconds() -> float:
        times = []
        for _ in range(30):
            start = time.perf_counter()
            with socket.create_connection((host, int(port)), timeout=60) as c:
                c.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                while c.recv(4096):
                    pass
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    idle = healthz_seconds()
    held = []
    try:
        for _ in range(SLOW):
            c = socket.socket()
            c.bind(("127.0.0.2", 0))
            c.connect((host, int(port)))
            c.sendall(b"G")
            held.append(c)
        time.sleep(1.0)
        attacked = healthz_seconds()
        kept = 0
        for c in held:
            c.setblocking(False)
            try:
                c.recv(1)  # (an answer, 503, or the close: not held)
            except BlockingIOError:
                kept += 1
            except OSError:
                pass
    finally:
        for c in held:
            c.close()
    return {"idle": idle, "attacked": attacked, "held": float(kept)}


def command_line(work: str, folder: str, one: str, jobs: int) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=ROOT)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "grader", "batch", TASK, folder, "--out", tempfile.mkdtemp(dir=work),
         "--jobs", str(jobs)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT, check=True,
    )  # fmt: skip
    batch = time.perf_counter() - start
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "grader", "check", TASK, one],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=ROOT,
    )  # fmt: skip
    return {"batch": batch, "check": time.perf_counter() - start}


def database_url(kind: str, folder: str, name: str, cluster) -> str:
    """A fresh database for one measure: a SQLite file, or a new database of the cluster."""
    if kind == "sqlite":
        return f"sqlite:///{os.path.join(folder, name + '.db')}"
    return cluster.new_database()


def one_run(kind: str, work: str, run: int, cluster, files: list[str], jobs: int) -> dict[str, float]:
    folder = tempfile.mkdtemp(prefix=f"{kind}-{run}-", dir=work)
    people = [f"student{i:02}" for i in range(CROWD_STUDENTS)] + ["flood", "honest", "idle"]
    roster = write_roster(os.path.join(folder, "roster.csv"), people)
    with open(os.path.join(SAMPLES, "correct_vectorized.py"), "rb") as f:
        correct = f.read()
    figures: dict[str, float] = {}
    measures: list[tuple[str, Any, Any]] = [("crowd", crowd, files), ("flood", flood, correct)]
    if kind == "sqlite":  # (the connections' walls do not depend on the database)
        measures.append(("slow", slow_connections, None))
    for name, measure, argument in measures:
        db = database_url(kind, folder, name, cluster)
        # (the flood's 30 uploads in a second are over the default rate, 10 a minute, and the
        # crowd's five at once from each student over the two in flight a person may send:
        # allowed here, so that the queue's speed and fairness are what is measured)
        limits = ["--limit", "uploads-per-minute=1000", "--limit", "uploads-in-flight=5"]
        server = Server([TASK], roster, db, jobs, folder, *limits).start()
        try:
            figures.update({f"{name} {k}": v for k, v in measure(server, db, argument).items()})
        finally:
            server.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--databases", default="sqlite,postgresql")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="bench-serve-")
    os.environ.update(GRADER_CACHE_DIR=os.path.join(work, "cache"), PYTHONPATH=ROOT)
    klass = os.path.join(work, "class")
    make_class(klass, CROWD_STUDENTS * CROWD_EACH)
    files = sorted(os.path.join(klass, f) for f in os.listdir(klass))
    cluster = None
    kinds = args.databases.split(",")
    if "postgresql" in kinds:
        from postgres import start_cluster

        cluster = start_cluster()
        if cluster is None:
            print("PostgreSQL is not installed here: SQLite only", file=sys.stderr)
            kinds.remove("postgresql")
    results: dict[str, list[dict[str, float]]] = {k: [] for k in kinds}
    baseline: list[dict[str, float]] = []
    try:
        command_line(work, klass, files[0], args.jobs)  # fills the case cache, as a course's server has
        for run in range(args.runs):
            baseline.append(command_line(work, klass, files[0], args.jobs))
            for kind in kinds:
                results[kind].append(one_run(kind, work, run, cluster, files, args.jobs))
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    report(results, baseline, args)


def _median(runs: list[dict[str, float]], key: str) -> str:
    values = [r[key] for r in runs]
    return f"{statistics.median(values):.2f} s ({' '.join(f'{v:.2f}' for v in values)})"


def _ms(runs: list[dict[str, float]], key: str) -> str:
    values = [r[key] * 1000 for r in runs]
    return f"{statistics.median(values):.1f} ms ({' '.join(f'{v:.1f}' for v in values)})"


def report(results: dict[str, list[dict[str, float]]], baseline: list[dict[str, float]], args) -> None:
    print(f"grader serve, --jobs {args.jobs}, {args.runs} runs, medians (each run in brackets)")
    print(f"  command line: grader check of one file {_median(baseline, 'check')}")
    print(f"                grader batch of the 50 files {_median(baseline, 'batch')}")
    batch = statistics.median(r["batch"] for r in baseline)
    for kind, runs in results.items():
        print(f"{kind}:")
        print(
            f"  50 uploads at once from 10 students: upload to feedback median {_median(runs, 'crowd median')}"
        )
        print(f"    95th percentile {_median(runs, 'crowd p95')}")
        class_time = statistics.median(r["crowd class"] for r in runs)
        print(
            f"    all 50 graded {_median(runs, 'crowd class')}: {class_time / batch:.2f}x grader batch's time"
        )
        print(f"    one grading slot {_median(runs, 'crowd slot')}")
        honest = statistics.median(r["flood honest"] for r in runs)
        idle = statistics.median(r["flood idle"] for r in runs)
        slot = statistics.median(r["flood slot"] for r in runs)
        print(
            f"  a flood of {FLOOD} beside an honest upload: the honest wait {_median(runs, 'flood honest')}"
        )
        print(
            f"    alone on the idle server {_median(runs, 'flood idle')}; one slot {_median(runs, 'flood slot')}"
        )
        print(
            f"    the flood cost the honest student {honest - idle:+.2f} s = {(honest - idle) / slot:.2f} slots"
        )
        if "slow idle" in runs[0]:
            held = statistics.median(r["slow held"] for r in runs)
            ratio = statistics.median(r["slow attacked"] / r["slow idle"] for r in runs)
            print(
                f"  {SLOW} slow connections from one address ({held:.0f} held, the rest 503 at the door): "
                f"/healthz {_ms(runs, 'slow attacked')} against {_ms(runs, 'slow idle')} idle, {ratio:.2f}x"
            )


if __name__ == "__main__":
    main()
