"""Helpers the test folders share, imported as ``helpers.<module>`` (tests/ is on sys.path:
tests/conftest.py says how). Test files import these, never conftest, which holds only
pytest's hooks and fixtures (tests/unit/test_test_layout.py checks both).

paths              ROOT and the project's files: PE_TASK, PE_SAMPLES, COURSE, INSTRUCTOR_TASKS
cli                run_cli (``python -m grader`` as a user runs it), no_process_with
tasks              tasks and submissions made for a test (make_task, write, SQUARE_REFERENCE,
                   WRONG_NORMALIZE, course_with_full_tasks) and scores read from a task
                   (score_without, as_cell, IGNORES_BASE_LOSES)
tiers              the sandbox tiers the suites run under: the tier names, tier_works, tiers(),
                   warm_tiers(), Mode and modes() (conftest's ``tier`` parameters),
                   runtime_mount_points_in_tmp
containers         Gradescope's container simulated: simulated_container (conftest's
                   ``container`` fixtures) and in_container, which runs a command under...
container_sim      ...this script (run by path, never imported: SIMULATOR): root with
                   Docker's seccomp profile, cgroups read-only or not, Landlock or not
built              the grader as it ships: its sdist and fresh (non-editable) installs
student_repos      real git repositories as students push them (git's plumbing)
workflow_commands  GitHub Actions' workflow commands and an example workflow's run steps
inside_modules     the sandbox's inside modules imported as the worker imports them
plotting           notebooks and scripts that plot: a task allowing matplotlib, a grade per mode
chromium           a headless Chromium over the DevTools pipe (tests/browser)
live_server        ``grader serve`` as a real process on loopback (tests/service, tests/browser),
                   and the request helpers (client, sign_in, upload, graded, rows, healthy, raw)
fake_sandbox       a stand-in Sandbox (the functions run in process, scripted timeouts and
                   crashes) and a Context built as run.py builds it: the check kinds' unit tests
in_process         ``grader serve``'s app built as the CLI builds it, in this process, through
                   Starlette's TestClient (tests/service: the routes' answers)
"""
