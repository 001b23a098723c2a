"""Storage of a run's power inputs: who read each one and each one's readings.

A run with several power inputs (``app.sequencer.power_inputs``) stores its total in
``power_samples`` as every run does, and here, beside it, the evidence the total was summed
from: one ``power_inputs`` row per input (its meter and accuracy formula) and one
``power_input_samples`` row per input and instant. The read side gives each input as a
:class:`StoredPowerInput` for the report's per-input plot and formula table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

import numpy as np
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.sequencer.power_inputs import InputIdentity
from app.storage import schema as s
from app.storage.codec import decode_flags, encode_flags, opt_float
from drivers.interfaces import InstrumentIdentity, PowerSample

_READINGS = ("t", "watts", "volts", "amps", "range_v", "range_a", "uncertainty_pct")


@dataclass(frozen=True)
class StoredPowerInput:
    """One power input of a stored run: its meter, formula and readings (sorted by time)."""

    name: str
    identity: InstrumentIdentity
    element: int | None
    wiring: str
    accuracy: str
    t: np.ndarray  # the input's own read time, run-relative s
    watts: np.ndarray
    volts: np.ndarray
    amps: np.ndarray
    range_v: np.ndarray
    range_a: np.ndarray
    uncertainty_pct: np.ndarray
    flags: tuple[frozenset[str], ...]


def identity_rows(pk: int, inputs: Sequence[InputIdentity]) -> list[dict[str, Any]]:
    return [{"run_id": pk, "position": position, "name": i.name, "element": i.element,
             "wiring": i.wiring, "accuracy": i.accuracy, "vendor": i.identity.vendor,
             "model": i.identity.model, "serial": i.identity.serial,
             "firmware": i.identity.firmware, "resource": i.identity.resource,
             "driver": i.identity.driver, "calibration_date": i.identity.calibration_date}
            for position, i in enumerate(inputs)]


def replace_identities(conn: Connection, pk: int, inputs: Sequence[InputIdentity]) -> None:
    """Store who reads each input (a repeated identification replaces the earlier one)."""
    table = s.PowerInputRow.__table__
    conn.execute(table.delete().where(table.c.run_id == pk))
    if inputs:
        conn.execute(table.insert(), identity_rows(pk, inputs))


def sample_rows(pk: int, totals: Iterable[PowerSample]) -> list[dict[str, Any]]:
    """One row per input reading of each total."""
    return [{"run_id": pk, "input": p.input, "t_total": total.t, "t": p.t,
             "watts": opt_float(p.watts), "volts": opt_float(p.volts),
             "amps": opt_float(p.amps), "pf": opt_float(p.pf), "freq": opt_float(p.freq_hz),
             "range_v": opt_float(p.range_v), "range_a": opt_float(p.range_a),
             "uncertainty_pct": opt_float(p.uncertainty_pct), "flags": encode_flags(p.flags)}
            for total in totals for p in total.inputs]


def load_power_inputs(conn: Connection, pk: int) -> tuple[StoredPowerInput, ...]:
    """The run's inputs in their configured order (empty for a run with one meter)."""
    inputs = conn.execute(sa.select(s.PowerInputRow.__table__)
                          .where(s.PowerInputRow.run_id == pk)
                          .order_by(s.PowerInputRow.position)).all()
    table = s.PowerInputSampleRow.__table__
    rows = conn.execute(sa.select(table.c.input, table.c.flags, *(table.c[n] for n in _READINGS))
                        .where(table.c.run_id == pk).order_by(table.c.t, table.c.id)).all()
    # whole columns at once (None → NaN): per-cell look-ups were half of a 24 h report (issue 27)
    numbers = np.array([r[2:] for r in rows], dtype=np.float64).reshape(len(rows),
                                                                        len(_READINGS))
    names = np.array([r[0] for r in rows], dtype=object)
    decoded = {code: decode_flags(code) for code in {r[1] for r in rows}}  # a few distinct
    flags = [decoded[r[1]] for r in rows]
    stored = []
    for i in inputs:
        mine = names == i.name
        stored.append(_stored(i, numbers[mine], tuple(compress(flags, mine))))
    return tuple(stored)


def _stored(i: Any, numbers: np.ndarray, flags: tuple[frozenset[str], ...]) -> StoredPowerInput:
    columns = {n: np.ascontiguousarray(numbers[:, k]) for k, n in enumerate(_READINGS)}
    identity = InstrumentIdentity(i.vendor, i.model, i.serial, i.firmware, i.resource, i.driver,
                                  i.calibration_date)
    return StoredPowerInput(i.name, identity, i.element, i.wiring, i.accuracy,
                            flags=flags, **columns)
