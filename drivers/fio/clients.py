"""Several load hosts through fio's own client/server mode (method-notes §7, §9).

Each load host runs ``fio --server`` (default port 8765). The station starts **one client
process per host**, each ``--client=HOST,PORT`` immediately followed by its job file: fio pairs
a ``--client`` with the job files after it, and ``--client=A --client=B job`` silently runs
only on B (method-notes §9). One process per host also gives each host its own exit code and
error text, so a refused connection names its host.

Measured on fio 3.33 (docs/fio.md): in client mode ``--status-interval`` reports and any
JSON output reach the client only when the run ends, and a client whose output format holds
JSON prints no ETA lines at all. So each host's client runs with ``--output-format=normal
--eta=always --eta-newline=1``: its ETA lines give the host's live display rates
(``host_rates``), and when the phase ends its per-second intervals are rebuilt from the logs
fio's server sends back and the normal report's exact totals (``host_seconds``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from drivers.interfaces import WorkloadError

DEFAULT_PORT = 8765
_HOST = re.compile(r"^[A-Za-z0-9_.-]{1,253}$")
_REFUSED = ("connection refused", "failed to connect", "no route to host",
            "name or service not known", "connection timed out", "connect:")
#: what a fio client prints when its server stopped answering mid-job (fio 3.33 gives up
#: after its own ~40 s command timeout: "timeout on SEND_ETA", docs/reliability.md)
#: a client's words for a server gone mid-job ("client: host=… disconnected": the server's
#: socket closed, seen at once when its process is killed; the others after fio's timeout)
_LOST = ("timed out", "timeout on", "connection reset", "broken pipe", "disconnected")


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
    """One host's command line: the ``--client`` paired with its own job file, normal output
    so the ETA lines arrive live (any JSON format silences them)."""
    return [binary, f"--client={client_argument(host)}", "--output-format=normal",
            "--eta=always", "--eta-newline=1", *extra, str(job)]


def connection_refused(text: str) -> bool:
    """True when a client's error text says it never reached its server."""
    lowered = text.lower()
    return any(marker in lowered for marker in _REFUSED)


def connection_lost(text: str) -> bool:
    """True when a client's error text says its server stopped answering mid-job."""
    lowered = text.lower()
    return any(marker in lowered for marker in _LOST)
