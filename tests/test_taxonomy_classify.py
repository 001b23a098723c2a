"""Every cell of the seed's four taxonomy tables (emerald-measurement-spec-training.txt).

The expected table below is transcribed from the seed independently of the TOML file, so a
wrong requirement in the data file fails here.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.cli.main import main
from app.method.loader import load_method
from app.method.taxonomy import (SutAttributes, TaxonomyError, allowed,
                                 classify, load_taxonomy, parse_taxonomy_id, unmet)

TAX = load_taxonomy(load_method("emerald-block-v3"))
R = True  # "Required"
# (category, level): required attributes; "conn" and "max" as in the seed rows
SEED = {
    ("online", 1): dict(conn="not-specified", consumer_component=True, max=(">=", 1)),
    ("online", 2): dict(conn="host", consumer_component=False, max=(">=", 4)),
    ("online", 3): dict(conn="network", consumer_component=False, integrated_controller=R,
                        storage_protection=R, max=(">=", 12)),
    ("online", 4): dict(conn="network", consumer_component=False, integrated_controller=R,
                        storage_protection=R, no_spof=R, max=(">", 100)),
    ("online", 5): dict(conn="network", consumer_component=False, integrated_controller=R,
                        storage_protection=R, no_spof=R, non_disruptive_service=R,
                        max=(">", 400)),
    ("online", 6): dict(conn="network", consumer_component=False, integrated_controller=R,
                        storage_protection=R, no_spof=R, non_disruptive_service=R, fba_ckd=R,
                        max=(">", 400)),
    ("near-online", 1): dict(conn="not-specified", consumer_component=True, max=(">=", 1)),
    ("near-online", 2): dict(conn="network", consumer_component=False, max=(">=", 4)),
    ("near-online", 3): dict(conn="network", consumer_component=False, integrated_controller=R,
                             storage_protection=R, max=(">=", 12)),
    ("near-online", 5): dict(conn="network", consumer_component=False, integrated_controller=R,
                             storage_protection=R, max=(">", 100)),
    ("near-online", 6): dict(conn="network", consumer_component=False, integrated_controller=R,
                             storage_protection=R, no_spof=R, non_disruptive_service=R,
                             max=(">", 1000)),
    ("removable", 1): dict(robotics=False),
    ("removable", 2): dict(robotics=True, max=("<=", 4)),
    ("removable", 3): dict(robotics=True, max=(">=", 5)),
    ("removable", 5): dict(robotics=True, max=(">=", 25)),
    ("removable", 6): dict(robotics=True, no_spof=R, non_disruptive_service=R, max=(">=", 25)),
    ("virtual", 1): dict(max=("<=", 12)),
    ("virtual", 2): dict(max=(">", 12)),
    ("virtual", 3): dict(storage_protection=R, max=(">", 48)),
    ("virtual", 5): dict(storage_protection=R, max=(">", 96)),
    ("virtual", 6): dict(storage_protection=R, no_spof=R, non_disruptive_service=R,
                         max=(">", 96)),
}
MISSING_LEVELS = [("near-online", 4), ("removable", 4), ("virtual", 4)]


def answers_for(category: str, level: int) -> SutAttributes:
    """The smallest product meeting exactly the seed's requirements for this level."""
    req = SEED[(category, level)]
    op, n = req.get("max", (">=", 1))
    drives = {">=": n, ">": n + 1, "<=": n}[op]
    kwargs = {k: v for k, v in req.items() if k not in ("conn", "max")}
    return SutAttributes(category=category, connectivity=req.get("conn", "not-specified"),
                         max_drive_count=drives, **kwargs)


@pytest.mark.parametrize("category,level", sorted(SEED))
def test_the_seed_requirements_of_each_level_give_that_level(category: str, level: int) -> None:
    result = classify(TAX, answers_for(category, level))
    assert (result.category, result.level, result.id) == (category, level, f"{category}-{level}")
    assert all(lvl > level for lvl, _ in result.ruled_out)


@pytest.mark.parametrize("category,level,attr",
                         [(c, lv, a) for (c, lv), req in sorted(SEED.items())
                          for a in req if a not in ("conn",)])
def test_every_required_cell_rules_its_level_out_when_unmet(category: str, level: int,
                                                            attr: str) -> None:
    good = answers_for(category, level)
    if attr == "max":
        op, n = SEED[(category, level)]["max"]
        bad = replace(good, max_drive_count={">=": n - 1, ">": n, "<=": n + 1}[op])
    else:
        bad = replace(good, **{attr: not getattr(good, attr)})
    requirements = TAX.category(category).level(level)
    assert not unmet(requirements, good)
    missing = unmet(requirements, bad)
    assert len(missing) == 1
    if _classifiable(bad):
        result = classify(TAX, bad)
        assert result.level != level
        if result.level < level:  # the level above the result says what it lacks
            assert dict(result.ruled_out)[level].endswith(missing[0])


YES_NO = ("consumer_component", "integrated_controller", "storage_protection", "no_spof",
          "non_disruptive_service", "fba_ckd", "robotics")


@pytest.mark.parametrize("category,level,attr",
                         [(c, lv, a) for (c, lv), req in sorted(SEED.items())
                          for a in YES_NO + ("conn",) if a not in req])
def test_every_optional_cell_leaves_its_level_alone(category: str, level: int,
                                                   attr: str) -> None:
    """The seed's "Optional" (and unlisted) cells: either answer still meets the level."""
    good = answers_for(category, level)
    requirements = TAX.category(category).level(level)
    if attr == "conn":
        variants = [replace(good, connectivity=c) for c in ("not-specified", "host", "network")]
    else:
        variants = [replace(good, **{attr: value}) for value in (False, True)]
    assert all(not unmet(requirements, v) for v in variants)


def _classifiable(a: SutAttributes) -> bool:
    try:
        classify(TAX, a)
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("category,level", [(c, lv) for (c, lv) in sorted(SEED) if
                                            SEED[(c, lv)].get("conn") in ("host", "network")])
def test_connectivity_below_the_requirement_rules_the_level_out(category: str,
                                                                level: int) -> None:
    bad = replace(answers_for(category, level), connectivity="not-specified")
    if _classifiable(bad):
        result = classify(TAX, bad)
        assert result.level < level
        assert "connectivity" in dict(result.ruled_out)[level]


@pytest.mark.parametrize("category,level", MISSING_LEVELS)
def test_grey_cells_do_not_exist(category: str, level: int) -> None:
    with pytest.raises(ValueError, match="not defined"):
        parse_taxonomy_id(TAX, f"{category}-{level}")


def test_a_high_end_online_array_explains_why_mainframe_is_ruled_out() -> None:
    a = SutAttributes("online", "network", False, True, True, True, True, False, 500)
    result = classify(TAX, a)
    assert result.label == "Online 5"
    assert result.ruled_out == ((6, "Online 6 needs FBA/CKD support"),)
    assert str(result.ruled_out[0]) == "Online 6 needs FBA/CKD support"  # the wizard shows str()
    assert result.eligible == (2, 3, 4, 5)
    assert allowed(result, "online-3") == ("online", 3)
    with pytest.raises(TaxonomyError, match="online-6 is ruled out by the answers: Online 6 "
                                            "needs FBA/CKD support"):
        allowed(result, "online-6")


@pytest.mark.parametrize("requested,reason", [
    ("online-1", "Online 1 needs to be a consumer/component product"),  # below, still unmet
    ("near-online-3", "the answers are for category online"),
    ("online-9", "level 9 is not defined"),
])
def test_a_requested_level_the_answers_do_not_meet_is_refused(requested: str,
                                                              reason: str) -> None:
    result = classify(TAX, SutAttributes("online", "network", False, True, True, True, True,
                                         False, 500))
    with pytest.raises(TaxonomyError, match=reason):
        allowed(result, requested)


@pytest.mark.parametrize("category", ["online", "near-online", "removable", "virtual"])
def test_unanswered_questions_classify_as_level_1(category: str) -> None:
    result = classify(TAX, SutAttributes(category))
    assert result.level == 1 and result.eligible == (1,)
    assert [r.level for r in result.ruled_out] == [6, 5, 4, 3, 2]


def test_answers_meeting_no_level_are_refused_with_every_reason() -> None:
    # a non-consumer online product with two host-connected drives: neither Online 1 nor 2
    with pytest.raises(TaxonomyError) as err:
        classify(TAX, SutAttributes("online", "host", consumer_component=False,
                                    max_drive_count=2))
    text = str(err.value)
    assert "meet no Online level" in text
    assert "Online 2 needs a maximum configuration of >= 4 drives (answered 2)" in text
    assert "Online 1 needs to be a consumer/component product" in text


@pytest.mark.parametrize("kwargs,reason", [({"connectivity": "wifi"}, "connectivity 'wifi'"),
                                           ({"max_drive_count": -1}, "whole number"),
                                           ({"max_drive_count": 2.5}, "whole number"),
                                           ({"robotics": "yes"}, "robotics must be yes/no")])
def test_malformed_answers_are_refused(kwargs: dict, reason: str) -> None:
    with pytest.raises(TaxonomyError, match=reason):
        SutAttributes("online", **kwargs)


@pytest.mark.parametrize("tid", ["adjunct-1", "interconnect-2"])
def test_categories_without_a_procedure_cannot_be_tested(tid: str) -> None:
    with pytest.raises(ValueError, match="cannot be tested"):
        parse_taxonomy_id(TAX, tid)


@pytest.mark.parametrize("tid,msg", [("online", "CATEGORY-LEVEL"), ("tape-2", "unknown"),
                                     ("online-7", "not defined")])
def test_bad_taxonomy_ids_list_the_valid_ones(tid: str, msg: str) -> None:
    with pytest.raises(ValueError, match=msg) as err:
        parse_taxonomy_id(TAX, tid)
    assert "online-3" in str(err.value) or "cannot" in str(err.value)


def test_cli_classify_prints_the_classification_and_reasons(capsys) -> None:
    assert main(["taxonomy", "classify", "--category", "online", "--connectivity", "network",
                 "--controller", "--protection", "--max-drives", "48"]) == 0
    out = capsys.readouterr().out
    assert "Online 3" in out and "Online 4 needs no single point of failure" in out


def test_cli_classify_json_and_requested_level(capsys) -> None:
    args = ["taxonomy", "classify", "--category", "removable", "--robotics", "--max-drives", "3"]
    assert main(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["id"], data["label"], data["eligible"]) == ("removable-2", "Removable 2", [2])
    assert data["ruled_out"][-1] == {"level": 3, "reason": "Removable 3 needs a maximum "
                                     "configuration of >= 5 drives (answered 3)"}
    assert main(args + ["--request", "removable-2"]) == 0
    assert "Requested removable-2: allowed" in capsys.readouterr().out
    assert main(args + ["--request", "removable-3"]) == 1
    assert "removable-3 is ruled out by the answers" in capsys.readouterr().err


@pytest.mark.parametrize("category,message", [
    ("adjunct", "Adjunct Product cannot be tested"),
    ("tape", "unknown taxonomy category 'tape'; categories: online, near-online"),
])
def test_cli_classify_refuses_untestable_or_unknown_categories(capsys, category: str,
                                                               message: str) -> None:
    assert main(["taxonomy", "classify", "--category", category]) == 1
    assert message in capsys.readouterr().err


def test_cli_run_refuses_an_undefined_level(capsys, tmp_path) -> None:
    assert main(["run", "--taxonomy", "removable-4", "--db",
                 f"sqlite:///{tmp_path / 'x.db'}"]) == 1
    assert "Removable 4 is not defined" in capsys.readouterr().err

