"""The simulated instruments' pyvisa-sim backend (resources/sim/meters.yaml)."""

from __future__ import annotations

from pathlib import Path

BACKEND = f"{Path(__file__).resolve().parents[2] / 'resources' / 'sim' / 'meters.yaml'}@sim"
