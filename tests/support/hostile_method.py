"""The issue 22 item 1 method file, whole: every normative weakening a lab file could make
(1-point WMA at ±99 %, a 60 s response-time limit, one queue depth, any number of flagged
samples, 1P-1-1000 V and 1-1000 Hz, an inlet class of -40…85 °C, no conditioning, profiles in
reverse order, SW redefined as 1 MiB sequential reads)."""

from __future__ import annotations

import json
from pathlib import Path

from app.method.loader import load_method

#: item 1 of the issue, whole: every normative weakening a lab file could make
HOSTILE = '''base = "emerald-block-v3"
name = "{name}"
version = "{version}"
compliant = true
[stability]
wma_points = 1
weights = [1]
tolerance_pct = 99.0
[response_time]
max_avg_ms = 60000.0
ceiling_ms = 60000.0
[search]
queue_depths = [1]
[instruments]
max_flagged_power_samples = 100000
frequency_hz = [1.0, 1000.0]
voltage_ranges = [{{ phases = 1, min_v = 1.0, max_v = 1000.0 }}]
inlet_classes = [{{ name = "A1", min_c = -40.0, max_c = 85.0 }}]
[[plans]]
name = "online"
categories = ["online", "near-online"]
prefill = true
conditioning_intervals = 0
ready_idle_intervals = 120
active = [
  {{ profile = "SR", stabilisation_intervals = 10, measurement_intervals = 30 }},
  {{ profile = "SW", stabilisation_intervals = 10, measurement_intervals = 30 }},
  {{ profile = "RR", stabilisation_intervals = 10, measurement_intervals = 30 }},
  {{ profile = "RW", stabilisation_intervals = 10, measurement_intervals = 30 }},
  {{ profile = "MW2", stabilisation_intervals = 10, measurement_intervals = 30 }},
  {{ profile = "MW1", stabilisation_intervals = 10, measurement_intervals = 30 }},
]
[[plans]]
name = "media-library"
categories = ["removable", "virtual"]
prefill = false
conditioning_intervals = 0
ready_idle_intervals = 120
active = [
  {{ profile = "SR", stabilisation_intervals = 10, measurement_intervals = 30 }},
  {{ profile = "SW", stabilisation_intervals = 10, measurement_intervals = 30 }},
]
'''

#: what each hostile change is reported as (the key a NOT MET criterion names)
HOSTILE_KEYS = ["stability.wma_points", "stability.weights", "stability.tolerance_pct",
                "response_time.max_avg_ms", "response_time.ceiling_ms", "search.queue_depths",
                "instruments.max_flagged_power_samples", "instruments.frequency_hz",
                "instruments.voltage_ranges", "instruments.inlet_classes",
                "plans.online.conditioning_intervals", "plans.online.active",
                "plans.online.conditioning_profile", "plans.online.com_check_intervals",
                "plans.media-library.conditioning_intervals", "plans.media-library.active",
                "plans.media-library.conditioning_profile",
                "plans.media-library.com_check_intervals", "profiles.SW"]


def hostile(tmp_path: Path, name: str = "lab-fast", version: str = "1.0",
            sw_reads: bool = True) -> Path:
    path = tmp_path / f"{name}.toml"
    text = HOSTILE.format(name=name, version=version)
    if sw_reads:  # SW redefined as 1 MiB sequential reads
        profiles = load_method("emerald-block-v3").model_dump(mode="json")["profiles"]
        sw = next(p for p in profiles if p["name"] == "SW")
        sw.update(block_size_kib=1024, align_kib=1024, read_pct=100)
        text += "".join(_profile_toml(p) for p in profiles)
    path.write_text(text, encoding="utf-8")
    return path


def _profile_toml(profile: dict) -> str:
    keys = ("name", "title", "block_size_kib", "read_pct", "intensity_pct", "intensity_of",
            "align_kib", "pattern", "metric", "metric_unit")
    lines = [f"{k} = {json.dumps(profile[k])}" for k in keys if profile.get(k) is not None]
    if profile.get("trace"):
        lines.append(f'trace = "{Path(profile["trace"]).name}"')
    streams = ", ".join("{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in s.items()) + " }"
                        for s in profile.get("streams", ()))
    if streams:
        lines.append(f"streams = [{streams}]")
    return "[[profiles]]\n" + "\n".join(lines) + "\n"


