"""CLI polish of issue 24 item 10: a method file's errors on one readable line (no literal
``\\n``), ``runs show`` prints an INVALID figure as the report does (in parentheses, with its
reason), ``thermo read --help`` speaks of thermometers, every ``run`` option has help."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli.arguments import one_line
from app.cli.main import main
from app.sequencer import events as ev


def test_a_method_files_errors_read_as_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "smoke"\nname = "bad"\nversion = "1"\ntitle = "t"\n'
                   "compliant = false\nsample_period_s = 99\n\n[sampling]\n"
                   "meter_silence_limit_s = 1\n", encoding="utf-8")
    assert main(["run", "--lab", "sim-direct", "--method", str(bad)]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert "invalid method definition: " in line and "\\n" not in line, line
    assert one_line("path 0\r", []) == "path 0\\r"  # a typed control character stays visible


def test_every_run_option_says_what_it_is(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    lines = capsys.readouterr().out.splitlines()
    bare = [line for k, line in enumerate(lines)
            if re.match(r"^  --[a-z-]+( [A-Z_,…=.]+)?$", line)
            and (k + 1 == len(lines) or lines[k + 1].startswith("  -"))]
    assert not bare, bare


def test_thermo_read_help_is_about_thermometers(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["thermo", "read", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Open a thermometer" in text and "daq970a" in text and "range_v" not in text


def test_runs_show_prints_an_invalid_figure_in_parentheses(tmp_path: Path, capsys) -> None:
    from app.storage.opening import open_database
    from app.storage.synthetic import full_run
    from app.storage.writer import RunWriter

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    writer = RunWriter(open_database(url))
    def figure(m):  # EP_RI with a figure, though INVALID
        return replace(m, value=12.3165) if m.name == "EP_RI" else m

    events = [replace(e, metric=figure(e.metric)) if isinstance(e, ev.MetricComputed) else
              replace(e, metrics=tuple(figure(m) for m in e.metrics))
              if isinstance(e, ev.RunFinished) else e for e in full_run()]
    for event in events:
        writer(event)
    writer.close()
    assert main(["runs", "show", events[0].run_id[:8], "--db", url]) == 0
    assert "EP_RI      (12.317) GB/W  INVALID: power not stable" in capsys.readouterr().out
