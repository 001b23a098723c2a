"""Yokogawa WT300 family (WT310/WT310E/WT330/WT333E) and WT210 (488.2 mode), method-notes §8.

Ranging (method-notes §3): the WT300 reports its waveform peaks as numeric items U+pk/U−pk/
I+pk/I−pk (function symbols ``UPPeak``/``UMPeak``/``IPPeak``/``IMPeak``, set as items 6–9);
the WT210 driver reads none, so its ranges follow the rms rule alone.

Accuracy (45–66 Hz, power): WT300 ±(0.1 % of reading + 0.05 % of range), WT210 ±(0.1 % of
reading + 0.1 % of range); the 5–200 mA ranges of the WT310E are looser.
"""

from __future__ import annotations

from typing import Any, ClassVar

from drivers.interfaces import IdentityMismatch
from drivers.meters.accuracy import AccuracySpec, uniform
from drivers.meters.commands import Control, Reading, in_list, on_off
from drivers.meters.power import PowerMeterBase

WT300_VOLTS = (15.0, 30.0, 60.0, 150.0, 300.0, 600.0)
WT300_LOW_AMPS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
WT300_AMPS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
#: model codes a WT210/WT230 (or a WT300 in WT200 compatibility mode) reports in *IDN?
WT200_MODELS = ("WT210", "WT230", "760401", "760403", "760502", "760503")
WT300_ELEMENTS = {"WT310": 1, "WT310E": 1, "WT310EH": 1, "WT330": 3, "WT332E": 2, "WT333E": 3}


class WT300(PowerMeterBase):
    DRIVER = "wt300"
    DESCRIPTION = "Yokogawa WT300 family (WT310/WT310E/WT330/WT333E), WT300 command set"
    MODELS = tuple(WT300_ELEMENTS)
    VENDORS = ("YOKOGAWA",)
    DEFAULT_PORT = 10001  # the WT300's Ethernet socket port (no VXI-11)
    OPTIONS: ClassVar[dict[str, type]] = {"element": int}
    SETUP = ("*CLS", ":STAT:QMES ON", ":COMM:HEAD OFF", ":NUM:FORM ASCII", ":NUM:NORM:NUM 5",
             ":NUM:NORM:ITEM1 U,{element}", ":NUM:NORM:ITEM2 I,{element}",
             ":NUM:NORM:ITEM3 P,{element}", ":NUM:NORM:ITEM4 LAMB,{element}",
             ":NUM:NORM:ITEM5 FU,{element}", ":NUM:NORM:ITEM6 UPP,{element}",
             ":NUM:NORM:ITEM7 UMP,{element}", ":NUM:NORM:ITEM8 IPP,{element}",
             ":NUM:NORM:ITEM9 IMP,{element}", ":INP:CFAC 3", ":STAT:ERR?")
    READING = Reading(":NUM:NORM:VAL?", ("volts", "amps", "watts", "pf", "freq_hz"))
    #: items 6–9 (U+pk, U−pk, I+pk, I−pk) one by one: ``:NUM:NORM:VAL? <item>`` answers one
    #: item, and ``:NUM:NORM:NUM 5`` keeps them out of the reading the testing pass polls
    PEAKS = tuple(Reading(f":NUM:NORM:VAL? {item}", (field,)) for item, field in
                  ((6, "v_peak+"), (7, "v_peak-"), (8, "a_peak+"), (9, "a_peak-")))
    ACCURACY = AccuracySpec(WT300_VOLTS, uniform(WT300_LOW_AMPS, 0.001, 0.001)
                            + uniform(WT300_AMPS, 0.001, 0.0005))

    voltage_range = Control(":INP:VOLT:RANG {value:g}", ":INP:VOLT:RANG?", unit="V",
                            validator=in_list("volt_ranges", "V"))
    current_range = Control(":INP:CURR:RANG {value:g}", ":INP:CURR:RANG?", unit="A",
                            validator=in_list("amp_ranges", "A"))
    voltage_auto = Control(":INP:VOLT:AUTO {value}", validator=on_off)
    current_auto = Control(":INP:CURR:AUTO {value}", validator=on_off)

    def command_fields(self) -> dict[str, Any]:
        return {"element": self.options.get("element", 1)}

    def _check_model(self, reply: str, vendor: str, model: str) -> None:
        if model.upper() in WT200_MODELS:
            raise IdentityMismatch(
                f"{self.resource} answered *IDN? with {reply.strip()!r} (WT200 command set): "
                "if this is a WT310/WT330, switch the meter out of WT200 compatibility mode "
                "(in its communication settings) and reconnect; if it "
                "really is a WT210/WT230, use --driver wt210")
        super()._check_model(reply, vendor, model)
        element = self.command_fields()["element"]
        if not 1 <= element <= WT300_ELEMENTS[model.upper()]:
            raise IdentityMismatch(f"{model} has elements 1…{WT300_ELEMENTS[model.upper()]}; "
                                   f"element={element} does not exist")


class WT210(PowerMeterBase):
    DRIVER = "wt210"
    DESCRIPTION = "Yokogawa WT210/WT230 in IEEE 488.2 mode"
    MODELS = WT200_MODELS
    VENDORS = ("YOKOGAWA",)
    SETUP = ("*CLS", ":COMM:HEAD OFF", ":MEAS:ITEM:V ON", ":MEAS:ITEM:A ON", ":MEAS:ITEM:W ON",
             ":MEAS:ITEM:PF ON", ":MEAS:ITEM:VHZ ON", ":CONF:CFAC 3", ":STAT:ERR?")
    READING = Reading(":MEAS:VAL?", ("volts", "amps", "watts", "pf", "freq_hz"))
    ACCURACY = AccuracySpec(WT300_VOLTS, uniform(WT300_AMPS, 0.001, 0.001))

    voltage_range = Control(":CONF:VOLT:RANG {value:g}V", ":CONF:VOLT:RANG?", unit="V",
                            validator=in_list("volt_ranges", "V"))
    current_range = Control(":CONF:CURR:RANG {value:g}A", ":CONF:CURR:RANG?", unit="A",
                            validator=in_list("amp_ranges", "A"))
    voltage_auto = Control(":CONF:VOLT:AUTO {value}", validator=on_off)
    current_auto = Control(":CONF:CURR:AUTO {value}", validator=on_off)
