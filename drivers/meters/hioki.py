"""Hioki PW3335/PW3336 power meters over the LAN socket (CRLF), method-notes §8.

Replies are 10-character NR3 fields (``+230.05E+0``); ±999.99E+9 over-range, ±888.88E+9
scaling error, ±777.77E+9 no data. Accuracy (power, 45–66 Hz): ±(0.1 % rdg + 0.1 % rng).
"""

from __future__ import annotations

from drivers.meters.accuracy import AccuracySpec, uniform
from drivers.meters.commands import Control, Reading, in_list, on_off
from drivers.meters.power import PowerMeterBase
from drivers.meters.values import HIOKI


class PW3335(PowerMeterBase):
    """Freshness not checked: the manual at hand names no "new data" status for the
    reading query; the identical-readings rule (``drivers.meters.power``) still applies."""

    DRIVER = "pw3335"
    DESCRIPTION = "Hioki PW3335/PW3336/PW3337 power meter"
    MODELS = ("PW3335", "PW3336", "PW3337")
    VENDORS = ("HIOKI",)
    READ_TERMINATION = "\r\n"
    WRITE_TERMINATION = "\r\n"
    DEFAULT_PORT = 3300
    SETUP = (":HEAD OFF",)
    READING = Reading(":MEAS? U1,I1,P1,PF1,FREQU1", ("volts", "amps", "watts", "pf", "freq_hz"))
    SPECIALS = HIOKI
    ACCURACY = AccuracySpec((6.0, 15.0, 30.0, 60.0, 150.0, 300.0, 600.0, 1000.0),
                            uniform((0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5),
                                    0.001, 0.002)
                            + uniform((1.0, 2.0, 5.0, 10.0, 20.0), 0.001, 0.001))

    voltage_range = Control(":VOLT1:RANG {value:g}", ":VOLT1:RANG?", unit="V",
                            validator=in_list("volt_ranges", "V"))
    current_range = Control(":CURR1:RANG {value:g}", ":CURR1:RANG?", unit="A",
                            validator=in_list("amp_ranges", "A"))
    voltage_auto = Control(":VOLT1:AUTO {value}", validator=on_off)
    current_auto = Control(":CURR1:AUTO {value}", validator=on_off)
