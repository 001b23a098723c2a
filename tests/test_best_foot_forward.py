"""Best foot forward: each metric's sweet spot across a product family (issue 18 §6)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from app.cli.main import main
from app.metrics.best_foot_forward import (FamilyPoint, FamilyRun, disclosure, sweet_spots,
                                           sweeps)
from app.station.sim_family import run_family


def _point(drives: int, rr: float, valid: bool = True) -> FamilyPoint:
    return FamilyPoint(f"run-{drives:04d}", drives, {"EP_RR": (rr, "IOPS/W", valid)})


def test_the_peak_inside_the_range_is_the_sweet_spot() -> None:
    """The seed's exercise 1.5 shape: a rise to 120 HDDs (13.03 IOPS/W), then a roll-off."""
    points = [_point(100, 12.6), _point(120, 13.03), _point(140, 12.9), _point(25, 6.0)]
    (spot,) = sweet_spots(points)
    assert (spot.setting, spot.value, spot.edge) == (120, 13.03, "")
    assert [s for s, _ in spot.curve] == [25, 100, 120, 140]
    text = disclosure("Array X", "drive_count", (spot,))
    assert "EP_RR peaks at 13.030 IOPS/W with drive count 120" in text
    assert "4 VALID configurations" in text and "roll-off" not in text


def test_an_invalid_figure_is_never_the_peak_and_a_tie_keeps_the_smaller_system() -> None:
    points = [_point(50, 9.0), _point(75, 9.0), _point(100, 30.0, valid=False),
              _point(125, math.nan)]
    (spot,) = sweet_spots(points)
    assert (spot.setting, spot.value) == (50, 9.0)
    assert [s for s, _ in spot.curve] == [50, 75]


def test_a_peak_at_either_end_of_the_sweep_is_named_as_not_established() -> None:
    rising = sweet_spots([_point(25, 1.0), _point(50, 2.0)])[0]
    falling = sweet_spots([_point(25, 2.0), _point(50, 1.0)])[0]
    alone = sweet_spots([_point(25, 2.0)])[0]
    assert (rising.edge, falling.edge, alone.edge) == ("largest", "smallest", "")
    assert "roll-off was not reached" in disclosure("X", "drive_count", (rising,))
    assert "peak may lie below it" in disclosure("X", "drive_count", (falling,))
    assert "not a sweep" in disclosure("X", "drive_count", (alone,))
    assert "no VALID metric" in disclosure("X", "drive_count", ())


def test_runs_are_compared_only_with_runs_of_the_same_other_settings() -> None:
    def run(drives: int, raid: str) -> FamilyRun:
        return FamilyRun(f"{raid}-{drives}", {"drive_count": drives, "drive_type": "HDD",
                                              "raid": raid},
                         {"EP_RR": (drives / 10, "IOPS/W", True)})

    groups = sweeps([run(25, "RAID 5"), run(50, "RAID 5"), run(25, "RAID 10")], "drive_count")
    assert sorted(groups) == ["drive type HDD, RAID level RAID 10",
                              "drive type HDD, RAID level RAID 5"]
    assert [p.setting for p in groups["drive type HDD, RAID level RAID 5"]] == [25, 50]
    by_raid = sweeps([run(25, "RAID 5"), run(25, "RAID 10")], "raid")
    assert [p.setting for p in by_raid["drive count 25, drive type HDD"]] == ["RAID 5", "RAID 10"]
    with pytest.raises(ValueError, match="range variable 'cache'"):
        sweeps([], "cache")


def test_a_simulated_family_gives_its_sweet_spots_from_the_command_line(tmp_path: Path,
                                                                         capsys) -> None:
    """Three real simulated runs (25, 50, 100 drives): random IO peaks at 50 drives, the
    controller caps sequential IO so SR peaks at 25, and EP_RI still rises at 100."""
    db = f"sqlite:///{tmp_path / 'family.db'}"
    run_family(db, drive_counts=(25, 50, 100))
    assert main(["family", "list", "--db", db]) == 0
    assert "3 runs  StorWatt Simulated array (online-3, method demo)" in capsys.readouterr().out
    assert main(["family", "sweet-spot", "--vendor", "StorWatt", "--model", "Simulated array",
                 "--db", db, "--json"]) == 0
    (sweep,) = json.loads(capsys.readouterr().out)["sweeps"]
    spots = {s["metric"]: s for s in sweep["sweet_spots"]}
    assert spots["EP_RR"]["setting"] == 50 and spots["EP_RR"]["edge"] == ""
    assert (spots["EP_SR"]["setting"], spots["EP_SR"]["edge"]) == (25, "smallest")
    assert (spots["EP_RI"]["setting"], spots["EP_RI"]["edge"]) == (100, "largest")
    assert "EP_MW1 peaks at" in sweep["disclosure"]
    assert main(["family", "sweet-spot", "--vendor", "Nobody", "--model", "X", "--db", db]) == 1
    assert "no COMPLETED runs of Nobody X" in capsys.readouterr().err


def test_the_history_s_best_foot_forward_tab_plots_each_metric_with_its_peak(tmp_path: Path,
                                                                             qtbot) -> None:
    from app.storage.opening import open_database
    from ui.history.view import HistoryView

    db = f"sqlite:///{tmp_path / 'family.db'}"
    run_family(db, drive_counts=(25, 50, 100), raid_levels=("RAID 5", "RAID 10"))
    database = open_database(db)
    view = HistoryView(database)
    qtbot.addWidget(view)
    bff = view.best_foot_forward()
    assert view.tabs.tabText(view.tabs.currentIndex()) == "Best foot forward"
    assert bff.sweep_choice.count() == 2  # RAID 5 and RAID 10 are two sweeps, never one
    assert len(bff.plots) == 7  # EP_RI and the six active metrics
    titles = [p.getPlotItem().titleLabel.text for p in bff.plots]
    assert any(t.startswith("EP_RR: peak") and "at 50" in t for t in titles), titles
    assert any("EP_RI" in t and "(still rising)" in t for t in titles), titles
    assert "EP_MW1 peaks at" in bff.text.toPlainText()
    bff.variable_choice.setCurrentIndex(bff.variable_choice.findData("raid"))
    assert bff.sweep_choice.count() == 3  # one RAID comparison per drive count
    rr = next(p for p in bff.plots if p.getPlotItem().titleLabel.text.startswith("EP_RR"))
    ticks = rr.getAxis("bottom")._tickLevels[0]
    assert [label for _, label in ticks] == ["RAID 10", "RAID 5"]
    database.close()


def test_an_unknown_range_variable_is_refused_with_the_choices(tmp_path: Path, capsys) -> None:
    db = f"sqlite:///{tmp_path / 'family.db'}"
    run_family(db, drive_counts=(25,))
    assert main(["family", "sweet-spot", "--vendor", "StorWatt", "--model", "Simulated array",
                 "--by", "cache", "--db", db]) == 1
    assert ("range variable 'cache': choose one of drive_count, drive_type, raid"
            in capsys.readouterr().err)
