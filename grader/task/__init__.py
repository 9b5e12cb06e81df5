"""The task as the instructor wrote it: records and the trusted code that serves them.

Owns the ``Task``/``CheckSpec`` records (spec.py), the reference solution's loading
(reference.py), the argument strategies and Hypothesis driver, edges, tolerances, index
expressions, the frameworks a task may allow, how a failing input is shown (case_size.py,
rebuild.py) and the samples' declared verdicts; a check kind's contract (check_kind.py) and
reading a task.yaml given the kinds (task_yaml.py: the kinds themselves are grading's). May
import records/, student_text, submission/ and the sandbox's facade (``grader.sandbox``: the
``Limits`` record, the wire format).
"""
