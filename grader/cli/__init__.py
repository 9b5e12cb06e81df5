"""The ``grader`` command.

Exit codes of ``grader check``: 0 at full marks, 1 below, 2 when the grader could not run
(bad task spec, missing file, bad arguments); the reason goes to stderr. ``grader batch``
exits 3 when the grader itself failed on some submissions (named on stderr; they are stored
as error rows that the next run grades again). ``grader collect`` exits 0 when every
repository was fetched (whatever each student handed in: the record says), 1 when some could
not be (their rows say why), 2 when it could not run.

Layout: ``parser`` (the grammar), ``dispatch`` (runs a command, turns errors into exit codes),
``common`` (what the families share) and one module per family of commands: ``check``,
``batch``, ``export``, ``collect``, ``tasks`` (freeze, kit, validate) and ``platforms``
(gradescope, ci, extras).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    # The grader's own numpy does no heavy linear algebra: one BLAS thread starts faster.
    # (Set before numpy is first imported; an explicit setting is respected.)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    # A report holds student text: where stdout cannot encode all of it (Windows writes its
    # code page to a pipe), a character is escaped rather than the report lost.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")
    # One of the few function-level imports of cli/, on purpose: the commands below it
    # import numpy, which must see the setting above first.
    from grader.cli.dispatch import dispatch

    return dispatch(argv)


def entry() -> None:
    """Console-script entry: flush, then exit at once. Everything that needs cleaning up
    (the sandbox, its files) is closed inside main(); skipping the interpreter's teardown
    saves ~40 ms a run, which matters when a class is graded one process per file."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = 2  # EXIT_CANNOT_RUN (grader.cli.common's; a literal keeps this module import-free)
    os._exit(code)


if __name__ == "__main__":
    entry()
