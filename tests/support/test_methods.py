"""Method variants made for tests that run real fio on a shared 2-core test machine
(tests/fixtures/methods/): the smoke sequence with fewer flat-out generator checks and probes,
and with the stabilisation a fio start-up of over a second needs."""

from __future__ import annotations

from pathlib import Path

_FOLDER = Path(__file__).resolve().parent.parent / "fixtures" / "methods"
#: smoke searching queue depth 16 only
ONE_DEPTH_SMOKE = str(_FOLDER / "smoke-one-depth.toml")
#: smoke-one-depth with one 1 s stabilisation interval before each profile's measured two
REAL_FIO_SMOKE = str(_FOLDER / "smoke-real-fio.toml")
