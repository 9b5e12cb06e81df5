"""Reading hand-ins: a submission's bytes, read once and never trusted.

Owns the file as read (file.py: size caps, no links, no special files), the hand-in formats
(formats.py: the registry every caller asks for suffixes and readers; a format is one module,
python_file.py for a .py file, notebook.py for a notebook as one module with the map back to
its cells, source_map.py, and one line there), the numbers a source types
in (source_numbers.py) and the bounded child that reads untrusted bytes (bounded.py). May import
records/ and student_text; never the sandbox, a task or a grade.
"""
