"""A class at once: ``grader batch`` and ``grader collect``.

Owns finding the hand-ins of a folder, running grades in parallel (this process, a local pool,
Dask), the SQLite gradebook that survives crashes, the grade files and LMS exports, the roster,
the batch's pages and progress line, and final collection from students' git repositories
(``collecting/``, used through its face).
May import every part below it (records/ to report/); never integrations/ or the CLI.
"""
