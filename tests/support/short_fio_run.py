"""A shortest variant of a shipped method, run end to end on real fio (the workload tests).

Each real-fio workload test writes a variant of a shipped demo method with the least that
still exercises its profile, runs ``storwatt run --lab local-fio`` against a 64 MiB scratch
file and reads the stored run back; only what the variant changes differs between them.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.cli.main import main
from app.storage.db import Database
from app.storage.opening import open_database
from app.storage.stored import StoredRun
from app.storage.repository import load_run

SHIPPED = Path(__file__).resolve().parents[2] / "resources" / "methods"


def run_short_variant(tmp_path: Path, capsys, base: str, name: str, title: str,
                      body: str) -> tuple[Database, StoredRun]:
    """Run the variant ``name`` of shipped ``base`` (its TOML ``body`` after the header) and
    return the database and the COMPLETED run."""
    variant = tmp_path / f"{name}.toml"
    variant.write_text(f'base = "{SHIPPED / base}"\nname = "{name}"\nversion = "test"\n'
                       f'title = "{title}"\ncompliant = false\n'
                       f'variant_of = "emerald-block-v3"\n\n{body}', encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'fio.db'}"
    code = main(["run", "--lab", "local-fio", "--capacity-gb", "0.064", "--supply",
                 "1P-200-240", "--ashrae-class", "A2", "--drives", "1", "--raid", "JBOD",
                 "--vendor", "Acme", "--model", "M1", "--serial", "S1",
                 "--target", str(tmp_path / "s.dat"),
                 "--target-size", "64M", "--method", str(variant), "--db", db, "--json",
                 "--quiet"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] == "COMPLETED", out
    database = open_database(db)
    return database, load_run(database, out["run_id"])
