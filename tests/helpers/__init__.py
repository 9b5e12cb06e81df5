"""Helpers the test tiers share, imported as ``helpers.<module>`` (tests/ is on the path)."""
