"""What ran is judged: a profile run at a share of another's measured rate (MW2 at 25 % of
MW1's IOPS) is INVALID when the rate it achieved leaves the tolerance of its target, and the
verifier applies the same rule (issue 38, seen 2; docs/method-notes.md §2, "What ran is
judged").

Before, an engine that delivered half of MW2's asked rate (a load host that does not hold its
cap) gave MW2 at 12.5 % of MW1 and ``EP_MW2 VALID``; the verifier ticked the line that said so.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.method.model import DERIVED_RATE_TOLERANCE_PCT
from app.sequencer.conformance import derived_rate_problem
from drivers.interfaces import WorkloadProfile
from tests.support.bundles import bundle_of, tampered, verify
from tests.support.recorded_runs import record_run
from tests.support.sequencer_runs import make_run
from app.storage.repository import load_run


class ShortRateEngine:
    """A load generator that does not hold its cap: a capped active workload (MW2) runs at
    ``factor`` of the rate asked; everything else as the simulated engine it wraps."""

    def __init__(self, inner: object, factor: float = 0.5) -> None:
        self.inner, self.factor = inner, factor

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def start(self, profile: WorkloadProfile) -> None:
        if profile.rate_iops is not None and profile.kind == "active":
            profile = replace(profile, rate_iops=tuple(  # type: ignore[arg-type]  # two ints
                max(1, round(r * self.factor)) if r else 0 for r in profile.rate_iops))
        self.inner.start(profile)  # type: ignore[attr-defined]  # the wrapped engine's


@pytest.mark.parametrize(("achieved", "bad"), [(1000.0, False), (1050.0, False),
                                               (950.0, False), (1050.5, True), (949.4, True),
                                               (500.0, True)])
def test_the_rule_at_its_tolerance_and_one_step_either_side(achieved: float, bad: bool) -> None:
    why = derived_rate_problem("MW2", achieved, "MW1", 4000.0, 25.0, 5.0)
    assert (why is not None) is bad, why
    if bad:
        assert f"achieved rate {achieved:.1f}" in why and "MW1's 4000.0" in why
        assert "outside ± 5 % of its target 1000" in why
        assert "search.derived_rate_tolerance_pct" in why


def test_a_reference_without_io_leaves_nothing_to_judge_against() -> None:
    why = derived_rate_problem("MW2", 10.0, "MW1", 0.0, 25.0, 5.0)
    assert why is not None and "MW1 measured no IO" in why


def test_mw2_at_half_its_asked_rate_is_invalid_naming_both_rates() -> None:
    seq, rec, _clock = make_run("demo")
    seq.lab = replace(seq.lab, engine=ShortRateEngine(seq.lab.engine))
    seq.run()
    mw1, mw2 = rec.metric("EP_MW1"), rec.metric("EP_MW2")
    assert mw2.ops_rate == pytest.approx(mw1.ops_rate * 0.125, rel=0.05)
    assert not mw2.valid
    assert f"achieved rate {mw2.ops_rate:.1f}" in mw2.reason
    assert f"MW1's {mw1.ops_rate:.1f}" in mw2.reason
    assert f"± {DERIVED_RATE_TOLERANCE_PCT:g} %" in mw2.reason


def test_mw2_that_holds_its_rate_stays_valid() -> None:
    seq, rec, _clock = make_run("demo")
    seq.run()
    mw1, mw2 = rec.metric("EP_MW1"), rec.metric("EP_MW2")
    assert mw2.valid, mw2.reason
    assert mw2.ops_rate == pytest.approx(mw1.ops_rate * 0.25, rel=DERIVED_RATE_TOLERANCE_PCT / 100)


@pytest.fixture(scope="module")
def short_rate_bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("derived")
    recorded = record_run(folder / "run.db", engine=ShortRateEngine)
    assert not load_run(recorded.database, recorded.run_id).metric("EP_MW2").valid
    return bundle_of(recorded.database, recorded.run_id, folder / "short.zip")


def test_the_verifier_agrees_with_an_invalid_mw2(short_rate_bundle: Path) -> None:
    status, out = verify(short_rate_bundle)
    line = next(x for x in out.splitlines() if re.match(r"^\[.\] MW2 rate ", x))
    assert line.startswith("[x]") and "OUTSIDE ± 5 %" in line and "station INVALID, naming" \
        in line, out


def test_the_verifier_fails_an_mw2_called_valid_outside_its_tolerance(
        short_rate_bundle: Path, tmp_path: Path) -> None:
    """The old station's bundle: MW2 at 12.5 % of MW1 and VALID."""
    def called_valid(data: bytes) -> bytes:
        items = [json.loads(x) for x in data.decode().splitlines()]
        for m in items:
            if m["name"] == "EP_MW2":
                m["valid"], m["reason"] = True, ""
        return b"".join(json.dumps(m, sort_keys=True, separators=(",", ":")).encode() + b"\n"
                        for m in items)
    status, out = verify(tampered(short_rate_bundle, tmp_path / "t.zip",
                                  {"metrics.jsonl": called_valid}))
    assert status == 1
    assert re.search(r"^\[ \] MW2 rate \S+ = 12\.\d+ % of MW1's .*OUTSIDE ± 5 % \(station "
                     r"VALID\)", out, re.M), out
