"""The smallest failing input, grading's own (the rest of the grader never imports it):
search.py re-runs a failed check under Hypothesis and keeps the smallest failure met;
lanes.py runs some of one file's shrinks in a second, forked lane (grader check);
tree.py is a class's shrinks of a check as a tree a submission walks by its own outcomes,
tree_store.py that tree on disk, shared by a batch's processes and runs. The lanes and the
tree are speed-ups (grading/speedups.py): off, the shrinks find the same inputs."""
