"""Fuzzed arguments of every ``storwatt`` command beyond ``run`` (issue 15, docs/reliability.md):
``sim meter``, ``meter read``/``thermo read``, ``runs``, ``report`` (``--pdf``, ``--xlsx``,
``--bundle``), ``db``, ``methods``,
``taxonomy`` and ``audit``. Each vector is refused with one line naming the option or value at
fault (exit 1, or 2 from argparse), or accepted; never a traceback, a hang or a file written
outside the test's folder.

What an accepted vector does is cut short where it would take long: a started simulator is
stopped at once, and a meter read takes at most two readings without waiting between them.
Nothing reaches the network: resources and database URLs are loopback, local files or junk.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import cmd_instruments
from app.cli.main import main
from app.storage.opening import open_database
from app.storage.synthetic import full_run
from app.storage.writer import RunWriter
from drivers.simulators import MeterSimulator, ThermometerSimulator
from drivers.simulators.server import LineServer
from tests.support.fuzz_limits import memory_cap

RUN_ID = "fuzz-run-0001"


def _relative(text: str) -> bool:
    """Generated paths stay inside the test's working folder."""
    return not text.startswith(("/", "~", "\\")) and ".." not in text and "\x00" not in text


TEXT = st.text(max_size=24).filter(_relative)
LONG = st.builds(lambda n: "x" * n, st.integers(0, 10_000))
NUMBERS = st.one_of(
    st.sampled_from(["inf", "-inf", "nan", "NaN", "1e30", "1e400", "-1", "0", "-0", "1e-30",
                     "", " ", "x", "0x10", "1_000", "3", "1.5", "10**9", "99999999999999999999"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-10**30, max_value=10**30).map(str), TEXT)
WORDS = st.one_of(TEXT, LONG)


class Bench:
    """What the vectors point at: a stored run, simulators, good/odd database URLs."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.good_db = f"sqlite:///{root / 'runs.db'}"
        database = open_database(self.good_db)
        writer = RunWriter(database)
        for event in full_run(run_id=RUN_ID, samples_per_phase=4):
            writer(event)
        writer.close()
        database.close()
        (root / "corrupt.db").write_bytes(b"this is not a database" * 100)
        (root / "folder.db").mkdir()
        (root / "journal.jsonl").write_text('{"not": "a journal"}\n')
        self.power = MeterSimulator("wt310")
        self.thermo = ThermometerSimulator("daq970a")
        self.power.start()
        self.thermo.start()

    def stop(self) -> None:
        self.power.stop()
        self.thermo.stop()

    def dbs(self) -> st.SearchStrategy[str]:
        r = self.root
        return st.one_of(st.sampled_from([
            self.good_db, f"sqlite:///{r / 'new.db'}", f"sqlite:///{r / 'corrupt.db'}",
            f"sqlite:///{r / 'folder.db'}", f"sqlite:///{r / 'missing' / 'x.db'}", "", "x",
            "://", "sqlite://", "sqlite:///", "mysql://nobody@127.0.0.1:1/x", "oracle://",
            str(r / "runs.db")]), WORDS)

    def run_ids(self) -> st.SearchStrategy[str]:
        return st.one_of(st.sampled_from([RUN_ID, "fuzz", "f", "", "-", "%", "_"]), WORDS)

    def paths(self) -> st.SearchStrategy[str]:
        r = self.root
        return st.one_of(st.sampled_from([
            str(r / "out.pdf"), str(r / "out.xlsx"), str(r / "folder.db"), str(r / "no" / "x"),
            "/proc/x/y", "/proc/self/status", "/sys/x", "/dev/null", "", " ", str(r)]), TEXT)

    def resources(self) -> st.SearchStrategy[str]:
        return st.one_of(st.sampled_from([
            self.power.resource, self.thermo.resource, "TCPIP::127.0.0.1::1::SOCKET",
            f"127.0.0.1:{self.power.port}", "127.0.0.1:1", "TCPIP::127.0.0.1::x::SOCKET",
            "GPIB0::1::INSTR", "", " ", "::"]), WORDS)

    def options(self) -> st.SearchStrategy[str]:
        keys = st.sampled_from(["timeout_s", "reconnect_attempts", "reconnect_delay_s",
                                "range_v", "range_a", "element", "backend", "channel",
                                "calibration_date", "x", ""])
        return st.builds(lambda k, v: f"{k}={v}", keys, NUMBERS) | TEXT


def _command(bench: Bench, draw) -> list[str]:
    """One vector: a command and its options, some of them generated."""
    def opt(name: str, strategy, p: float = 0.5) -> list[str]:
        return [f"{name}={draw(strategy)}"] if draw(st.floats(0, 1)) < p else []

    kind = draw(st.sampled_from(["sim", "read", "runs", "report", "db", "methods", "taxonomy",
                                 "audit"]))
    if kind == "sim":
        model = draw(st.sampled_from([*cmd_instruments.SIM_MODELS, "x", ""]))
        argv = ["sim", "meter", f"--model={model}", *opt("--port", NUMBERS | st.just("0"))]
        for name in ("--watts", "--volts", "--amps", "--pf", "--hz", "--celsius"):
            argv += opt(name, NUMBERS, 0.3)
        return argv + (["--compat-mode"] if draw(st.booleans()) else [])
    if kind == "read":
        what = draw(st.sampled_from(["meter", "thermo"]))
        driver = draw(st.sampled_from(["wt300", "wt210", "ptd", "daq970a", "watchport",
                                       "ptd-temp", "sim", "x", ""]) | TEXT)
        argv = [what, "read", f"--driver={driver}", f"--resource={draw(bench.resources())}"]
        argv += opt("--count", NUMBERS, 0.4) + opt("--interval", NUMBERS, 0.4)
        argv += ["--option=timeout_s=0.3", *opt("--option", bench.options(), 0.6)]
        return argv + (["--json"] if draw(st.booleans()) else [])
    if kind == "runs":
        common = [*opt("--db", bench.dbs(), 0.9), *(["--json"] if draw(st.booleans()) else [])]
        if draw(st.booleans()):
            return ["runs", "list", *common, *opt("--status", WORDS | st.sampled_from(
                ["completed", "INTERRUPTED", "running"])), *opt("--limit", NUMBERS)]
        return ["runs", "show", *common, *_last(draw(bench.run_ids()))]
    if kind == "report":
        run_id = draw(bench.run_ids()) if draw(st.floats(0, 1)) < 0.9 else "fuzz-run"
        if run_id.startswith(("fuzz-run", "fuzz")) and draw(st.floats(0, 1)) < 0.7:
            run_id = "no-such-run"  # keep the costly PDF to a few vectors
        return ["report", *opt("--pdf", bench.paths()), *opt("--xlsx", bench.paths()),
                *opt("--bundle", bench.paths() | st.just(str(bench.root / "out.zip"))),
                *opt("--db", bench.dbs(), 0.9), *_last(run_id)]
    if kind == "db":
        action = draw(st.sampled_from(["info", "upgrade", "copy", "recover", "roles"]))
        if action == "roles":  # a login name goes into SQL: anything else is one line
            return ["db", "roles", *opt("--station", TEXT | LONG | st.just("bench_1")),
                    *opt("--qa", TEXT), *opt("--db", bench.dbs())]
        if action == "copy":
            return ["db", "copy", f"--from={draw(bench.dbs())}", f"--to={draw(bench.dbs())}",
                    *opt("--run", bench.run_ids())]
        argv = ["db", action, *opt("--db", bench.dbs(), 0.9)]
        if action == "recover":
            argv += opt("--journal", bench.paths() | st.just(str(bench.root / "journal.jsonl")))
        return argv
    if kind == "methods":
        if draw(st.booleans()):
            return ["methods", "list"]
        name = draw(st.sampled_from(["smoke", "demo", "emerald-block-v3", "/etc/hostname",
                                     "/proc/self/status", "/dev/null", ""]) | WORDS)
        return ["methods", "show", *(["--json"] if draw(st.booleans()) else []), *_last(name)]
    if kind == "taxonomy":
        method = st.sampled_from(["smoke", "emerald-block-v3"]) | WORDS
        if draw(st.booleans()):
            return ["taxonomy", "list", *opt("--method", method, 0.3)]
        category = draw(st.sampled_from(["online", "near-online", "removable", "virtual"])
                        | WORDS)
        return ["taxonomy", "classify", f"--category={category}", *opt("--method", method, 0.3),
                *opt("--max-drives", NUMBERS), *opt("--request", WORDS | st.sampled_from(
                    ["online-2", "online-9", "near-online-1"]))]
    run_id = draw(bench.run_ids())
    if draw(st.booleans()):
        return ["audit", "list", *opt("--db", bench.dbs(), 0.9), *_last(run_id)]
    return ["audit", "add", f"--note={draw(WORDS)}", f"--author={draw(WORDS)}",
            *opt("--db", bench.dbs(), 0.9), *_last(run_id)]


def _last(positional: str) -> list[str]:
    """A positional value after ``--``, so a value starting with '-' is not an option."""
    return ["--", positional]


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli-commands-fuzz")
    bench = Bench(root)
    yield bench
    bench.stop()


class Accepted(BaseException):
    """A started simulator: the command accepted its arguments."""


def _start_then_stop(self: LineServer) -> int:
    _ORIGINAL_START(self)
    self.stop()
    raise Accepted


_ORIGINAL_START = LineServer.start
_ORIGINAL_SAMPLE = cmd_instruments._sample


def _short_sample(meter, clock, count: int, interval: float):
    """At most two readings and no wait between them (a NaN interval still reaches the wait)."""
    return _ORIGINAL_SAMPLE(meter, clock, min(count, 2),
                            interval if math.isnan(interval) else min(interval, 0.0))


@pytest.mark.slow
@pytest.mark.timeout(240)
@settings(max_examples=1000, deadline=None, database=None, report_multiple_bugs=False,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_every_other_command_refuses_bad_arguments_in_one_line(data, bench, capsys,
                                                              monkeypatch) -> None:
    argv = _command(bench, data.draw)
    monkeypatch.chdir(bench.root)
    monkeypatch.setattr(LineServer, "start", _start_then_stop)
    monkeypatch.setattr(cmd_instruments, "_sample", _short_sample)
    capsys.readouterr()
    with memory_cap():
        try:
            code = main(argv)
        except Accepted:
            return
        except SystemExit as exc:  # argparse: a usage error
            code = exc.code
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err)
    if code == 0:
        return
    err = err or out  # ``db recover`` reports each journal it could not import on stdout
    lines = err.strip().splitlines()
    assert lines, (argv, "refused without a message")
    assert "traceback" not in err.lower(), (argv, err)
    # the refusal is the first line (``taxonomy classify`` lists the unmet requirements after it)
    line = lines[0] if code == 1 else lines[-1]
    assert line.startswith("storwatt ") or "NOT imported" in line, (argv, err)
    assert max(map(len, lines)) < 2_000, (argv, "the message quotes a whole pasted value")
    if code == 2:
        assert "argument" in line or "invalid choice" in line or "required" in line, (argv, line)
    assert os.getcwd() == str(bench.root)


# -- what the fuzzer found, one case each (fail on the code before the fixes) -----------------
@pytest.mark.parametrize("option", ["--watts", "--volts", "--amps", "--pf", "--hz", "--celsius"])
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_sim_meter_refuses_nan_and_inf_naming_the_option(option: str, value: str,
                                                         capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["sim", "meter", "--model=wt310", f"{option}={value}"])
    assert exc.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument {option}: '{value}' must be a finite number" in line


@pytest.mark.parametrize("argv, words", [
    (["meter", "read", "--driver=wt300", "--resource=TCPIP::127.0.0.1::1::SOCKET",
      "--interval=nan"], "argument --interval: 'nan' must be a finite number"),
    (["meter", "read", "--driver=wt300", "--resource=TCPIP::127.0.0.1::1::SOCKET",
      "--count=0"], "argument --count: '0' must be from 1 to 86400"),
    (["runs", "list", "--limit=9223372036854775808"], "argument --limit: '9223372036854775808'"),
])
def test_numbers_that_crashed_or_hung_are_refused_by_argparse(argv, words, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("option", ["timeout_s=nan", "timeout_s=1e30", "reconnect_attempts=2.5",
                                    "reconnect_delay_s=-1"])
def test_driver_options_out_of_range_are_named(option: str, capsys) -> None:
    code = main(["meter", "read", "--driver=wt300", "--resource=TCPIP::127.0.0.1::1::SOCKET",
                 f"--option={option}"])
    assert code == 1
    line = capsys.readouterr().err.strip()
    assert line.startswith("storwatt meter read: driver option " + option.split("=")[0])


def test_an_unparsable_database_url_is_one_line_and_a_pasted_one_is_clipped(capsys) -> None:
    assert main(["runs", "show", "--db=0", "--", "x"]) == 1
    assert "cannot open database 0" in capsys.readouterr().err
    pasted = "y" * 5000
    assert main(["runs", "show", f"--db={pasted}", "--", "x" * 3000]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < 600 and "(5000 characters)" in err


def test_a_journal_path_with_a_control_character_is_reported_on_one_line(tmp_path,
                                                                         capsys) -> None:
    """Found by the fuzzer above: ``--journal '0\\r'`` printed a raw carriage return, so the
    report's line read as "0" on a terminal."""
    assert main(["db", "recover", f"--db=sqlite:///{tmp_path / 'r.db'}", "--journal=0\r"]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("0\\r: NOT imported, the journal is kept")
