"""One way to consume run events: per consumer, a table with a decision for every event type.

Before this, the run's events were consumed in three styles — handlers looked up by class name
(``_on_RunStarted``), a dict of handlers, ``isinstance`` chains — and an event a consumer had no
handler for was skipped without a word (issue 31). A new event type could so reach the screen
but not the database, or the database but not the console, and nothing said so.

An :class:`EventTable` is built from handlers whose **last parameter's annotation** names the
event type(s) they take (a union names several), and from the types the consumer ignores on
purpose, each with the reason. :data:`EVENT_TYPES` is derived from the ``RunEvent`` union
itself, and ``tests/test_event_dispatch.py`` holds every table built (:data:`TABLES`) to it: a
new event type without a decision in some consumer fails that test, naming both.

An event dispatched to a table with no decision for it is logged as an error (once per type
and table) and skipped. It is not raised: consumers run on the sequencer's thread or the run
writer's thread, where an exception would end the run FAILED or lose the writer's batch for a
gap the test above catches before a build ships.
"""

from __future__ import annotations

import inspect
import logging
import types
import typing
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from app.sequencer import events as ev

log = logging.getLogger(__name__)

#: every event type the sequencer publishes, read from the ``RunEvent`` union
EVENT_TYPES: frozenset[type] = frozenset(typing.get_args(ev.RunEvent))

R = TypeVar("R")
H = TypeVar("H", bound=Callable[..., Any])


class EventTableError(TypeError):
    """A table was declared wrongly (a handler without an event annotation, a type decided
    twice, a type that is not a run event): a programming error, raised at import."""


class EventTable(Generic[R]):
    """A consumer's decisions: which handler takes each event type, which types it ignores.

    ``dispatch(event, *context)`` calls ``handler(*context, event)``: a method's table is
    dispatched with the instance as context, a module's with whatever its handlers share
    (the storage's connection and run state)."""

    def __init__(self, consumer: str, event_types: frozenset[type] = EVENT_TYPES,
                 register: bool = True) -> None:
        self.consumer = consumer
        self.event_types = event_types
        self._handlers: dict[type, Callable[..., R]] = {}
        self._ignored: dict[type, str] = {}
        self._reported: set[type] = set()
        if register:
            TABLES.append(self)

    def on(self, handler: H) -> H:
        """Decorator: ``handler`` takes the event type(s) its last parameter is annotated
        with."""
        for kind in _event_annotation(handler):
            self._decide(kind)
            self._handlers[kind] = handler
        return handler

    def ignore(self, *kinds: type, why: str) -> None:
        """``kinds`` reach this consumer and are dropped on purpose, for the reason ``why``."""
        if not why:
            raise EventTableError(f"{self.consumer}: say why the events are ignored")
        for kind in kinds:
            self._decide(kind)
            self._ignored[kind] = why

    def _decide(self, kind: type) -> None:
        if kind not in self.event_types:
            raise EventTableError(f"{self.consumer}: {kind!r} is not a run event type")
        if kind in self._handlers or kind in self._ignored:
            raise EventTableError(f"{self.consumer}: {kind.__name__} is decided twice")

    def handles(self, kind: type) -> bool:
        return kind in self._handlers

    def ignores(self, kind: type) -> bool:
        return kind in self._ignored

    @property
    def undecided(self) -> frozenset[type]:
        """Event types this consumer neither handles nor ignores (should be none)."""
        return self.event_types - self._handlers.keys() - self._ignored.keys()

    def dispatch(self, event: Any, *context: Any) -> R | None:
        """The handler's result for ``event``; None when it is ignored, or undecided (then
        logged as an error, once per type)."""
        kind = type(event)
        handler = self._handlers.get(kind)
        if handler is not None:
            return handler(*context, event)
        if kind not in self._ignored and kind not in self._reported:
            self._reported.add(kind)
            log.error("%s has no decision for the run event %s: it is dropped (add a handler "
                      "or an ignore with its reason)", self.consumer, kind.__name__)
        return None


#: every table built, in the order built (the completeness test reads it)
TABLES: list[EventTable[Any]] = []


def _event_annotation(handler: Callable[..., Any]) -> tuple[type, ...]:
    """The event types named by the annotation of ``handler``'s last parameter."""
    params = list(inspect.signature(handler).parameters.values())
    if not params or params[-1].annotation is inspect.Parameter.empty:
        raise EventTableError(f"{handler.__qualname__}: annotate its last parameter with the "
                              "event type it takes")
    annotation = params[-1].annotation
    if isinstance(annotation, str):  # postponed annotations: resolved in the handler's module
        annotation = eval(annotation, handler.__globals__)  # the project's own source text
    kinds = (typing.get_args(annotation)
             if isinstance(annotation, types.UnionType) or typing.get_origin(annotation)
             is typing.Union else (annotation,))
    if not all(isinstance(k, type) for k in kinds):
        raise EventTableError(f"{handler.__qualname__}: {annotation!r} is not an event type")
    return kinds

