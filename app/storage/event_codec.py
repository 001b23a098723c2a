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
from collections.abc import Callable
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


#: each type's encoder, chosen once (a SQLite file's journal gets every committed event, so
#: encoding is on the run writer's path: issue 25); a type nothing encodes is never cached
_ENCODERS: dict[type, Callable[[Any], Any]] = {}
_PLAIN = frozenset((type(None), bool, int, str))


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    encoder = _ENCODERS.get(kind)
    if encoder is None:
        encoder = _ENCODERS[kind] = _encoder_for(kind)
    return encoder(value)


def _encoder_for(kind: type) -> Callable[[Any], Any]:
    """How values of ``kind`` are written (the order matters: an enum may also be an int)."""
    if issubclass(kind, Enum):
        return lambda value: {"$e": type(value).__name__, "v": value.value}
    if issubclass(kind, float):
        return _float
    if issubclass(kind, (bool, int, str)):
        return lambda value: value
    if dataclasses.is_dataclass(kind):
        if TYPES.get(kind.__name__) is not kind:
            raise EventCodecError(f"{kind.__name__} is not journaled")
        return _fields_encoder(kind)
    if issubclass(kind, tuple):
        return lambda value: {"$t": [_encode(v) for v in value]}
    if issubclass(kind, frozenset):
        return lambda value: {"$s": sorted(_encode(v) for v in value)}
    if issubclass(kind, list):
        return lambda value: [_encode(v) for v in value]
    if issubclass(kind, dict):
        return lambda value: {"$d": [[_encode(k), _encode(v)] for k, v in value.items()]}
    raise EventCodecError(f"cannot journal a {kind.__name__}")


def _float(value: float) -> Any:
    return value if math.isfinite(value) else {"$f": repr(value)}


def _fields_encoder(kind: type) -> Callable[[Any], Any]:
    """A dataclass as ``{"$": name, field: …}``; the plain leaves (most fields) are written
    inline, as a call each was half the encoding's time."""
    name, names = kind.__name__, tuple(f.name for f in dataclasses.fields(kind))

    def encode(value: Any) -> dict[str, Any]:
        out = {"$": name}
        for field in names:
            item = getattr(value, field)
            leaf = type(item)
            if leaf in _PLAIN or (leaf is float and math.isfinite(item)):
                out[field] = item
            else:
                out[field] = _encode(item)
        return out
    return encode


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
