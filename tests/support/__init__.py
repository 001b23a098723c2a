"""Helpers shared by several test modules (never imported from another ``test_*.py``)."""
