"""Helpers the test modules share (recorded runs, fio servers, GUI drivers, report readers).

A test module imports helpers from here, never from another ``test_*`` module; fixtures
built on them are in ``tests/conftest.py``."""
