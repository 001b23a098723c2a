"""``storwatt runs show`` gives each phase's times as every view writes a duration (issue 41,
seen 7: ``0.0626708 … 1.07107`` raw floats)."""

from __future__ import annotations

import re
from pathlib import Path

from app.cli.main import main
from app.metrics.formatting import format_duration
from app.storage.repository import load_run
from tests.support.stored_runs import store_synthetic_run


def test_phase_times_read_as_durations(tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    database = store_synthetic_run(url, "phase-times-0001")
    run = load_run(database, "phase-times-0001")
    assert main(["runs", "show", "phase-times", "--db", url]) == 0
    section = capsys.readouterr().out.split("\nPhases\n", 1)[1].split("\n\n", 1)[0]
    lines = section.splitlines()
    assert len(lines) == len(run.phases)
    for phase, line in zip(run.phases, lines):
        span = (f"at {format_duration(phase.t_start)} … {format_duration(phase.t_end)} "
                f"({format_duration(phase.t_end - phase.t_start)})")
        assert span in line, line
    assert not re.search(r"\d\.\d{3,}", section)  # no raw float anywhere


def test_a_classification_reason_is_one_line_without_a_stop_before_a_semicolon() -> None:
    """Issue 41, seen 7: the recorded reason read "Online 3.; Level 6 ruled out …"."""
    from app.cli.cmd_run import config_from_args
    from app.cli.main import build_parser

    config = config_from_args(build_parser().parse_args([
        "run", "--taxonomy", "online-3", "--connectivity", "network", "--controller",
        "--protection", "--max-drives", "96"]))
    text = config.classification_reason
    assert text.startswith("Classified as Online 3; level ") and ".;" not in text
    assert "\n" not in text
