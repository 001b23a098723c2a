"""Capacities and sizes as people type them (issue 17, item 5): one parser in ``app.core.units``
for the wizard and the CLI."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.units import UnitError, parse_capacity, parse_number, parse_size
from app.station.run_entries import EntryError, RunEntries, check_sut

TB = 10**12


@pytest.mark.parametrize("text", ["7300 GB", "7300GB", "7.3 TB", "7,3 TB", "7.3tb",
                                  " 7 300 GB ", "7,300 GB", "7300"])
def test_the_issues_examples_are_one_capacity(text: str) -> None:
    assert parse_capacity(text, "GB") == 7_300_000_000_000  # "7300": the unit box's GB


def test_locale_decides_an_ambiguous_comma_and_binary_units_stay_binary() -> None:
    assert parse_capacity("7,300 TB", decimal_point=",") == 7.3 * TB
    assert parse_capacity("7.300,5 GB", decimal_point=",") == 7_300_500_000_000
    assert parse_capacity("1 TiB") == 2**40
    assert parse_size("64M") == 64 * 2**20 and parse_size("1,5 GiB") == 3 * 2**29
    assert parse_size("0") == 0  # local-fio: no scratch file
    # issue 28: "7.3 TB" is one size whichever field it is typed in (capacity, scratch size)
    assert parse_size("7.3 TB") == parse_capacity("7.3 TB") == 7.3 * TB
    assert parse_size("7.3 TiB") == parse_capacity("7.3 TiB") and parse_size("1G") == 2**30
    for bad in ("", "GB", "7.3.1 TB", "7 parsecs", "-1 TB", "0"):
        with pytest.raises(UnitError):
            parse_capacity(bad)


@given(st.integers(min_value=1, max_value=10**7),
       st.integers(min_value=0, max_value=999),
       st.sampled_from(["GB", "TB", "gb", "Tb"]), st.sampled_from(["", " ", "  "]),
       st.sampled_from([".", ","]))
def test_any_typed_decimal_reads_as_its_value(whole: int, frac: int, unit: str, gap: str,
                                              locale_point: str) -> None:
    typed = f"{whole}{locale_point}{frac:03d}{gap}{unit}"
    scale = 10**9 if unit.upper() == "GB" else TB
    assert parse_capacity(typed, decimal_point=locale_point) == round(
        (whole + frac / 1000) * scale)


@given(st.floats(min_value=0.001, max_value=1e6, allow_nan=False))
def test_a_decimal_comma_is_read_like_a_point_when_it_cannot_group(value: float) -> None:
    text = f"{value:.2f}"
    assert parse_number(text.replace(".", ",")) == parse_number(text)


def test_the_wizard_uses_the_shared_parser() -> None:
    entries = RunEntries(vendor="A", model="B", serial="C", capacity="7,3 TB",
                            capacity_unit="GB")
    assert check_sut(entries).raw_capacity_bytes == 7_300_000_000_000
    with pytest.raises(EntryError, match="unknown unit"):
        check_sut(RunEntries(vendor="A", model="B", serial="C", capacity="7 parsecs"))
