"""The review page is the whole configuration (issue 28): supply, ASHRAE class, notes and each
power input with its meter, element, wiring and calibration — and no stale address for a meter
switched to the simulator."""

from __future__ import annotations

from dataclasses import replace

from app.core.records import InstrumentConfig, PowerInput, RunConfig, SutDescription
from ui.wizard.review_page import summary_text

INPUTS = (PowerInput("psu-a", "wt310", "TCPIP0::192.0.2.5::inst0::INSTR",
                     calibration_date="2026-06-01"),
          PowerInput("shelf-3p", "wt333e", "TCPIP0::192.0.2.7::inst0::INSTR", element=2,
                     wiring="3P4W"))


def test_the_summary_names_supply_class_notes_and_every_power_input() -> None:
    sut = replace(SutDescription(), supply="1P-100-127", ashrae_class="A3",
                  notes="Rack B4 <dual controllers>")
    config = RunConfig(method="smoke", lab="local-fio", sut=sut, power_inputs=INPUTS,
                       temperature_meter=InstrumentConfig("none"))
    text = summary_text(config, compliant=False)
    assert "<b>Supply:</b> 1P-100-127" in text and "<b>ASHRAE class:</b> A3" in text
    assert "Rack B4 &lt;dual controllers&gt;" in text  # escaped, never markup
    assert "Power inputs (2, summed)" in text
    assert "psu-a: wt310 TCPIP0::192.0.2.5::inst0::INSTR, 1P2W (calibrated 2026-06-01)" in text
    assert "shelf-3p: wt333e TCPIP0::192.0.2.7::inst0::INSTR, element 2, 3P4W" in text
    assert "<b>Power meter:</b>" not in text  # the inputs replace the single meter


def test_a_meter_switched_to_the_simulator_shows_no_stale_address() -> None:
    config = RunConfig(method="smoke", power_meter=InstrumentConfig(
        "sim", "TCPIP0::192.0.2.5::inst0::INSTR", calibration_date="2026-06-01"))
    text = summary_text(config, compliant=False)
    assert "TCPIP0" not in text and "sim (simulated) (calibrated 2026-06-01)" in text
