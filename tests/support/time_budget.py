"""One time budget for every wait in the suite, scaled to how busy the machine is.

A test's limits — pytest-timeout, a qtbot ``waitSignal``/``waitUntil``, a child process's
``timeout=``, a polling deadline, the packaging build, the real-time ceiling — were numbers
chosen on a quiet machine. On the same machine at load 11–15 a fresh clone's ``make test``
failed 11 tests on those numbers alone (issue 36): the station was right, the patience was
short. So every such number is written as its quiet-machine value and passed through
:func:`budget_s` / :func:`budget_ms`, which multiply it by one factor per test run:

* ``STORWATT_TEST_TIME_SCALE`` if the user set it (a positive number: ``3`` on a machine known
  to be busy, ``1`` to keep the quiet-machine limits exactly);
* else measured once, by the first process that asks (the pytest controller, before its
  xdist workers start): a fixed CPU loop's wall time against :data:`REFERENCE_LOOP_S`, what
  it takes on the project's quiet 2-core machine, never below 1. The result is put in the
  environment, so workers and the child processes they start use the same factor.

Only *patience* is scaled — how long a test waits for something that will happen. A limit
the station itself applies and the test exercises (a meter's ``timeout_s``, SQLite's busy
timeout, the writer's ``close(timeout=...)``) is the behaviour under test and stays as it is.
``tests/test_suite_clock_rules.py`` fails a waiting call given a literal timeout.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable

ENV = "STORWATT_TEST_TIME_SCALE"
#: wall seconds of :func:`reference_loop` on the project's 2-core machine with nothing else
#: running (the CPU seconds it took there, 0.126–0.155 s over 15 runs: the fastest kept)
REFERENCE_LOOP_S = 0.13
#: how often the loop is timed; the median is kept (one descheduling does not decide)
ROUNDS = 3


def reference_loop() -> None:
    """A fixed amount of pure-Python work: what the suite mostly does with a CPU."""
    total = 0
    for i in range(2_000_000):
        total += i * i % 7


def least_cpu_s(call: Callable[[], object], rounds: int = 3) -> float:
    """The fewest CPU seconds (this process, all its threads) ``call`` took in ``rounds``
    tries. A test compares it with another measured in the same test — a reference loop
    (:func:`reference_loop`), or the same work at another size (an order of growth) — never
    with a number of seconds: CPU time is what a loaded machine stretches least, and what it
    still stretches (caches, frequency) it stretches for both."""
    spent = []
    for _ in range(rounds):
        start = time.process_time()
        call()
        spent.append(time.process_time() - start)
    return min(spent)


def measure_scale() -> float:
    """How much longer than on the quiet reference machine the loop takes here, now (≥ 1)."""
    walls = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        reference_loop()
        walls.append(time.perf_counter() - start)
    return max(1.0, statistics.median(walls) / REFERENCE_LOOP_S)


def scale() -> float:
    """This run's factor: the user's, else the one measured by the first process that asked
    (then handed to every later process through the environment)."""
    given = os.environ.get(ENV, "").strip()
    if given:
        try:
            value = float(given)
        except ValueError:
            raise ValueError(f"{ENV}={given!r} is not a number (e.g. {ENV}=3)") from None
        if not value > 0 or value == float("inf"):
            raise ValueError(f"{ENV}={given!r} must be a positive, finite number")
        return value
    measured = measure_scale()
    os.environ[ENV] = f"{measured:.2f}"
    return float(os.environ[ENV])


def budget_s(quiet_s: float) -> float:
    """Seconds to wait for something that takes well under ``quiet_s`` on a quiet machine."""
    return quiet_s * scale()


def budget_ms(quiet_ms: float) -> int:
    """:func:`budget_s` in whole milliseconds, as qtbot's waits take them."""
    return round(quiet_ms * scale())
