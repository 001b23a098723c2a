"""The taxonomy file: the seed's category table, level names, and errors for a bad file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.cli.main import main
from app.method.loader import MethodError, load_method
from app.method.taxonomy import load_taxonomy, load_taxonomy_file
from app.core.paths import methods_dir

TAX = load_taxonomy(load_method("emerald-block-v3"))
TAX_TEXT = (methods_dir() / "taxonomy-emerald-v3.toml").read_text()

# seed "Taxonomy Categories" table: id → (title, testable, access pattern, MaxTTFD, user data)
CATEGORIES = {
    "online": ("Online", True, "Random/Sequential", "t < 80 ms", "required"),
    "near-online": ("Near Online", True, "Random/Sequential", "t > 80 ms", "required"),
    "removable": ("Removable Media Library", True, "Sequential", "80 ms < t < 5 min", "required"),
    "virtual": ("Virtual Media Library", True, "Sequential", "t < 80 ms", "required"),
    "adjunct": ("Adjunct Product", False, "", "t < 80 ms", "prohibited"),
    "interconnect": ("Interconnect Element", False, "", "t < 80 ms", "prohibited"),
}
LEVEL_NAMES = {1: "Consumer/Component", 2: "Low-end", 3: "Mid-range", 4: "Mid-range",
               5: "High-end", 6: "Mainframe"}


@pytest.mark.parametrize("cid", CATEGORIES)
def test_categories_match_the_seed_table(cid: str) -> None:
    c = TAX.category(cid)
    assert (c.title, c.testable, c.access_pattern, c.max_ttfd, c.user_accessible_data) == \
        CATEGORIES[cid]
    assert bool(c.levels) == c.testable and bool(c.reason) != c.testable


def test_level_names_and_the_taxonomy_named_by_default() -> None:
    assert dict(TAX.level_names) == LEVEL_NAMES
    assert load_taxonomy() == TAX  # no method: the compliant method's taxonomy (the wizard)
    assert TAX.category("removable").level_label(3) == "Removable 3"


def test_the_taxonomy_is_immutable() -> None:
    with pytest.raises(ValidationError):
        TAX.categories[0].testable = False  # type: ignore[misc]  # frozen: must raise


@pytest.mark.parametrize("edit,reason", [
    (("{ level = 2, robotics = true", "{ level = 1, robotics = true"),
     "a level is listed twice"),
    (('reason = "the method defines no classification or measurement procedure for adjunct '
      'products"\n', ""), "an untestable category has no levels and must give its reason"),
    (("6 = \"Mainframe\"", "7 = \"Mainframe\""), "levels [6] have no entry in level_names"),
    (('max_config = [">", 400]', 'max_config = ["~", 400]'), "key 'categories.0.levels"),
    (('connectivity = "host"', 'connectivity = "wifi"'),
     "key 'categories.0.levels.1.connectivity'"),
])
def test_a_bad_taxonomy_file_names_file_key_and_reason(tmp_path: Path, edit: tuple[str, str],
                                                       reason: str) -> None:
    assert edit[0] in TAX_TEXT
    path = tmp_path / "tax.toml"
    path.write_text(TAX_TEXT.replace(edit[0], edit[1], 1))
    with pytest.raises(MethodError) as err:
        load_taxonomy_file(path)
    assert str(err.value).startswith(f"{path}: invalid taxonomy") and reason in str(err.value)


@pytest.mark.parametrize("text,reason", [(None, "taxonomy file .*tax.toml: not found"),
                                         ("levels = [", "not valid TOML")])
def test_unreadable_taxonomy_files(tmp_path: Path, text: str | None, reason: str) -> None:
    path = tmp_path / "tax.toml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(MethodError, match=reason):
        load_taxonomy_file(path)


def test_cli_taxonomy_list_shows_requirements_grey_cells_and_untestable(capsys) -> None:
    assert main(["taxonomy", "list"]) == 0
    out = capsys.readouterr().out
    assert "Online 4 (Mid-range)" in out
    assert "needs network connectivity; not to be a consumer/component product; an integrated " \
           "storage controller; storage protection; no single point of failure; maximum " \
           "configuration > 100 drives" in out
    for grey in ("Near Online 4", "Removable 4", "Virtual 4"):
        line = next(row for row in out.splitlines() if row.strip().startswith(grey))
        assert line.rstrip().endswith("not defined")
    assert "Removable 1 (Consumer/Component)   needs no robotics" in out
    assert "not testable: the method defines no classification or measurement procedure for " \
           "interconnect elements" in out


def test_cli_taxonomy_list_json(capsys) -> None:
    assert main(["taxonomy", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in data["categories"]] == list(CATEGORIES)
