"""A wire simulator remembers only its latest exchanges: a day-long rehearsal with many inputs
must not hold every reading in memory (issue 27)."""

from __future__ import annotations

import socket

import drivers.simulators.server as server
from drivers.simulators import MeterSimulator
from tests.support.time_budget import budget_s


def test_the_transcript_keeps_the_latest_exchanges_only(monkeypatch) -> None:
    monkeypatch.setattr(server, "TRANSCRIPT_LIMIT", 5)
    with MeterSimulator("wt310") as sim, \
            socket.create_connection((sim.host, sim.port), timeout=budget_s(2.0)) as conn:
        for i in range(8):
            conn.sendall(f"*CLS{i}\n".encode() if i < 7 else b"*IDN?\n")
            if i == 7:
                conn.recv(256)  # the last command answered: all eight were handled
        exchanges = sim.wait_for_exchanges(5)
    assert [e.received for e in exchanges] == \
        [f"*CLS{i}\n".encode() for i in range(3, 7)] + [b"*IDN?\n"]
