"""Reading hand-ins: a submission's bytes, read once and never trusted.

Owns the file as read (file.py: size caps, no links, no special files), the notebook as one
module with the map back to its cells (notebook.py, source_map.py), the numbers a source types
in (source_numbers.py) and the bounded child that reads untrusted bytes (bounded.py). May import
records/ and student_text; never the sandbox, a task or a grade.
"""
