"""``storwatt run --taxonomy`` is checked against the SUT's attributes (issue 22 item 8).

The CLI took any ``--taxonomy`` with no attributes and the report said "Classification
justification: not recorded". It now takes the attributes as ``storwatt taxonomy classify``
does, records them with the run (the verdict derives the classification from them) and refuses
a level they rule out before anything runs.
"""

from __future__ import annotations

from app.cli.cmd_run import config_from_args
from app.cli.main import build_parser, main

#: the simulated lab's SUT has 50 drives: a maximum configuration of 96 (not fewer) derives Online 3
ONLINE_3 = ["--controller", "--protection", "--connectivity", "network", "--max-drives", "96"]


def test_a_level_the_attributes_rule_out_is_refused(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert main(["run", "--taxonomy", "online-4", *ONLINE_3, "--db", db]) == 1
    assert capsys.readouterr().err.strip() == (
        "storwatt run: --taxonomy online-4 is ruled out by the answers: Online 4 needs no single "
        "point of failure, a maximum configuration of > 100 drives (answered 96) (derived: "
        "Online 3)")
    assert not (tmp_path / "r.db").exists()  # refused before the store was opened


def test_the_attributes_are_recorded_with_the_derivation():
    args = build_parser().parse_args(["run", "--taxonomy", "online-2", *ONLINE_3])
    config = config_from_args(args)
    assert config.classification_answers["max_drive_count"] == 96
    assert config.classification_answers["connectivity"] == "network"
    assert config.classification_answers["integrated_controller"] is True
    assert config.classification_reason.startswith("Classified as Online 3;")


def test_without_attributes_nothing_is_recorded():
    config = config_from_args(build_parser().parse_args(["run", "--taxonomy", "online-3"]))
    assert config.classification_answers == {} and config.classification_reason == ""


def test_taxonomy_classify_takes_the_same_flags(capsys):
    assert main(["taxonomy", "classify", "--category", "online", *ONLINE_3,
                 "--request", "online-3"]) == 0
    assert capsys.readouterr().out.startswith("Classified as Online 3.")


def test_drives_above_the_maximum_configuration_are_refused(tmp_path, capsys):
    """Issue 28: the simulated SUT's 50 drives were accepted against --max-drives 48."""
    db = tmp_path / "r.db"
    online = ["--controller", "--protection", "--connectivity", "network"]
    assert main(["run", "--taxonomy", "online-3", *online, "--max-drives", "48",
                 "--db", f"sqlite:///{db}", "--out", str(tmp_path / "out")]) == 1
    assert capsys.readouterr().err.strip() == (
        "storwatt run: --drives: The SUT's drive count 50 is more than its maximum configuration "
        "of 48 drives (a classification answer): the product cannot hold more drives than it "
        "supports; correct the drive count or the maximum configuration.")
    assert not db.exists() and not (tmp_path / "out").exists()  # refused before anything
    # typed together, and the same rule for a SUT's own --drives
    args = build_parser().parse_args(["run", "--drives", "48", *online, "--max-drives", "48"])
    assert config_from_args(args).sut.drive_count == 48
    with __import__("pytest").raises(ValueError, match="drive count 49 is more than its "
                                                       "maximum configuration of 48 drives"):
        config_from_args(build_parser().parse_args(["run", "--drives", "49", *online,
                                                    "--max-drives", "48"]))


def test_an_unanswered_maximum_configuration_is_the_suts_drive_count():
    """One default for the wizard and the command line: the simulated SUT's 50 drives, not
    the taxonomy's 1 (which ruled out every level above 1 of a 50-drive array)."""
    args = build_parser().parse_args(["run", "--taxonomy", "online-3", "--controller",
                                      "--protection", "--connectivity", "network"])
    config = config_from_args(args)
    assert config.classification_answers["max_drive_count"] == config.sut.drive_count == 50
    assert config.classification_reason.startswith("Classified as Online 3;")
