# expect: fails builds-the-table
"""Prints the answer without building anything."""
print((5, 8))
