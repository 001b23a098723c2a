"""COM savings (docs/method-notes.md §6): the seed's tables reproduce from its own figures,
one test per table column, and a stored run's figures feed the same computation."""

from __future__ import annotations

import math

import pytest

from app.metrics.com_savings import ComSavings, ConfigFigures, CostRates
from app.metrics.errors import MetricsError
from app.storage.repository import load_run

# seed green-grid-coms-poms.txt, "SNIA Emerald Program Specific COM Examples": 450 GB disks,
# power as (I)dle and (B)usy, IOPS of the 70/30 random workload; 2 enclosures fewer (CAPEX)
RAID1 = ConfigFigures("RAID 1", 36_000, 2360, 3134, 36_010, 160, 2)
RAID5_BASE = ConfigFigures("RAID 5 (3+1)", 54_000, 2360, 3134, 25_250, 160, 2)
#: (name, baseline, optimised, GB/W before/after, GB/W change %, IO/W before/after,
#:  IO/W change %, fewer drives, CAPEX $, less installed W, OPEX $/month,
#:  CAPEX and OPEX scaled to 10 kW)
SEED_ROWS = [
    ("Parity RAID", RAID1, ConfigFigures("RAID 5 (3+1)", 36_000, 1564, 2200, 17_040, 107, 0),
     (15.25, 23.02), 51, (11.49, 7.75), -33, 53, 34_500, 934, 497, 110_000, 1585),
    ("Compression", RAID1, ConfigFigures("Compressed 2:1", 36_000, 1464, 2030, 8_235, 80, 0),
     (15.25, 24.59), 61, (11.49, 4.06), -64, 80, 49_300, 1104, 587, 157_000, 1874),
    ("Thin provisioning", RAID5_BASE,
     ConfigFigures("Thin, 50 % written", 54_000, 1464, 2030, 12_560, 80, 0),
     (22.88, 36.88), 61, (8.06, 6.19), -23, 80, 49_300, 1104, 587, 157_000, 1874),
    ("TP + dedup", RAID5_BASE,
     ConfigFigures("TP + dedup 2:1", 54_000, 1016, 1478, 4_710, 40, 0),
     (22.88, 53.15), 132, (8.06, 3.19), -60, 120, 71_300, 1656, 881, 228_000, 2811),
]


@pytest.mark.parametrize("row", SEED_ROWS, ids=[r[0] for r in SEED_ROWS])
def test_seed_table_reproduces(row) -> None:
    (_, base, opt, gbw, gbw_change, iow, iow_change, drives, capex, watts, opex,
     capex_10kw, opex_10kw) = row
    s = ComSavings(base, opt)
    # the seed prints two decimals; some are truncated (54,000 / 1464 = 36.885 → "36.88")
    assert base.gb_per_w == pytest.approx(gbw[0], abs=0.006)
    assert opt.gb_per_w == pytest.approx(gbw[1], abs=0.006)
    assert base.io_per_w == pytest.approx(iow[0], abs=0.006)
    assert opt.io_per_w == pytest.approx(iow[1], abs=0.006)
    # its percentages are whole numbers; compression's IO/W is -64.7 % printed "(64%)"
    assert abs(s.gb_per_w_change_pct - gbw_change) < 1
    assert abs(s.io_per_w_change_pct - iow_change) < 1
    assert s.fewer_drives == drives
    assert s.capex_usd == pytest.approx(capex, rel=0.002)  # printed as $34.5K …
    assert s.installed_w_saved == watts
    assert s.opex_usd_per_month == pytest.approx(opex, abs=0.5)
    capex_scaled, opex_scaled = s.scaled(10)
    assert capex_scaled == pytest.approx(capex_10kw, rel=0.005)  # printed as $110K …
    assert opex_scaled == pytest.approx(opex_10kw, abs=1)
    assert s.scaled(100)[1] == pytest.approx(10 * opex_scaled)


def test_raid1_to_raid5_reads_as_the_seed_prints_it() -> None:
    rows = {t[0]: t[1:] for t in (r.texts() for r in ComSavings(RAID1, SEED_ROWS[0][2]).rows())}
    assert rows["Capacity per idle watt (GB/W)"] == ("15.25", "23.02", "+51 %")
    assert rows["IOs per active watt (IO/W)"] == ("11.49", "7.75", "-33 %")


def test_summary_table_savings() -> None:
    """The seed's "Summary of COM Benefits": capacity, idle / active power, IOPS ratio."""
    parity = ComSavings(RAID1, SEED_ROWS[0][2])
    assert round(parity.capacity_savings_pct) == 33
    assert (round(parity.idle_power_savings_pct), round(parity.active_power_savings_pct)) == \
        (34, 30)
    assert round(parity.iops_ratio, 2) == 0.47
    dedup = ComSavings(RAID5_BASE, SEED_ROWS[3][2])
    assert round(dedup.capacity_savings_pct) == 75 and round(dedup.idle_power_savings_pct) == 57


def test_the_opex_rate_is_editable() -> None:
    s = ComSavings(RAID1, SEED_ROWS[0][2], CostRates(opex_per_10kw_month_usd=10_000))
    assert s.opex_usd_per_month == pytest.approx(934)


@pytest.mark.parametrize("field, value", [("idle_w", 0), ("iops", math.nan),
                                          ("capacity_gb", -1), ("drives", 1.5)])
def test_bad_figures_are_refused_by_name(field: str, value) -> None:
    kwargs = dict(label="X", capacity_gb=1.0, idle_w=1.0, active_w=1.0, iops=1.0, drives=1)
    kwargs[field] = value
    with pytest.raises(MetricsError, match=f"X: {field} must be"):
        ConfigFigures(**kwargs)


def test_runs_savings_cli_from_two_stored_runs(tmp_path, capsys) -> None:
    """Baseline RAID 1 on 60 drives, optimised RAID 5 on 40: the CLI computes the table from
    the stored EP_RI and EP_MW1, writes the xlsx and PDF, and refuses an INVALID figure."""
    import json

    import openpyxl

    from app.cli.main import main
    from app.core.records import SutDescription
    from tests.support.recorded_runs import record_run
    db = tmp_path / "s.db"
    base = record_run(db, method="smoke", sut=SutDescription(drive_count=60, raid="RAID 1",
                                                             raw_capacity_bytes=8_760 * 10**9))
    opt = record_run(db, method="smoke", start=5000.0,
                     sut=SutDescription(drive_count=40, raid="RAID 5",
                                        raw_capacity_bytes=5_840 * 10**9))
    url = f"sqlite:///{db}"
    xlsx, pdf = tmp_path / "s.xlsx", tmp_path / "s.pdf"
    assert main(["runs", "savings", base.run_id, opt.run_id[:10], "--db", url, "--json",
                 "--opex-per-10kw", "6000", "--base-enclosures", "3", "--opt-enclosures", "2",
                 "--xlsx", str(xlsx), "--pdf", str(pdf)]) == 0
    data = json.loads(capsys.readouterr().out)
    stored = load_run(base.database, base.run_id)
    ri = next(m for m in stored.metrics if m.name == "EP_RI")
    assert data["baseline"]["capacity_gb"] == ri.ops_rate == 8760
    assert data["baseline"]["idle_w"] == ri.avg_power_w
    assert data["rates"]["opex_per_10kw_month_usd"] == 6000
    assert data["capex_usd"] == 20 * 549 + 1 * 2710
    assert data["opex_usd_per_month"] == pytest.approx(data["installed_w_saved"] * 0.6)
    sheet = openpyxl.load_workbook(xlsx)["COM savings"]
    cells = {row[0]: row[1:4] for row in sheet.iter_rows(values_only=True) if row[0]}
    assert cells["Drives"] == (60, 40, -20)
    assert cells["Capacity per idle watt (GB/W)"][0] == pytest.approx(8760 / ri.avg_power_w)
    assert pdf.read_bytes().startswith(b"%PDF")
    assert main(["runs", "savings", base.run_id, opt.run_id, "--db", url,
                 "--active-metric", "EP_SR"]) == 1
    assert "EP_SR is measured in MiB/s, not IOPS" in capsys.readouterr().err
