"""The station's instruments as the lab last described them: each instrument's calibration date
and certificate, kept by driver and address in the data folder (``station-instruments.json``).

A meter is calibrated once a year and used for hundreds of runs; asking for its date on every
run invites a stale or mistyped one. The station remembers what a started run declared for
each real instrument (``remember``) and offers it to the next run that names the same driver
and address (``fill``), which says so; a date the lab types always wins. The stored dates are
checked by the same rule as a typed one (``app.core.calibration``), so a file edited by hand cannot
put a date in the future on a report.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from app.core.calibration import checked_certificate, checked_date
from app.core.paths import data_dir
from app.core.records import InstrumentConfig, PowerInput, RunConfig
from drivers import guarded_file

FILE_NAME = "station-instruments.json"
#: drivers that are no instrument of the station (the simulated lab's, no thermometer)
NOT_INSTRUMENTS = ("sim", "none")
#: a few hundred bytes per instrument: far beyond any station's instruments
MAX_PROFILE_BYTES = 1 << 20


class StationProfileError(ValueError):
    """The station profile file cannot be read or written (the message names it)."""


@dataclass(frozen=True)
class KnownInstrument:
    calibration_date: str
    certificate: str = ""


def instrument_key(driver: str, resource: str) -> str:
    return f"{driver} {resource.strip()}"


class StationProfile:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / FILE_NAME

    def load(self) -> dict[str, KnownInstrument]:
        if not self.path.exists():
            return {}
        try:
            raw = json.loads(guarded_file.read_text(self.path, "station profile",
                                                    MAX_PROFILE_BYTES))
            return {key: KnownInstrument(checked_date(v["calibration_date"], key),
                                         checked_certificate(v.get("certificate", ""), key))
                    for key, v in raw.items()}
        except guarded_file.GuardedFileError as exc:
            raise StationProfileError(f"{exc}; fix or move the file away") from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StationProfileError(f"{self.path}: the station's instrument profile cannot be "
                                      f"read ({exc}); fix or move the file away") from None

    def known(self, driver: str, resource: str) -> KnownInstrument | None:
        if driver in NOT_INSTRUMENTS:
            return None
        return self.load().get(instrument_key(driver, resource))

    def fill(self, config: RunConfig) -> tuple[RunConfig, list[str]]:
        """``config`` with each real instrument's empty calibration taken from the profile,
        and one line per date taken (what the operator is told)."""
        known = self.load()
        notes: list[str] = []

        def filled(role: str, item):
            entry = known.get(instrument_key(item.driver, item.resource))
            if item.driver in NOT_INSTRUMENTS or entry is None or item.calibration_date:
                return item
            notes.append(f"{role} {item.driver} at {item.resource}: calibrated "
                         f"{entry.calibration_date}"
                         + (f" (certificate {entry.certificate})" if entry.certificate else "")
                         + " — from the station profile")
            return replace(item, calibration_date=entry.calibration_date,
                           certificate=item.certificate or entry.certificate)

        config = replace(
            config, power_meter=filled("power meter", config.power_meter),
            temperature_meter=filled("thermometer", config.temperature_meter),
            power_inputs=tuple(filled(f"power input {i.name}", i) for i in config.power_inputs))
        return config, notes

    def remember(self, config: RunConfig) -> None:
        """Keep each real instrument's declared calibration (a run was started with it)."""
        items: list[InstrumentConfig | PowerInput] = [config.temperature_meter,
                                                      *config.power_inputs]
        if not config.power_inputs:
            items.append(config.power_meter)
        new = {instrument_key(i.driver, i.resource): {"calibration_date": i.calibration_date,
                                                      "certificate": i.certificate}
               for i in items if i.driver not in NOT_INSTRUMENTS and i.calibration_date}
        if not new:
            return
        data = {k: {"calibration_date": v.calibration_date, "certificate": v.certificate}
                for k, v in self.load().items()}
        data.update(new)
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise StationProfileError(f"{self.path}: cannot save the station's instrument "
                                      f"profile ({exc})") from None
