"""Fuzzed ``storwatt run`` / ``sim meter`` arguments (issue 15, docs/reliability.md): every
vector is either refused with one line that names the field, or accepted; never a traceback.

An accepted vector goes through the real ``open_session`` (method, taxonomy, storage, lab and
fio target checks) and only then is the run replaced by a marker: nothing runs, nothing is
measured, but everything a run would check first has been checked.
"""

from __future__ import annotations

import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli.main import main
from app.station.session import RunSession

#: the word a rejection of each option must contain (lower case)
FIELD_WORDS = {"--capacity-gb": "capacity", "--target-size": ("target", "size"),
               "--target": "target", "--drives": "drives", "--supply": "supply",
               "--ashrae-class": "ashrae", "--method": "method", "--taxonomy": "taxonomy",
               "--operator": "operator", "--meter-driver": ("driver", "resource"),
               "--thermo-driver": ("driver", "resource")}

NUMBERS = st.one_of(
    st.sampled_from(["inf", "-inf", "nan", "NaN", "1e30", "1e400", "-1", "0", "-0", "1e-30",
                     "", " ", "x", "0x10", "1_000", "7300", "1e9", "1000000000.1"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-10**30, max_value=10**30).map(str),
    st.text(max_size=20))
SIZES = st.one_of(
    st.sampled_from(["20T", "99999999T", "1P", "1E", "0", "", "1M", "4K", "-5M", "1.5G",
                     "1 GiB", "1,5 GiB", "64m", "5Q", "inf", "nanM", "1e3M", "10KB"]),
    st.builds(lambda n, u: f"{n}{u}", st.integers(-10, 10**25),
              st.sampled_from(["", "B", "K", "k", "M", "G", "T", "P", "E", "Q", "KiB", "MB",
                               "TB", "PiB", " ", "%"])),
    st.text(max_size=12))
PATHS = st.one_of(
    st.sampled_from(["/proc/x/y", "/proc/self/mem", "/sys/x", "/sys/block", "/dev/zz",
                     "/dev/null", "/dev/sda", "", " ", "/", "/tmp", "relative/x", "a:b",
                     "/tmp/x=y", "/tmp/a\nb", "/nonexistent/dir/file"]),
    st.builds(lambda n: "/tmp/storwatt-fuzz-" + "x" * n, st.integers(0, 10_000)),
    st.text(max_size=30))
WORDS = st.one_of(st.sampled_from(["", " ", "smoke", "demo", "online-3", "online-9",
                                   "1P-200-240", "A2", "Z9", "sim", "wt300", "zz"]),
                  st.text(max_size=30), st.builds(lambda n: "x" * n, st.integers(0, 10_000)))

OPTION_VALUES = {"--capacity-gb": NUMBERS, "--drives": NUMBERS, "--target-size": SIZES,
                 "--target": PATHS, "--supply": WORDS, "--ashrae-class": WORDS,
                 "--method": WORDS, "--taxonomy": WORDS, "--operator": WORDS,
                 "--meter-driver": WORDS, "--thermo-driver": WORDS}


class Accepted(BaseException):
    """Raised in place of the run once ``open_session`` accepted the vector."""


def _accept(session: RunSession):
    session.close()
    raise Accepted


@st.composite
def run_vectors(draw) -> tuple[list[str], list[str]]:
    """A valid cheap base (``--method smoke``, ``--lab sim``/``local-fio``) with 1–3 options
    replaced by generated values; returns (argv, the options replaced)."""
    lab = draw(st.sampled_from(["sim", "local-fio"]))
    base = {"--method": "smoke", "--lab": lab}
    if lab == "local-fio":
        base |= {"--capacity-gb": "1", "--supply": "1P-200-240", "--ashrae-class": "A2",
                 "--drives": "1", "--raid": "JBOD", "--vendor": "Acme", "--model": "M1",
                 "--serial": "S1",
                 "--target": "/tmp/storwatt-fuzz-target", "--target-size": "1M"}
    fuzzed = draw(st.lists(st.sampled_from(sorted(OPTION_VALUES)), min_size=1, max_size=3,
                           unique=True))
    for option in fuzzed:
        base[option] = draw(OPTION_VALUES[option])
    argv = ["run"]
    for option, value in base.items():
        argv.append(f"{option}={value}")  # '=' so a value starting with '-' is a value
    return argv, fuzzed


@pytest.fixture(scope="module")
def db_url(tmp_path_factory) -> str:
    return f"sqlite:///{tmp_path_factory.mktemp('cli-fuzz') / 'fuzz.sqlite'}"


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(vector=run_vectors())
def test_run_arguments_never_give_a_traceback(vector, db_url, capsys, monkeypatch) -> None:
    monkeypatch.setattr(RunSession, "run", _accept)
    argv, fuzzed = vector
    capsys.readouterr()
    try:
        code = main([*argv, f"--db={db_url}", "--quiet"])
    except Accepted:
        return
    except SystemExit as exc:  # argparse: a usage error
        code = exc.code
    err = capsys.readouterr().err
    assert code in (1, 2), (argv, err)
    assert err.endswith("\n") and err.count("\n") == 1 or code == 2, (argv, err)
    line = err.strip().split("\n")[-1].lower()
    assert line.startswith("storwatt run:"), (argv, err)
    assert "traceback" not in err.lower(), (argv, err)
    assert len(line) < 2_000, f"the message quotes a whole pasted value: {len(line)} chars"
    words = [w for option in fuzzed for w in _words(option)] + ["lab", "target"]
    assert any(w in line for w in words), (argv, line)


def _words(option: str) -> tuple[str, ...]:
    words = FIELD_WORDS[option]
    return words if isinstance(words, tuple) else (words,)


@pytest.mark.parametrize("value, reason", [
    ("inf", "finite"), ("nan", "finite"), ("-1", "finite"), ("1e30", "finite")])
def test_capacity_gb_refused_with_its_name(value, reason, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", f"--capacity-gb={value}"])
    assert exc.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--capacity-gb" in line and reason in line


@pytest.mark.parametrize("size", ["20T", "99999999T"])
def test_a_scratch_size_beyond_free_space_is_refused_before_anything_is_created(
        size, tmp_path, capsys) -> None:
    target = tmp_path / "scratch.bin"
    code = main(["run", "--lab=local-fio", "--method=smoke", f"--target={target}",
                 f"--target-size={size}", "--capacity-gb=1", "--supply=1P-200-240",
                 "--ashrae-class=A2", "--drives=1", "--raid=JBOD", "--vendor=Acme",
                 "--model=M1", "--serial=S1",
                 f"--db=sqlite:///{tmp_path / 'db.sqlite'}"])
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1
    assert "bytes free in" in line and str(target) in line
    assert not target.exists()


@pytest.mark.parametrize("port", ["99999", "-1", "65536", "x"])
def test_sim_meter_port_out_of_range_is_refused(port, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["sim", "meter", "--model=wt310", f"--port={port}"])
    assert exc.value.code == 2
    assert "--port" in capsys.readouterr().err.strip().splitlines()[-1]


def test_sim_meter_port_in_use_is_one_line(capsys) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        code = main(["sim", "meter", "--model=wt310", f"--port={busy.getsockname()[1]}"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert "cannot start the wt310 simulator" in err
