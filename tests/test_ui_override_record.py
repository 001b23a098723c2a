"""An override records what the connection test found (issue 41, seen 5: the review's
OVERRIDE line dropped the failure the technician chose to go past)."""

from __future__ import annotations

from ui.wizard.connection import ConnectionReport
from ui.wizard.instruments_page import InstrumentsPage


def test_the_override_keeps_the_failed_tests_words(qtbot) -> None:
    page = InstrumentsPage()
    qtbot.addWidget(page)
    page.meter_driver.setCurrentText("wt300")
    page.meter_resource.setText("TCPIP::10.0.0.7::10001::SOCKET")
    page.override.setChecked(True)
    assert page.verdict() == ("OVERRIDE: the operator continued without a passed connection "
                              "test (not tested with these settings)")
    page._show_reports(page.settings(),
                       ConnectionReport(False, "TCPIP::10.0.0.7::10001::SOCKET refused the "
                                               "connection"), ConnectionReport(True, "22.4 °C"))
    assert page.verdict() == (
        "OVERRIDE: the operator continued without a passed connection test (power meter "
        "FAILED: TCPIP::10.0.0.7::10001::SOCKET refused the connection; thermometer passed: "
        "22.4 °C)")
    page.meter_resource.setText("TCPIP::10.0.0.8::10001::SOCKET")  # another meter: not tested
    assert page.verdict().endswith("(not tested with these settings)")
