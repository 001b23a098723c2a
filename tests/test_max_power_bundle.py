"""The bundle carries the maximum power by each window and the verifier derives it again from
the raw samples (issue 42; method-notes §10); a bundle of the layout before it still verifies."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from tests.support.bundles import bundle_of, read_files, tampered, verify
from tests.support.recorded_runs import record_run


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("max_power")
    recorded = record_run(folder / "run.db", method="smoke")
    return bundle_of(recorded.database, recorded.run_id, folder / "run.zip")


def test_the_bundle_s_maximum_power_verifies(bundle) -> None:
    status, out = verify(bundle)
    assert status == 0, out
    assert "[x] maximum power of the SUT's input: highest 1 s window average" in out
    stored = json.loads(read_files(bundle)["max_power.json"])["sut_input"]
    assert stored["window"]["where"] == "overall" and stored["readings_per_window"] >= 1
    assert json.loads(read_files(bundle)["manifest.json"])["format"] == "storwatt-bundle/2"


@pytest.mark.parametrize("figure", ["window", "phase_average", "single"])
def test_a_maximum_off_by_a_milliwatt_fails(bundle, tmp_path, figure: str) -> None:
    def nudge(data: bytes) -> bytes:
        doc = json.loads(data)
        doc["sut_input"][figure]["watts"] += 0.001
        return json.dumps(doc).encode()
    status, out = verify(tampered(bundle, tmp_path / "t.zip", {"max_power.json": nudge}))
    assert status == 1, out
    assert "[ ] maximum power of the SUT's input" in out


def test_a_storwatt_bundle_1_still_verifies(bundle, tmp_path) -> None:
    """A bundle written before issues 37 and 42: format storwatt-bundle/1, so no flag table
    and no max_power.json."""
    files = read_files(bundle)
    manifest = json.loads(files["manifest.json"])
    manifest["format"] = "storwatt-bundle/1"
    for added in ("max_power.json", "flags.json"):
        del files[added]
        del manifest["files"][added]
    files["manifest.json"] = json.dumps(manifest).encode()
    old = tmp_path / "old.zip"
    with zipfile.ZipFile(old, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    status, out = verify(old)
    assert status == 0, out
    assert "not checked: maximum power by its window (a storwatt-bundle/1 bundle" in out
