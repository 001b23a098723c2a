"""The differential fuzzer (issue 37): on every run the station can make, station and verifier
agree — on the verdict, on every criterion and on every figure to 1e-9 relative.

Each example is a generated run (``tests/support/run_generator.py``: methods and their stricter
and looser variants, meter set-ups, every reading flag, pauses, meter drops, a dying workload
engine, aborts, a dying station and its continuation, load hosts, sweeps, demand intensity) on
the fake clock; its bundle is verified in this process.

Tiers (docs/conformance.md, "Differential fuzzer"): a few in-process runs in ``make
test-fast``; ``FUZZ_RUNS`` runs over every set-up in ``make test`` (derandomized, the same runs
each time); the soak, ``make fuzz-soak`` (``STORWATT_FUZZ_RUNS=200``, a fresh seed unless
``STORWATT_FUZZ_SEED`` gives one), prints its seed with any disagreement.
"""

from __future__ import annotations

import os
import random

import pytest
from hypothesis import HealthCheck, Phase, currently_in_test_context, event, example, given, \
    seed, settings

from tests.support.run_generator import COMPLIANT_METHOD, LONGEST_PERIOD_NEEDS, METERS, METHODS, \
    Injection, Recorded, RunSpec, disagreements, happenings, record, run_specs

#: runs of the ``make test`` tier: ~0.5 s of CPU each (docs/conformance.md, "Differential fuzzer")
FUZZ_RUNS = 20
SOAK_RUNS = int(os.environ.get("STORWATT_FUZZ_RUNS", "0"))
SOAK_SEED = int(os.environ.get("STORWATT_FUZZ_SEED") or random.SystemRandom().getrandbits(32))
#: the in-process set-ups: no socket, no wire simulator (the fast tier's)
IN_PROCESS_METERS = tuple(name for name, (lab, _) in METERS.items() if lab == "sim-direct")


def _agree(spec: RunSpec, tmp_path_factory: pytest.TempPathFactory, seed_note: str) -> Recorded:
    recorded = record(spec, tmp_path_factory.mktemp("fuzz", numbered=True))
    if currently_in_test_context():  # the statistics of a generated run
        for what in sorted(happenings(recorded) | {f"meter {spec.meter}",
                                                   f"method {spec.method}"}):
            event(what)
    found = disagreements(recorded)
    assert not found, (f"station and verifier disagree ({seed_note}) on {spec!r}:\n"
                       + "\n".join(found))
    return recorded


WIRE = "the wire simulators answer the production drivers over loopback sockets"
#: one run per axis of the generator, each with what its record must show: an axis the
#: generator names but never reaches (a hook that no longer fires) fails here, not silently
AXES = [
    (RunSpec(pause_in=3), "a phase repeated"),
    (RunSpec(drop=(3, 3)), "meter dropped"),
    (RunSpec(engine_dies_in=3), "engine died"),
    (RunSpec(abort_in=3), "aborted"),
    (RunSpec(station_dies_in="SR"), "resumed"),
    (RunSpec(load_hosts=2), "load hosts"),
    (RunSpec(injections=(Injection("stale", None, 3),)), "flag stale"),
    pytest.param(RunSpec(meter="WT300", wire_fault=("hold", 4, 20)), "wire fault",
                 marks=[pytest.mark.slow, pytest.mark.realtime(WIRE)]),
    (RunSpec(variant=(("", "sample_period_s", 5.0), *((t, k, v) for (t, k), v in
                                                      LONGEST_PERIOD_NEEDS.items())),
             late_ms=3), "5 s period"),
    pytest.param(RunSpec(method=COMPLIANT_METHOD, calibrated_days_ago=30), "compliant",
                 marks=pytest.mark.slow),  # ~5 s of CPU: make test, not make test-fast
    (RunSpec(method="smoke", variant=(("stability", "tolerance_pct", 0.5),
                                      ("", "sample_period_s", 0.5)),
             injections=(Injection("implausible", 4, 2),)), "flag implausible"),
]


@pytest.mark.parametrize(("spec", "shown"), AXES,
                         ids=[getattr(a, "values", a)[1] for a in AXES])
def test_each_axis_is_reached_and_agrees(spec: RunSpec, shown: str, tmp_path_factory) -> None:
    recorded = _agree(spec, tmp_path_factory, "an axis's run")
    assert shown in happenings(recorded), sorted(happenings(recorded))


@settings(max_examples=4, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(spec=run_specs(meters=IN_PROCESS_METERS, methods=("smoke", "demo")))
def test_in_process_runs_agree(spec: RunSpec, tmp_path_factory) -> None:
    """The fast tier's share: a few in-process runs of the two cheapest methods."""
    _agree(spec, tmp_path_factory, "derandomized")


def _generated(test):
    """``make test``: FUZZ_RUNS derandomized runs; the soak: SOAK_RUNS from SOAK_SEED."""
    if SOAK_RUNS:
        # no shrinking or explaining: each costs many more runs of seconds (traced, the
        # explain phase outran the soak's timeout); the failing run's recipe and seed say all
        return seed(SOAK_SEED)(settings(max_examples=SOAK_RUNS, deadline=None, database=None,
                                        phases=(Phase.explicit, Phase.generate),
                                        suppress_health_check=list(HealthCheck))(test))
    return settings(max_examples=FUZZ_RUNS, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))(test)


@pytest.mark.slow  # FUZZ_RUNS runs, some on wire simulators: make test, not make test-fast
@pytest.mark.timeout(max(300, 30 * SOAK_RUNS))  # a wire drop waits out real reconnects
@pytest.mark.realtime(WIRE)
@_generated
@given(spec=run_specs(methods=(*METHODS, COMPLIANT_METHOD) if SOAK_RUNS else METHODS))
# issue 37's families the verifier once failed in the words of tampering: every PTDaemon run
# (its driver sets frequency_not_measured), a frozen meter's stale and implausible readings
@example(spec=RunSpec(meter="PTDaemon"))
@example(spec=RunSpec(meter="PTDaemon, 2 channels", wire_fault=("hold", 5, 20),
                      injections=(Injection("implausible", None, 4),)))
def test_generated_runs_agree(spec: RunSpec, tmp_path_factory) -> None:
    _agree(spec, tmp_path_factory,
           f"STORWATT_FUZZ_SEED={SOAK_SEED}" if SOAK_RUNS else "derandomized")
