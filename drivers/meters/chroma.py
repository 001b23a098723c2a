"""Chroma 66202/66203/66204 digital power meters (method-notes §8).

Set-up: ``SYST:TRAN:SEP 0`` (comma) and ``SYST:TRAN:TERM 0`` (LF); reading ``MEAS? V,I,W,PF,
FREQ`` (``FETC?`` on old firmware: option ``fetch=True``) → NR2 fields. In-band markers of the
66203/04: -1 first integration not done, -2 range change, -3 invalid (OVR/OCR/OCP).
Accuracy (power, 45–66 Hz): ±(0.1 % of reading + 0.1 % of range).
"""

from __future__ import annotations

from typing import ClassVar

from drivers.meters.accuracy import AccuracySpec, uniform
from drivers.meters.commands import Control, Reading, in_list, on_off
from drivers.meters.power import PowerMeterBase
from drivers.meters.values import CHROMA


class Chroma66200(PowerMeterBase):
    """Freshness not checked: the manual at hand names no "new data" status for the
    reading query; the identical-readings rule (``drivers.meters.power``) still applies."""

    DRIVER = "chroma66200"
    DESCRIPTION = "Chroma 66202/66203/66204 digital power meter"
    MODELS = ("66202", "66203", "66204")
    VENDORS = ("CHROMA",)
    DEFAULT_PORT = 2101
    OPTIONS: ClassVar[dict[str, type]] = {"fetch": bool}
    SETUP = ("SYST:TRAN:SEP 0", "SYST:TRAN:TERM 0")
    READING = Reading("MEAS? V,I,W,PF,FREQ", ("volts", "amps", "watts", "pf", "freq_hz"))
    FETCH_READING = Reading("FETC? V,I,W,PF,FREQ", READING.fields)
    #: the 66203/66204 manual's MEASure? items VPK+, VPK-, IPK+, IPK- (method-notes §8)
    PEAKS = (Reading("MEAS? VPK+,VPK-,IPK+,IPK-",
                     ("v_peak+", "v_peak-", "a_peak+", "a_peak-")),)
    SPECIALS = CHROMA
    ACCURACY = AccuracySpec((150.0, 300.0, 500.0),
                            uniform((0.01, 0.04, 0.2, 2.0, 8.0, 20.0), 0.001, 0.001))

    voltage_range = Control("CONF:VOLT:RANG {value:g}", "CONF:VOLT:RANG?", unit="V",
                            validator=in_list("volt_ranges", "V"))
    current_range = Control("CONF:CURR:RANG {value:g}", "CONF:CURR:RANG?", unit="A",
                            validator=in_list("amp_ranges", "A"))
    voltage_auto = Control("CONF:VOLT:AUTO {value}", validator=on_off)
    current_auto = Control("CONF:CURR:AUTO {value}", validator=on_off)

    def _reading(self) -> Reading:
        return self.FETCH_READING if self.options.get("fetch") else self.READING
