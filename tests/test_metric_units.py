"""A metric's unit follows its profile's pattern (#22): random → IOPS/W, sequential →
MiB/s/W; a method that says otherwise is refused when it loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.method.loader import MethodError, all_methods, load_method_file
from app.core.paths import methods_dir

BASE = (methods_dir() / "emerald-block-v3.toml").read_text()


def _sr_as_random_reads() -> str:
    """The shipped method with SR redefined as 4 KiB random reads, unit left at MiB/s/W: the
    lab profile that printed "13.448 MiB/s/W" computed from IOPS."""
    start = BASE.index('name = "SR"')
    block = BASE[start:BASE.index("[[", start)]
    changed = block.replace('pattern = "sequential"', 'pattern = "random"') \
        .replace("block_size_kib = 256", "block_size_kib = 4")
    assert changed != block
    return BASE.replace(block, changed)


def test_a_random_profile_with_a_throughput_unit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sr-random.toml"
    path.write_text(_sr_as_random_reads())
    with pytest.raises(MethodError) as err:
        load_method_file(path)
    text = str(err.value)
    assert "SR" in text and "IOPS/W" in text and "MiB/s/W" in text


def test_every_shipped_method_has_its_units_right() -> None:
    for method in all_methods().values():
        for profile in method.profiles:
            assert profile.metric_unit == f"{profile.ops_unit}/W", (method.name, profile.name)
