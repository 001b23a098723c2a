"""Station health for the start page: where the database is, which instrument drivers are
installed, whether fio is on the PATH. Pure Python so it is tested without a display."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass


from sqlalchemy.engine import make_url

from app.core.station_settings import configured_name, lab_database, station_name
from app.storage.sender import SenderState, state_for
from app.storage.server_link import shown
from ui.wizard.connection import power_drivers, with_models


@dataclass(frozen=True)
class HealthItem:
    name: str
    ok: bool
    detail: str


def database_item(url: str, error: str = "", interrupted: int = 0) -> HealthItem:
    try:
        parsed = make_url(url)
        where = parsed.database if parsed.get_backend_name() == "sqlite" else \
            parsed.render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 — any unparsable URL is reported, not raised
        where = url
    if error:
        return HealthItem("Database", False, f"{where}: {error}")
    note = f"; {interrupted} interrupted run(s) found at start-up" if interrupted else ""
    return HealthItem("Database", True, f"{where}{note}")


def fio_item(which=shutil.which) -> HealthItem:
    path = which("fio")
    if not path:
        return HealthItem("fio", False, "not found on PATH: only the simulated lab and fio "
                          "load hosts can run")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return HealthItem("fio", False, f"{path} does not run: {exc}")
    return HealthItem("fio", True, f"{version or 'fio'} at {path}")


def instruments_item(last_meter: str = "") -> HealthItem:
    drivers = power_drivers()
    last = f"; last used: {last_meter}" if last_meter else ""
    if not drivers:
        return HealthItem("Instruments", True, "simulated meters only (no hardware drivers "
                          f"installed){last}")
    return HealthItem("Instruments", True, "power-meter drivers: "
                      f"{'; '.join(with_models(d) for d in drivers)}{last}")


def station_item() -> HealthItem:
    if configured_name():
        return HealthItem("Station", True, f"{configured_name()} (recorded in every run)")
    return HealthItem("Station", True, f"{station_name()} (the host name; name the station "
                      "with storwatt station name NAME)")


def lab_item(lab_url: str, state: SenderState) -> HealthItem:
    """Where the runs are copied for QA, and how the last attempt went."""
    if not lab_url:
        return HealthItem("Lab database", True, "none: runs stay on this station")
    where = shown(lab_url)
    last = f"last success {state.last_success or 'never'}"
    if state.last_error:
        return HealthItem("Lab database", False,
                          f"{where}: {state.events_behind} events behind; {last}; last error: "
                          f"{state.last_error} (the runs are safe on this station; storwatt "
                          "db sync)")
    return HealthItem("Lab database", True,
                      f"{where}: {state.events_behind} events behind; {last}")


def station_health(db_url: str, db_error: str = "", interrupted: int = 0,
                   last_meter: str = "") -> list[HealthItem]:

    lab = lab_database()  # the state of a sync to another lab database says nothing of it
    return [station_item(), database_item(db_url, db_error, interrupted),
            lab_item(lab, state_for(lab)), instruments_item(last_meter), fio_item()]
