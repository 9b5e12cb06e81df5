"""Helpers the test folders share (imported as ``helpers.<module>``; tests/ is on sys.path)."""
