"""A stable, self-describing byte form of run events, for the run journal.

The journal must be readable by a later StorWatt after a crash, so events are written as
plain JSON that names every field: a dataclass is ``{"$": "PowerSample", "t": …}``, an enum
``{"$e": "RunStatus", "v": "COMPLETED"}``; tuples, frozensets and dicts with non-string keys
are tagged so they come back as the same types; NaN and ±inf are tagged as ``{"$f": "nan"}``
so the text is standard JSON. A field added later with a default still decodes old journals.
Only the types listed in :data:`TYPES` are accepted when decoding (nothing is executed).
"""

from __future__ import annotations

import dataclasses
import math
from enum import Enum
from typing import Any

from app.metrics.steady_state import SteadyStateVerdict
from app.core.records import (InstrumentConfig, IntervalRecord, MetricResult, PhaseInfo, PhaseKind,
                              PhaseStatus, Placement, PowerInput, PowerSupplies, RunConfig,
                              RunStatus, SutDescription, Window)
from app.sequencer import events as ev
from app.sequencer.power_inputs import InputIdentity
from app.sequencer.range_plan import PeakRecord, RangePlan, RangeSetting
from drivers.interfaces import (GeneratorCeiling, InstrumentIdentity, MeasuredPattern,
                                PowerSample, StreamPattern, TemperatureSample,
                                WorkloadInterval, WorkloadResult)

TYPES: dict[str, type] = {cls.__name__: cls for cls in (
    ev.RunStarted, ev.RunResumed, ev.Resumption, ev.InstrumentsIdentified, ev.PhaseStarted,
    ev.StabilisationExtended, ev.PhaseFinished, ev.SteadyStateJudged, SteadyStateVerdict,
    ev.PowerSamples, ev.TemperatureSamples, ev.WorkloadIntervals, ev.IntervalClosed,
    ev.HistogramReady, ev.SearchResult, ev.RangesApplied, ev.RangePlanReady, ev.MetricComputed,
    ev.LogMessage, ev.TeardownFailed, ev.RunFinished, RangePlan, RangeSetting, PeakRecord,
    RunConfig, SutDescription, InstrumentConfig, PhaseInfo, IntervalRecord, MetricResult,
    InstrumentIdentity, PowerSample, TemperatureSample, WorkloadInterval, WorkloadResult,
    Placement, RunStatus, PhaseKind, PhaseStatus, Window, PowerInput, InputIdentity,
    PowerSupplies, GeneratorCeiling, MeasuredPattern, StreamPattern)}


class EventCodecError(ValueError):
    """The bytes are not an event this StorWatt can rebuild (unknown type or field)."""


def event_to_json(event: ev.RunEvent) -> Any:
    """The event as JSON-ready values (``json.dumps(..., allow_nan=False)`` accepts them)."""
    return _encode(event)


def event_from_json(value: Any) -> ev.RunEvent:
    """Inverse of :func:`event_to_json` on the parsed JSON."""
    try:
        event = _decode(value)
    except (TypeError, KeyError, ValueError) as exc:
        raise EventCodecError(f"not a StorWatt run event: {exc!r}") from exc
    if not isinstance(event, ev.RunEvent):
        raise EventCodecError(f"not a StorWatt run event: {type(event).__name__}")
    return event


#: the field names of each journaled dataclass, looked up once (a SQLite file's journal gets
#: every committed event, so encoding is on the run writer's path: issue 25)
_FIELDS: dict[type, tuple[str, ...]] = {}
_PLAIN = (type(None), bool, int, str)


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        return value if math.isfinite(value) else {"$f": repr(value)}
    names = _FIELDS.get(kind)
    if names is not None:
        out = {"$": kind.__name__}
        for name in names:
            out[name] = _encode(getattr(value, name))
        return out
    if isinstance(value, Enum):
        return {"$e": type(value).__name__, "v": value.value}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$f": repr(value)}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if dataclasses.is_dataclass(value):
        if TYPES.get(kind.__name__) is not kind:
            raise EventCodecError(f"{type(value).__name__} is not journaled")
        _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(value))
        return _encode(value)
    if isinstance(value, tuple):
        return {"$t": [_encode(v) for v in value]}
    if isinstance(value, frozenset):
        return {"$s": sorted(_encode(v) for v in value)}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"$d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise EventCodecError(f"cannot journal a {type(value).__name__}")


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$" in value:
        cls = TYPES[value["$"]]
        return cls(**{k: _decode(v) for k, v in value.items() if k != "$"})
    if "$e" in value:
        return TYPES[value["$e"]](value["v"])
    if "$f" in value:
        return float(value["$f"])
    if "$t" in value:
        return tuple(_decode(v) for v in value["$t"])
    if "$s" in value:
        return frozenset(_decode(v) for v in value["$s"])
    if "$d" in value:
        return {_decode(k): _decode(v) for k, v in value["$d"]}
    raise EventCodecError(f"untagged object {sorted(value)[:3]}")
