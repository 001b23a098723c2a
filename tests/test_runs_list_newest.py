"""``storwatt runs list`` shows the newest 50 by default (issue 41, seen 7: a 10,000-run
station printed 20,002 lines); ``--all`` lists every run, ``--limit N`` the newest N, and a
cut list says how many more are stored."""

from __future__ import annotations

import pytest

from app.cli.main import main
from app.storage.opening import open_database
from app.storage.synthetic import fill_history


@pytest.fixture(scope="module")
def url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('list') / 'r.db'}"
    database = open_database(url)
    fill_history(database, 120)
    database.close()
    return url


def listed_ids(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines()
            if line[:8].isalnum() and len(line.split()[0]) == 8 and line[8:10] == "  "]


def test_the_newest_fifty_by_default_and_the_rest_named(url: str, capsys) -> None:
    assert main(["runs", "list", "--db", url]) == 0
    out = capsys.readouterr().out
    assert len(listed_ids(out)) == 50
    assert "The newest 50 of 120 stored runs: --all lists every run" in out


def test_all_lists_every_run_and_limit_the_newest_n(url: str, capsys) -> None:
    assert main(["runs", "list", "--db", url, "--all"]) == 0
    out = capsys.readouterr().out
    assert len(listed_ids(out)) == 120 and "The newest" not in out
    assert main(["runs", "list", "--db", url, "--limit", "7"]) == 0
    assert len(listed_ids(capsys.readouterr().out)) == 7


def test_all_and_limit_are_one_or_the_other(url: str, capsys) -> None:
    with pytest.raises(SystemExit):
        main(["runs", "list", "--db", url, "--all", "--limit", "5"])
    assert "not allowed with argument" in capsys.readouterr().err
