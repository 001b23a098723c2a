"""Run a call that may hang for ever (a pipe, a device) on a daemon thread, bounded in time."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


def outcome_within(call: Callable[[], Any], what: str, seconds: float = 2.0
                   ) -> BaseException | None:
    """What ``call`` raised (None if it returned); AssertionError naming ``what`` if it did
    not finish within ``seconds`` (the thread is left behind, blocked)."""
    outcome: list[BaseException | None] = []

    def attempt() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as exc:  # noqa: BLE001 - the test inspects whatever it was
            outcome.append(exc)

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(seconds)
    if not outcome:
        raise AssertionError(f"{what} did not finish within {seconds} s")
    return outcome[0]
