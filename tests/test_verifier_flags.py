"""One reading-flag table and one gap rule, station and verifier alike (issue 37 items 1, 2).

The station stores every flag a driver or rule sets (``app.storage.codec.FLAG_CODES``) and
hashes it by its code; the verifier must know each one — its code, whether it keeps a sample
out of every average, whether the method's tolerance counts it — or an honest run fails in
the words of tampering (every PTDaemon run did: its driver sets ``frequency_not_measured`` on
every sample). The bundle carries the station's table (``flags.json``) and the verifier pins
its own; here every flag the station can store goes through a recorded run, its bundle and
the verifier, which must agree on every figure and verdict with the flagged samples treated
alike."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.records import PhaseKind
from app.reports.bundle import flag_table
from app.sequencer import events as ev
from app.storage.codec import FLAG_CODES
from app.storage.record_hash import FORMAT as RECORD_FORMAT
from app.storage.repository import load_run
from drivers import interfaces as di
from drivers.interfaces import PowerSample
from tests.support.bundles import bundle_of, read_files, tampered, verifier_module, verify
from tests.support.recorded_runs import DegradingMeter, record_run
from tests.support.run_generator import flag_edit

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "bundles"
#: a storwatt-bundle/1 of a smoke run, written by the station before issue 37 (no flags.json,
#: no sizes): bundles already handed out must still verify
OLD_BUNDLE = FIXTURES / "smoke-storwatt-bundle-1.zip"

Edit = Callable[[PowerSample], PowerSample]


class FlaggingMeter(DegradingMeter):
    """The simulated meter marking every third sample by ``edit`` while ``bad`` is set."""

    def __init__(self, inner, edit: Edit) -> None:
        super().__init__(inner)
        self.edit = edit
        self.count = 0

    def read(self, t: float) -> PowerSample:
        sample = self.inner.read(t)
        self.count += 1
        return self.edit(sample) if self.bad and self.count % 3 == 0 else sample


def recordflag_edit(folder: Path, edit: Edit, profile: str = "RW", method: str = "smoke"):
    """A smoke run whose ``profile`` phase reads samples marked by ``edit``; its bundle."""
    meters: list[FlaggingMeter] = []

    def hook(seq, event) -> None:
        if isinstance(event, ev.PhaseStarted):
            meters[0].bad = event.phase.profile == profile and event.phase.kind is PhaseKind.ACTIVE

    recorded = record_run(folder / "run.db", method=method, hook=hook,
                          meter=lambda inner: meters.append(FlaggingMeter(inner, edit))
                          or meters[0])
    return recorded, bundle_of(recorded.database, recorded.run_id, folder / "run.zip")


def test_every_flag_a_driver_names_has_a_stored_code() -> None:
    """The codec's table is the station's whole flag set: a ``FLAG_*`` a driver gains without
    a code would be stored by name and never reach the tables below."""
    named = {value for key, value in vars(di).items() if key.startswith("FLAG_")}
    assert named == set(FLAG_CODES)


def test_the_bundles_flag_table_is_the_one_the_verifier_pins() -> None:
    table = flag_table()
    assert table["record_format"] == RECORD_FORMAT
    carried = {f["name"]: (f["code"], f["excludes"], f["counted"]) for f in table["flags"]}
    assert carried == verifier_module().FLAG_TABLES[RECORD_FORMAT]


@pytest.mark.parametrize("flag", sorted(FLAG_CODES))
def test_each_flag_round_trips_and_verifies(flag: str, tmp_path: Path) -> None:
    """Each flag the station can store, on samples of one measured phase: the bundle carries
    it, and the verifier agrees on every figure (flagged samples excluded or kept alike), the
    samples and record hashes, and the phase's verdict (counted flags beyond the tolerance)."""
    recorded, bundle = recordflag_edit(tmp_path, flag_edit(flag))
    files = read_files(bundle)
    assert flag in files["power_samples.csv"].decode(), f"no sample carries {flag}"
    status, out = verify(bundle)
    assert status == 0, out
    run = load_run(recorded.database, recorded.run_id)
    metric = run.metric("EP_RW")
    counted = verifier_module().FLAG_TABLES[RECORD_FORMAT][flag][2]
    assert ("flagged power sample" in metric.reason) == counted, metric.reason


def test_a_flag_the_verifier_does_not_know_is_named(tmp_path: Path) -> None:
    """A newer station's flag (stored by name after "|") is named as unknown to this verifier,
    not left to surface as a samples-hash mismatch."""
    _, bundle = recordflag_edit(tmp_path, flag_edit("brownout"))
    status, out = verify(bundle)
    assert status == 1
    assert f"[ ] flag brownout is not known to this verifier ({RECORD_FORMAT})" in out, out


def test_a_carried_table_that_differs_is_named(tmp_path: Path) -> None:
    _, bundle = recordflag_edit(tmp_path, flag_edit(di.FLAG_STALE))

    def counted_not(data: bytes) -> bytes:
        table = json.loads(data)
        for row in table["flags"]:
            if row["name"] == di.FLAG_STALE:
                row["excludes"] = False
        return json.dumps(table, sort_keys=True, separators=(",", ":")).encode()

    forged = tampered(bundle, tmp_path / "forged.zip", {"flags.json": counted_not})
    status, out = verify(forged)
    assert status == 1 and "differ from this verifier's (storwatt-record/2) on stale" in out, out


def test_an_old_format_bundle_still_verifies() -> None:
    status, out = verify(OLD_BUNDLE)
    assert status == 0, out
    manifest = json.loads(read_files(OLD_BUNDLE)["manifest.json"])
    assert manifest["format"] == "storwatt-bundle/1" and "flags.json" not in manifest["files"]


def test_a_run_sampled_at_the_methods_5_s_period_verifies(tmp_path: Path) -> None:
    """Issue 37 item 2: the method allows a 5 s sample period with 5 s gaps at most; the
    sampler stamps each sample a few ms after its grid point under load. The station judges
    gaps on grid points, so the run is VALID, and the verifier must judge them the same way
    (it used raw times: 5.003 s > 5 s, "power-sample gap")."""
    method = tmp_path / "smoke-5s.toml"
    method.write_text('base = "smoke"\nname = "smoke-5s"\nversion = "test"\n'
                      'compliant = false\nsample_period_s = 5.0\ninterval_s = 10.0\n'
                      '\n[sampling]\nmeter_silence_limit_s = 60.0\n',
                      encoding="utf-8")

    recorded = record_run(tmp_path / "run.db", method=str(method), meter=LateMeter)
    run = load_run(recorded.database, recorded.run_id)
    assert all("power samples missing" not in m.reason for m in run.metrics), \
        [m.reason for m in run.metrics]
    status, out = verify(bundle_of(recorded.database, recorded.run_id, tmp_path / "5s.zip"))
    assert status == 0, out


class LateMeter(DegradingMeter):
    """The simulated meter whose every sample is stamped 3 ms after its grid point, as a
    sampler's are on a loaded station."""

    def read(self, t: float) -> PowerSample:
        sample = self.inner.read(t)
        return dataclasses.replace(sample, t=sample.t + 0.003)
