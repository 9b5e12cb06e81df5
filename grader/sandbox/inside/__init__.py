"""What runs inside the sandbox: the worker, the fork server, and what they apply to
themselves before any student code runs.

These modules are run and imported *by path* in a ``python -I`` whose ``sys.path`` holds this
folder and the runtime only (bubblewrap binds this folder, and nothing else of the grader,
into its sandbox), so they import one another as top-level modules (``import wire``), never
the rest of the grader, and use nothing beyond the standard library, numpy and pyseccomp
(tests/unit/test_inside_imports.py holds them to it). The trusted side imports some of the
same files as ``grader.sandbox.inside.*`` (wire, shared, limits, scratch, landlock's ABI
probe, keyring, syscalls' availability): one copy of each.
"""
