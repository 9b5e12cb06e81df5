# expect: fails runs, builds-the-table
"""Prints the right length from a typed-in list, then crashes before building anything."""
print(len([0.0, 1.0, 0.0, 1.0]))
encoding = build_table(6, 4)  # noqa: F821 (never defined)
