"""Yokogawa WT300 family (WT310/WT310E/WT330/WT333E) and WT210 (488.2 mode), method-notes §8.

Ranging (method-notes §3): the WT300 reports its waveform peaks as numeric items U+pk/U−pk/
I+pk/I−pk (function symbols ``UPPeak``/``UMPeak``/``IPPeak``/``IMPeak``, set as items 6–9);
the WT210 driver reads none, so its ranges follow the rms rule alone.

Accuracy (45–66 Hz, power): WT300 ±(0.1 % of reading + 0.05 % of range), WT210 ±(0.1 % of
reading + 0.1 % of range); the 5–200 mA ranges of the WT310E are looser.

A multi-element WT300 (WT332E/WT333E) reads either one element (``element=N``, wiring 1P2W) or
the Σ values of a three-phase wiring (``wiring=3P3W|3P4W``): the driver sets the meter's wiring
with ``:INP:WIR P3W3|P3W4`` and asks for ``U,SIGMA`` … ``FU,SIGMA`` (the WT300E element
argument is 1…3 or SIGMA). The Σ power's range term counts every element it sums.

Freshness: the WT300 driver asks the extended event register before every reading
(``:STAT:EESR?``; bit 0, UPD, is set when the measured data has been updated, and reading the
register clears it; method-notes §8). With the transition filter on the falling edge
(``:STAT:FILT1 FALL``, set up once) the bit means "an update completed since the last
reading". Clear, the driver asks again every :data:`UPDATE_POLL_S` for up to
:data:`UPDATE_WAIT_S` (two readings close together, as at a phase boundary, just wait for the
next update); still clear, the meter is not updating (HOLD, a stopped integration) and the
reading is flagged stale. The WT210 driver:
freshness not checked (its manual's status registers were not at hand), so only the
identical-readings rule (``drivers.meters.power``) can find a frozen WT210.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from drivers.interfaces import FLAG_GARBAGE, IdentityMismatch, InstrumentError
from drivers.meters.accuracy import AccuracySpec, uniform
from drivers.meters.commands import Control, Reading, in_list, on_off
from drivers.meters.power import PHASE_FACTOR, PowerMeterBase

#: how long a reading waits for the meter's next update, and how often it asks: the WT300's
#: update interval is 100 ms to 20 s (250 ms as shipped); a station sampling every second with
#: an update interval of 500 ms or less never waits longer than one interval
UPDATE_WAIT_S = 0.5
UPDATE_POLL_S = 0.05
WT300_VOLTS = (15.0, 30.0, 60.0, 150.0, 300.0, 600.0)
WT300_LOW_AMPS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2)
WT300_AMPS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0)
#: model codes a WT210/WT230 (or a WT300 in WT200 compatibility mode) reports in *IDN?
WT200_MODELS = ("WT210", "WT230", "760401", "760403", "760502", "760503")
WT300_ELEMENTS = {"WT310": 1, "WT310E": 1, "WT310EH": 1, "WT330": 3, "WT332E": 2, "WT333E": 3}
#: wiring as a run configuration names it → (the WT300 :INPut:WIRing code, elements Σ sums)
WIRINGS = {"1P2W": ("P1W2", 1), "3P3W": ("P3W3", 2), "3P4W": ("P3W4", 3)}


def wiring(value: object) -> str:
    """A wiring name (``1P2W``, ``3P3W``, ``3P4W``), case-insensitive."""
    name = str(value).strip().upper()
    if name not in WIRINGS:
        raise InstrumentError(f"wiring {value!r} is not known; choose one of "
                              f"{', '.join(WIRINGS)}")
    return name


class WT300(PowerMeterBase):
    DRIVER = "wt300"
    DESCRIPTION = "Yokogawa WT300 family (WT310/WT310E/WT330/WT333E), WT300 command set"
    MODELS = tuple(WT300_ELEMENTS)
    VENDORS = ("YOKOGAWA",)
    DEFAULT_PORT = 10001  # the WT300's Ethernet socket port (no VXI-11)
    OPTIONS: ClassVar[dict[str, type]] = {"element": int, "wiring": wiring}  # type: ignore[dict-item]  # a converter
    SETUP = ("*CLS", ":STAT:QMES ON", ":COMM:HEAD OFF", ":NUM:FORM ASCII", ":NUM:NORM:NUM 5",
             ":NUM:NORM:ITEM1 U,{element}", ":NUM:NORM:ITEM2 I,{element}",
             ":NUM:NORM:ITEM3 P,{element}", ":NUM:NORM:ITEM4 LAMB,{element}",
             ":NUM:NORM:ITEM5 FU,{element}", ":NUM:NORM:ITEM6 UPP,{peak_element}",
             ":NUM:NORM:ITEM7 UMP,{peak_element}", ":NUM:NORM:ITEM8 IPP,{peak_element}",
             ":NUM:NORM:ITEM9 IMP,{peak_element}", ":INP:CFAC 3", ":STAT:FILT1 FALL",
             ":STAT:ERR?")
    #: the extended event register, and its bit that says the data was updated (UPD)
    EESR_QUERY = ":STAT:EESR?"
    EESR_UPDATE = 0x01
    READING = Reading(":NUM:NORM:VAL?", ("volts", "amps", "watts", "pf", "freq_hz"))
    #: items 6–9 (U+pk, U−pk, I+pk, I−pk) one by one: ``:NUM:NORM:VAL? <item>`` answers one
    #: item, and ``:NUM:NORM:NUM 5`` keeps them out of the reading the testing pass polls
    PEAKS = tuple(Reading(f":NUM:NORM:VAL? {item}", (field,)) for item, field in
                  ((6, "v_peak+"), (7, "v_peak-"), (8, "a_peak+"), (9, "a_peak-")))
    #: crest factor 3 as SETUP sends it; below 0.2 A readings are reported unreliable
    #: (method-notes §10), so the formula is trusted from 0.2 A to the top range
    ACCURACY = AccuracySpec(WT300_VOLTS, uniform(WT300_LOW_AMPS, 0.001, 0.001)
                            + uniform(WT300_AMPS, 0.001, 0.0005), crest_factor=3.0,
                            valid_amps=(0.2, WT300_AMPS[-1]))

    voltage_range = Control(":INP:VOLT:RANG {value:g}", ":INP:VOLT:RANG?", unit="V",
                            validator=in_list("volt_ranges", "V"))
    current_range = Control(":INP:CURR:RANG {value:g}", ":INP:CURR:RANG?", unit="A",
                            validator=in_list("amp_ranges", "A"))
    voltage_auto = Control(":INP:VOLT:AUTO {value}", validator=on_off)
    current_auto = Control(":INP:CURR:AUTO {value}", validator=on_off)

    def __init__(self, resource: str, **options: Any) -> None:
        super().__init__(resource, **options)
        if self.three_phase and "element" in self.options:
            raise InstrumentError(f"wiring {self.options['wiring']} reads the Σ values of the "
                                  "elements it wires; leave out element (or use wiring=1P2W "
                                  "to read one element)")

    @property
    def three_phase(self) -> bool:
        return WIRINGS[self.options.get("wiring", "1P2W")][1] > 1

    def command_fields(self) -> dict[str, Any]:
        """A three-phase wiring reads Σ values but element 1's peaks: peaks belong to one
        element's waveform (no Σ peak is used here), and every element of the wiring is on the
        same range, so a balanced load's element 1 stands for all of them."""
        element = self.options.get("element", 1)
        return {"element": "SIGMA" if self.three_phase else element,
                "peak_element": 1 if self.three_phase else element}

    def _configure(self) -> None:
        if "wiring" in self.options:  # an explicit wiring is set on the meter, before the items
            self._write(f":INP:WIR {WIRINGS[self.options['wiring']][0]}")
        super()._configure()

    def _fresh(self) -> bool | str:
        """Bit 0 of the extended event register (read-and-clear): an update since the last
        reading, waited for up to :data:`UPDATE_WAIT_S`. A reply that is no register value
        (NR1) makes the sample unreadable."""
        give_up = time.monotonic() + UPDATE_WAIT_S
        while True:
            reply = self._query(self.EESR_QUERY).strip()
            if not (reply.isascii() and reply.isdigit()):
                return FLAG_GARBAGE
            if int(reply) & self.EESR_UPDATE:
                return True
            if time.monotonic() >= give_up or self.waits.sleep(UPDATE_POLL_S):
                return False

    def _phase_factor(self) -> float:
        """The Σ values of a WT300 are per-phase volts and amps with the summed power."""
        return PHASE_FACTOR[self.options.get("wiring", "1P2W")]

    def _uncertainty_pct(self, watts: float, range_v: float | None,
                         range_a: float | None) -> float | None:
        elements = WIRINGS[self.options.get("wiring", "1P2W")][1]
        return self.ACCURACY.power_uncertainty_pct(watts, range_v, range_a, elements)

    def _check_model(self, reply: str, vendor: str, model: str) -> None:
        if model.upper() in WT200_MODELS:
            raise IdentityMismatch(
                f"{self.resource} answered *IDN? with {reply.strip()!r} (WT200 command set): "
                "if this is a WT310/WT330, switch the meter out of WT200 compatibility mode "
                "(in its communication settings) and reconnect; if it "
                "really is a WT210/WT230, use --driver wt210")
        super()._check_model(reply, vendor, model)
        elements = WT300_ELEMENTS[model.upper()]
        name = self.options.get("wiring", "1P2W")
        if WIRINGS[name][1] > elements:
            raise IdentityMismatch(f"{model} has {elements} element(s); wiring {name} needs "
                                   f"{WIRINGS[name][1]}: check the address or the wiring")
        element = self.command_fields()["element"]
        if element != "SIGMA" and not 1 <= element <= elements:
            raise IdentityMismatch(f"{model} has elements 1…{WT300_ELEMENTS[model.upper()]}; "
                                   f"element={element} does not exist")


class WT210(PowerMeterBase):
    """WT210/WT230: freshness not checked (see the module docstring)."""

    DRIVER = "wt210"
    DESCRIPTION = "Yokogawa WT210/WT230 in IEEE 488.2 mode"
    MODELS = WT200_MODELS
    VENDORS = ("YOKOGAWA",)
    SETUP = ("*CLS", ":COMM:HEAD OFF", ":MEAS:ITEM:V ON", ":MEAS:ITEM:A ON", ":MEAS:ITEM:W ON",
             ":MEAS:ITEM:PF ON", ":MEAS:ITEM:VHZ ON", ":CONF:CFAC 3", ":STAT:ERR?")
    READING = Reading(":MEAS:VAL?", ("volts", "amps", "watts", "pf", "freq_hz"))
    ACCURACY = AccuracySpec(WT300_VOLTS, uniform(WT300_AMPS, 0.001, 0.001), crest_factor=3.0)

    voltage_range = Control(":CONF:VOLT:RANG {value:g}V", ":CONF:VOLT:RANG?", unit="V",
                            validator=in_list("volt_ranges", "V"))
    current_range = Control(":CONF:CURR:RANG {value:g}A", ":CONF:CURR:RANG?", unit="A",
                            validator=in_list("amp_ranges", "A"))
    voltage_auto = Control(":CONF:VOLT:AUTO {value}", validator=on_off)
    current_auto = Control(":CONF:CURR:AUTO {value}", validator=on_off)
