"""Several load hosts through fio's own client/server mode (method-notes §7, §9).

Each load host runs ``fio --server`` (default port 8765). The station starts **one client
process per host**, each ``--client=HOST,PORT`` immediately followed by its job file: fio pairs
a ``--client`` with the job files after it, and ``--client=A --client=B job`` silently runs
only on B (method-notes §9). One process per host also gives each host its own exit code and
error text, so a refused connection names its host.

Measured on fio 3.33 (docs/fio.md): in client mode neither ``--status-interval`` snapshots,
the normal text report nor ``--output=FILE`` reach the client's output before the run ends —
the per-second reports are collected and printed at exit as ``client_stats``; ETA lines are
live only with ``--output-format=normal`` (which loses the bins). So per-host progress is
polled as *liveness* (each client's process and its connection) while the phase runs, and the
per-second intervals with their bins are rebuilt from ``client_stats`` when it ends.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from drivers.fio.stream import IntervalSeries, snapshot_of_jobs
from drivers.interfaces import WorkloadError, WorkloadInterval

DEFAULT_PORT = 8765
_HOST = re.compile(r"^[A-Za-z0-9_.-]{1,253}$")
_REFUSED = ("connection refused", "failed to connect", "no route to host",
            "name or service not known", "connection timed out", "connect:")
#: what a fio client prints when its server stopped answering mid-job (fio 3.33 gives up
#: after its own ~40 s command timeout: "timeout on SEND_ETA", docs/reliability.md)
_LOST = ("timed out", "timeout on", "connection reset", "broken pipe")
ALL_CLIENTS = "All clients"


def parse_host(host: str) -> tuple[str, int]:
    """``HOST[:PORT]`` → (host, port); WorkloadError for anything fio could misread."""
    name, sep, port = host.rpartition(":")
    if not sep:
        name, port = host, str(DEFAULT_PORT)
    if not _HOST.match(name or "") or not port.isdigit() or not 0 < int(port) < 65536:
        raise WorkloadError(f"load host {host!r} is not HOST[:PORT] (port 1…65535)")
    return name, int(port)


def client_argument(host: str) -> str:
    """``host[:port]`` → fio's ``--client`` value ``host,port``."""
    name, port = parse_host(host)
    return f"{name},{port}"


def client_argv(binary: str, host: str, job: Path, extra: Sequence[str] = ()) -> list[str]:
    """One host's command line: the ``--client`` paired with its own job file."""
    return [binary, f"--client={client_argument(host)}", "--output-format=json+",
            "--status-interval=1", *extra, str(job)]


def connection_refused(text: str) -> bool:
    """True when a client's error text says it never reached its server."""
    lowered = text.lower()
    return any(marker in lowered for marker in _REFUSED)


def connection_lost(text: str) -> bool:
    """True when a client's error text says its server stopped answering mid-job."""
    lowered = text.lower()
    return any(marker in lowered for marker in _LOST)


def client_entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The per-host report entries of a client document, without fio's "All clients" sum
    (it has no bins, method-notes §9: merge the per-host bins instead)."""
    if "client_stats" not in doc:
        raise WorkloadError("fio client printed a document without 'client_stats'")
    return [e for e in doc["client_stats"] if e.get("jobname") != ALL_CLIENTS]


def entry_host(entry: dict[str, Any]) -> str:
    return f"{entry.get('hostname', '')}:{entry.get('port', '')}"


def host_intervals(doc: dict[str, Any], arrived: float, host: str,
                   jobs: int = 1) -> list[WorkloadInterval]:
    """Intervals of a one-host client document (the station runs one client per host)."""
    grouped = hosts_by_entry(doc)
    if len(grouped) > 1:
        raise WorkloadError(f"client document for {host} holds {len(grouped)} hosts")
    return entry_intervals(next(iter(grouped.values()), []), arrived, host, jobs)


def entry_intervals(entries: list[dict[str, Any]], arrived: float, host: str,
                    jobs: int = 1) -> list[WorkloadInterval]:
    """Rebuild one host's per-second intervals from its report entries.

    The reports come in order and are cumulative; they are anchored on the moment the final
    document arrived and spaced by ``job_runtime`` (summed over ``jobs``, hence divided), so the
    last interval ends at arrival and the first starts when the host's IO started.
    """
    if not entries:
        return []
    snaps = [snapshot_of_jobs([e], host) for e in entries]
    per_s = 1000.0 * max(1, jobs)
    final_ms = snaps[-1].runtime_ms
    series = IntervalSeries(arrived - final_ms / per_s, host)
    out = []
    for snap in snaps:
        interval = series.add(arrived - (final_ms - snap.runtime_ms) / per_s, snap)
        if interval is not None:
            out.append(interval)
    return out


def hosts_by_entry(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Entries grouped per ``hostname:port`` (a combined multi-client document)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for entry in client_entries(doc):
        grouped.setdefault(entry_host(entry), []).append(entry)
    return grouped
