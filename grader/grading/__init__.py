"""Grading: one submission against one task, and everything a grade is made from.

Owns the check kinds (checks/: one module per kind, one registry line), the run of a grade
(grade.py), the cases and their freeze (cases.py, frozen.py, freezing.py), comparison and
pictures, the scoring policy, known mistakes and their diagnosis, call limits, kits, what a
student may see (redact.py). May import records/, student_text, submission/, sandbox/
(through ``grader.sandbox``) and task/.
"""
