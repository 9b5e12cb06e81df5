"""``grader collect``: final collection from students' git repositories, and its record.

The rest of the grader uses this face only: the command (``run_collect``, with the
``--repo-url`` ``Template`` and ``parse_deadline``) and the record it leaves,
``collection.csv`` (``read_collection``, and ``join_collection`` that puts it in the grade
files for ``grader export --collection``).

Modules: ``run`` (the command's run over a roster: each student's repository fetched, the
commit before the deadline chosen, each task's hand-in written out), ``bare_repo`` (a
student's repository fetched bare and read as data through git's object commands),
``local_copy`` (a repository named by a local path: only under ``--repos-root``, copied
privately before git reads it), ``solutions_tree`` (a task's hand-in found in the
``solutions/`` tree of a commit, read from git objects), ``collection_csv`` (the
collection.csv record: written, read back, joined with the grade files).
"""

from grader.classroom.collecting.collection_csv import (
    Collection,
    CollectionError,
    join_collection,
    read_collection,
)
from grader.classroom.collecting.run import CollectError, Template, parse_deadline, run_collect

__all__ = [
    "CollectError",
    "Collection",
    "CollectionError",
    "Template",
    "join_collection",
    "parse_deadline",
    "read_collection",
    "run_collect",
]
