"""Where the project's own files are: the checkout, the bundled task and its samples, the
example course (the students' side) and the instructor's full tasks."""

import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PE_TASK = os.path.join(ROOT, "tasks", "positional-encoding")
PE_SAMPLES = os.path.join(ROOT, "submissions", "positional-encoding")
COURSE = os.path.join(ROOT, "examples", "course")  # the students' side
INSTRUCTOR_TASKS = os.path.join(ROOT, "examples", "course-instructor", "tasks")  # the full tasks
