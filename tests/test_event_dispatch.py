"""Every consumer of the run's events decides every event type, through one typed dispatch
(issue 31: "event consumers use three dispatch styles, two find handlers by class name, and
apply.py skips an event with no handler silently").

The event types come from ``app/sequencer/events.py`` itself (its ``RunEvent`` union, checked
against the module's dataclasses); the consumers are found in the source (every module of
``app/`` and ``ui/`` that builds an :class:`EventTable`), so neither list is kept by hand.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import logging
import re
from pathlib import Path

import pytest

from app.sequencer import events as ev
from app.sequencer.event_dispatch import (EVENT_TYPES, TABLES, EventTable, EventTableError)
from app.storage.event_codec import TYPES as JOURNALED

ROOT = Path(__file__).resolve().parents[1]


def _consumer_modules() -> list[str]:
    """Modules of app/ and ui/ whose source builds an EventTable."""
    found = []
    for path in sorted([*ROOT.glob("app/**/*.py"), *ROOT.glob("ui/**/*.py")]):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Call) and getattr(node.func, "id", "") == "EventTable"
               for node in ast.walk(tree)):
            found.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def test_the_event_types_are_the_union_and_every_event_class_is_in_it() -> None:
    classes = {c for c in vars(ev).values()
               if isinstance(c, type) and c.__module__ == ev.__name__
               and dataclasses.is_dataclass(c)}
    assert EVENT_TYPES <= classes
    fields = " ".join(str(f.type) for kind in EVENT_TYPES for f in dataclasses.fields(kind))
    for kind in classes - EVENT_TYPES:  # a payload of an event (Resumption), not an event
        assert re.search(rf"\b{kind.__name__}\b", fields), (
            f"{kind.__name__} is defined in events.py but is neither in RunEvent nor carried "
            "by an event: add it to the union")
    assert all(dataclasses.fields(k) and k.__dataclass_params__.frozen for k in EVENT_TYPES)


def test_every_consumer_decides_every_event_type() -> None:
    modules = _consumer_modules()
    assert {"app.cli.console", "app.storage.apply", "ui.run.view", "ui.plots.live"} <= set(modules)
    for module in modules:
        importlib.import_module(module)
    tables = [t for t in TABLES if t.event_types is EVENT_TYPES]
    assert len({t.consumer for t in tables}) >= len(modules)
    undecided = {t.consumer: sorted(k.__name__ for k in t.undecided) for t in tables
                 if t.undecided}
    assert not undecided, f"consumers without a decision (handle or ignore): {undecided}"


def test_no_handler_is_found_by_its_class_name() -> None:
    for path in [*ROOT.glob("app/**/*.py"), *ROOT.glob("ui/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"getattr\([^)]*f\"_on_\{type\(", text), path


def test_what_storage_keeps_is_journaled_and_what_it_drops_never_reaches_the_journal() -> None:
    from app.storage.apply import STORAGE

    kept = {k for k in EVENT_TYPES if STORAGE.handles(k)}
    assert kept | {k for k in EVENT_TYPES if STORAGE.ignores(k)} == EVENT_TYPES
    assert all(JOURNALED.get(k.__name__) is k for k in kept)
    assert STORAGE.handles(ev.TeardownFailed)


class _Sink:
    def __init__(self) -> None:
        self.seen: list[object] = []


def test_a_table_takes_the_types_its_handlers_are_annotated_with_and_says_what_is_undecided(
        caplog) -> None:
    table: EventTable[str] = EventTable("a test consumer", register=False)

    @table.on
    def started(sink: _Sink, e: ev.RunStarted | ev.RunResumed) -> str:
        sink.seen.append(e)
        return "started"

    table.ignore(ev.Progress, why="drawn elsewhere")
    assert table.handles(ev.RunStarted) and table.handles(ev.RunResumed)
    assert table.ignores(ev.Progress)
    assert ev.TeardownFailed in table.undecided and ev.RunStarted not in table.undecided
    sink = _Sink()
    progress = ev.Progress(1.0, 2.0, 0.5, 0, 0.5)
    assert table.dispatch(progress, sink) is None and sink.seen == []
    failed = ev.TeardownFailed("power meter", "timeout", 3.0)
    with caplog.at_level(logging.ERROR):
        assert table.dispatch(failed, sink) is None
        table.dispatch(failed, sink)  # reported once per type, not per event
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == ["a test consumer has no decision for the run event TeardownFailed: it "
                      "is dropped (add a handler or an ignore with its reason)"]
    with pytest.raises(EventTableError, match="decided twice"):
        table.ignore(ev.RunStarted, why="twice")
    with pytest.raises(EventTableError, match="say why"):
        table.ignore(ev.LogMessage, why="")
    with pytest.raises(EventTableError, match="annotate"):
        table.on(lambda sink, e: None)
    with pytest.raises(EventTableError, match="not a run event"):
        table.ignore(ev.Resumption, why="a payload, not an event")
