"""`storwatt run` bad input: one actionable line, exit 1, no traceback."""

from __future__ import annotations

import pytest

from app.cli.main import main


def test_an_unusable_database_is_one_clear_line(capsys, tmp_path) -> None:
    assert main(["run", "--method", "smoke", "--db",
                 f"sqlite:///{tmp_path / 'missing-dir' / 'x.db'}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("storwatt run:") and "missing-dir" in err and "Traceback" not in err


def test_an_unknown_method_lists_the_known_ones(capsys, tmp_path) -> None:
    assert main(["run", "--method", "nope", "--db", f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    err = capsys.readouterr().err
    assert "unknown method 'nope'" in err and "smoke" in err


def test_negative_capacity_is_refused(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "--capacity-gb", "-5", "--db", f"sqlite:///{tmp_path / 'x.db'}"])
    assert exc.value.code == 2
    assert "--capacity-gb: '-5' must be a finite number of GB > 0" in capsys.readouterr().err
