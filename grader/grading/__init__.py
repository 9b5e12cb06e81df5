"""TODO part docstring."""
