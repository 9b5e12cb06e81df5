"""A check's cases: the argument sets it tries and the reference's expected outputs, the
same for every student. The rest of the grader uses only what this face names.

- model.py: the record (``CaseSet``) and the two ways building one fails (task bugs);
- generate.py: a check's cases, frozen or generated (Hypothesis, derandomized) and cached
  on disk by the versions that made them; the expected outputs the reference computes;
- freeze_files.py: ``TASK/frozen/``, the format read (checked current) and written;
- call_limits.py: each call's time limit, from the reference's own time on the case.

Below grading (which runs the cases against a submission) and above task/ (the records
they are made from): nothing here imports a check kind; a CheckSpec's kind is asked.
"""

from grader.cases.call_limits import ReferenceTimes, derived_limit
from grader.cases.freeze_files import (
    FREEZE_FOLDER,
    Freeze,
    cases_entry,
    file_sha,
    freeze_present,
    frozen_cases,
    load_freeze,
    refreeze_command,
    remember_verified,
    value_entry,
    write_freeze,
)
from grader.cases.generate import (
    avoided_edges,
    case_set,
    expected_output,
    generated_by,
    reference_value,
    split_arguments,
    tried_cases,
)
from grader.cases.model import CaseSet, CasesFailed, ReferenceFailed

__all__ = [
    "FREEZE_FOLDER",
    "CaseSet",
    "CasesFailed",
    "Freeze",
    "ReferenceFailed",
    "ReferenceTimes",
    "avoided_edges",
    "case_set",
    "cases_entry",
    "derived_limit",
    "expected_output",
    "file_sha",
    "freeze_present",
    "frozen_cases",
    "generated_by",
    "load_freeze",
    "reference_value",
    "refreeze_command",
    "remember_verified",
    "split_arguments",
    "tried_cases",
    "value_entry",
    "write_freeze",
]
