"""QA's run history: find, inspect, compare and audit stored runs (issue 8)."""
