"""Records: the plain data every other part passes around.

Owns a grade's ``Result`` and ``CheckResult`` (result.py), the words at the seams, as
``Literal`` types (statuses.py), and a count in words (wording.py). Imports nothing of the
grader: every part may import it.
"""
