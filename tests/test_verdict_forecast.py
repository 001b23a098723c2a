"""The verdict forecast (issue 28): before Start, the review page, the start confirmation and
the run view say what the record's verdict will be as far as the set-up decides it — local
fio with the simulated meter on the compliant method is SIMULATED — NON-COMPLIANT there, not
"This compliant run takes about 20 h"."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from app.method.loader import load_method
from app.core.records import InstrumentConfig, RunConfig, SutDescription
from app.station.forecast import forecast, forecast_text

NOW = datetime(2026, 11, 26, 12, tzinfo=timezone.utc)
REAL_METER = InstrumentConfig("wt310", "TCPIP0::192.0.2.5::inst0::INSTR",
                              calibration_date="2026-06-01")
REAL_THERMO = InstrumentConfig("pt100-scpi", "TCPIP0::192.0.2.6::5025::SOCKET",
                               calibration_date="2026-05-01")


#: the attributes that derive Online 3, as the wizard and `storwatt run` record them
ONLINE_3 = {"connectivity": "network", "max_drive_count": 24, "consumer_component": False,
            "integrated_controller": True, "storage_protection": True, "no_spof": False,
            "non_disruptive_service": False, "fba_ckd": False, "robotics": False}


def local_fio(tmp_path: Path, **changes) -> RunConfig:
    # 24 drives, as its maximum configuration answers (more would be refused, issue 28)
    sut = SutDescription(vendor="Acme", model="A9", serial="1", drive_count=24,
                         targets=(str(tmp_path / "t"),))
    return replace(RunConfig(method="emerald-block-v3", lab="local-fio", sut=sut,
                             taxonomy="online-3", target_size="1G",
                             classification_answers=ONLINE_3), **changes)


def test_real_io_on_the_simulated_meter_is_forecast_simulated_non_compliant(tmp_path) -> None:
    verdict = forecast(local_fio(tmp_path), load_method("emerald-block-v3"), NOW)
    assert not verdict.compliant and verdict.simulated
    names = {c.name for c in verdict.failures}
    assert names == {"Real instruments", "Calibration"}  # the method's numbers are met
    text = forecast_text(verdict)
    assert text.startswith("FORECAST") and "SIMULATED — NON-COMPLIANT" in text


def test_real_calibrated_instruments_on_real_io_are_forecast_compliant(tmp_path) -> None:
    config = local_fio(tmp_path, power_meter=REAL_METER, temperature_meter=REAL_THERMO)
    verdict = forecast(config, load_method("emerald-block-v3"), NOW)
    assert verdict.compliant, verdict.summary()
    assert "if the run completes without a pause" in forecast_text(verdict)
    stale = replace(config, power_meter=replace(REAL_METER, calibration_date="2024-01-01"))
    late = forecast(stale, load_method("emerald-block-v3"), NOW)
    assert [c.name for c in late.failures] == ["Calibration"]


def test_the_short_method_is_forecast_non_compliant_on_its_numbers() -> None:
    verdict = forecast(RunConfig(method="smoke", lab="sim"), load_method("smoke"), NOW)
    assert "interval length" in verdict.short() and verdict.simulated
    from app.station.forecast import forecast_evidence

    # the review page lists what the set-up decides; the numbers are said beside the method
    listed = [line.split(":")[0] for line in forecast_evidence(verdict, load_method("smoke"))]
    assert listed == ["Real instruments", "Calibration", "Classification"]  # no answers given
    assert "Interval length" in [line.split(":")[0] for line in forecast_evidence(verdict)]


def test_the_review_page_and_the_confirmation_show_the_forecast(qtbot, tmp_path) -> None:
    pytest.importorskip("pytestqt")
    from app.station.run_entries import entries_from_config
    from ui.wizard.wizard import NewRunWizard

    asked: list[str] = []
    wizard = NewRunWizard(entries=entries_from_config(local_fio(tmp_path)),
                          simulated_lab="local-fio",
                          confirm=lambda _p, _t, text: asked.append(text) or False)
    qtbot.addWidget(wizard)
    page = wizard.review_page
    page.initializePage()
    assert page.compliant  # the method's numbers: the confirmation is asked
    assert "FORECAST" in page.forecast.text()
    assert "SIMULATED — NON-COMPLIANT" in page.forecast.text()
    assert "Real instruments" in page.forecast.text()
    page.operator.setText("J. Tech")
    page.validatePage()
    assert asked and "SIMULATED — NON-COMPLIANT" in asked[0]
    assert "compliant run takes" not in asked[0]


def test_the_run_view_shows_the_forecast_during_the_run(qtbot, tmp_path) -> None:
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QSettings

    from app.method.record import resolved_method
    from app.storage.synthetic import run_started
    from ui.run.view import RunView

    view = RunView(settings=QSettings(str(tmp_path / "ui.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(view)
    started = run_started(0.0)
    started = replace(started, config=local_fio(tmp_path),
                      method_json=resolved_method(load_method("emerald-block-v3")))
    view.ingest([started])
    assert view.banner.isVisibleTo(view)
    assert view.banner.text().startswith("FORECAST")
    assert "SIMULATED — NON-COMPLIANT" in view.banner.text()
    assert "Calibration" in view.banner.toolTip()


def test_a_calibration_that_expires_before_the_planned_end_is_forecast_not_met(tmp_path) -> None:
    """Issue 38, seen 4: a calibration judged on the start date alone stayed MET although it
    expired during the run (ready idle, EP_RI, comes last). The forecast judges it at the
    planned end, so the review page says it before Start; one day earlier it is MET."""
    method = load_method("emerald-block-v3")
    config = local_fio(tmp_path, power_meter=REAL_METER, temperature_meter=REAL_THERMO)
    oldest = datetime(2026, 5, 1, 22, tzinfo=timezone.utc)  # the thermometer's calibration
    start = oldest.replace(year=2027)  # 365 days on, at 22:00: MET on the start date alone
    late = forecast(config, method, start)
    evidence = {c.name: c.evidence for c in late.failures}
    assert list(evidence) == ["Calibration"], evidence
    assert evidence["Calibration"] == ("thermometer calibrated 2026-05-01, 366 days before "
                                       "the run's end (2027-05-02) > 365 days")
    early = forecast(config, method, start - method_length(method))  # ends on day 365
    assert early.compliant, early.summary()


def method_length(method) -> timedelta:
    """How long the method's run is planned to take (its phases, as the forecast plans them)."""
    from app.sequencer.plan import build_phases
    return timedelta(seconds=sum(p.planned_s for p in build_phases(method, RunConfig())))
