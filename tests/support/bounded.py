"""Run a call that may hang for ever (a pipe, a device) on a daemon thread, bounded in time.

The bound is the test's patience (pass it through ``tests/support/time_budget.py``), so a
call that should end fails its test, naming ``what``, instead of hanging the suite.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _finished(call: Callable[[], T], what: str, seconds: float
              ) -> tuple[T | None, BaseException | None]:
    """``call``'s value and what it raised; AssertionError naming ``what`` if it did not
    finish within ``seconds`` (the thread is left behind, blocked)."""
    outcome: list[tuple[T | None, BaseException | None]] = []

    def attempt() -> None:
        try:
            outcome.append((call(), None))
        except BaseException as exc:  # noqa: BLE001 - the test inspects whatever it was
            outcome.append((None, exc))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise AssertionError(f"{what} did not finish within {seconds:.1f} s")
    return outcome[0]


def outcome_within(call: Callable[[], Any], what: str, seconds: float = 2.0
                   ) -> BaseException | None:
    """What ``call`` raised (None if it returned), within ``seconds``."""
    return _finished(call, what, seconds)[1]


def within(call: Callable[[], T], what: str, seconds: float) -> T:
    """What ``call`` returned within ``seconds`` (what it raised is raised here)."""
    value, error = _finished(call, what, seconds)
    if error is not None:
        raise error
    return value  # type: ignore[return-value]  # it returned: a T
