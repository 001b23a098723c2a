"""The registry of shipped compliant methods and the normative keys it pins (issue 22).

A lab file could strip the method (1-point WMA, 60 s response-time limit, one queue depth, any
supply or inlet, profiles reversed) and still read "method numbers COMPLIANT"; the same file
named ``emerald-block-v3`` looked like the shipped method everywhere. Here each such file is a
variant with its deviations named, a registered name with other content is refused, and a
stricter variant stays compliant while saying it is a variant.
"""

from __future__ import annotations

import json
import re

import pytest

from app.cli.main import main
from app.rules.compliance import assess_method
from app.method.loader import (MethodError, all_methods, load_method, load_method_file,
                               methods_dir)
from app.method.model import Method
from app.method.normative import KEYS, PLAN_KEYS, Kind, normative_content, normative_sha256
from app.method.registry import (REGISTERED, entry_file_name, identify, registry,
                                 registry_dir)
from tests.support.hostile_method import HOSTILE_KEYS, hostile

#: every compliant method this project has shipped; append a line when one ships, never edit
PINNED = (
    ("emerald-block-v3", "3.0.0-sw1",
     "4295d9f697d7f7a712db394a676dbbf30facf70ebde4f70ffdfbce71e6172817"),
    ("emerald-hotband-v3", "3.0.0-sw1-hotband1",
     "662f50f7cfcde1003bb5213da6a63b2ce9b86afd4adcda8408f44a7452320ff9"),
)

def test_the_registry_is_pinned_and_holds_every_shipped_compliant_method():
    assert REGISTERED == PINNED
    for entry in registry():
        stored = json.loads((registry_dir() / entry_file_name(entry.name, entry.version))
                            .read_text(encoding="utf-8"))["normative"]
        assert normative_sha256(stored) == entry.sha256
    shipped = [m for m in all_methods().values() if m.compliant]
    assert {(m.name, m.version) for m in shipped} == {(n, v) for n, v, _ in PINNED}
    for method in shipped:
        assert identify(method).registered, identify(method).line()
        assert identify(method).relation() == "registered compliant method"


def test_methods_show_json_prints_the_registry_entry_a_release_would_pin(capsys):
    assert main(["methods", "show", "emerald-block-v3", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    stored = json.loads((registry_dir() / entry_file_name("emerald-block-v3", "3.0.0-sw1"))
                        .read_text(encoding="utf-8"))
    assert shown["registry_entry"] == stored
    assert shown["method_numbers"]["method"]["relation"] == "registered compliant method"


def test_every_key_of_the_method_model_is_classified():
    """A new method key must be declared normative or lab-settable before it ships."""
    data = load_method("emerald-hotband-v3").model_dump(mode="json")
    keys = {f"{k}.{sub}" if isinstance(v, dict) and k != "compliance" else k
            for k, v in data.items() for sub in (v if isinstance(v, dict) else [None])}
    keys = {k.removesuffix(".None") for k in keys}
    assert keys <= set(KEYS), sorted(keys - set(KEYS))
    assert set(data["plans"][0]) - {"name"} <= set(PLAN_KEYS)
    assert set(Method.model_fields) == {k.split(".")[0] for k in KEYS}


def test_a_registered_name_and_version_with_other_content_is_refused(tmp_path):
    path = hostile(tmp_path, "emerald-block-v3", "3.0.0-sw1")
    with pytest.raises(MethodError, match=r"is a registered compliant method, but this file's "
                                          r"normative content differs") as caught:
        load_method_file(path)
    assert "key 'response_time.max_avg_ms': registry emerald-block-v3 3.0.0-sw1: 30.0; " \
           "run: 60000.0 (exact: any change is a deviation)" in str(caught.value)


#: names that only look registered (issue 38, seen 7): each refused at load, naming the character
LOOK_ALIKES = {"emerald\u2010block\u2010v3": "U+2010 HYPHEN", "emerald-block-v3 ": "U+0020 SPACE",
               "emerald-block\u200b-v3": "U+200B ZERO WIDTH SPACE",
               "\u202eemerald-block-v3": "U+202E RIGHT-TO-LEFT OVERRIDE",
               "emerald-bl\u043eck-v3": "U+043E CYRILLIC SMALL LETTER O"}


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_a_name_that_only_looks_registered_is_refused_at_load(tmp_path, name):
    """The U+2010 case printed COMPLIANT "variant of emerald-block-v3: 0 keys differ" while the
    verifier refused it; names and versions now take only [A-Za-z0-9._+-], in both."""
    text = (methods_dir() / "emerald-block-v3.toml").read_text(encoding="utf-8")
    for key, value in (("name", name), ("version", name.replace("emerald", "3.0"))):
        path = tmp_path / f"{key}.toml"
        path.write_text(text.replace(f'{key} = "', f'{key} = "{value}" # ', 1),
                        encoding="utf-8")
        odd = re.escape(LOOK_ALIKES[name])
        with pytest.raises(MethodError, match=rf"key '{key}': .*{odd}.*only letters A–Z a–z, "
                                              r"digits and \. _ \+ -"):
            load_method_file(path)


def test_methods_show_of_the_hostile_variant_says_non_compliant_and_lists_the_keys(
        tmp_path, capsys):
    path = hostile(tmp_path)
    assert main(["methods", "show", str(path)]) == 0
    out = capsys.readouterr().out
    head = out.split("\n")[0]
    assert head == "lab-fast 1.0  method numbers NON-COMPLIANT (not met: 19 normative method keys)"
    assert "variant of emerald-block-v3 3.0.0-sw1: 19 keys differ (19 deviations)" in out
    for key in HOSTILE_KEYS:
        assert f"  NOT MET  Method key {key}: registry emerald-block-v3 3.0.0-sw1: " in out, key
    assert ('NOT MET  Method key response_time.max_avg_ms: registry emerald-block-v3 '
            '3.0.0-sw1: 30.0; run: 60000.0') in out
    assert ('NOT MET  Method key profiles.SW: registry emerald-block-v3 3.0.0-sw1: '
            '{"align_kib": 256.0, "block_size_kib": 256.0, "read_pct": 0.0}; run: '
            '{"align_kib": 1024.0, "block_size_kib": 1024.0, "read_pct": 100.0}') in out
    verdict = assess_method(load_method_file(path))
    assert sorted(c.name.removeprefix("Method key ") for c in verdict.failures) == \
        sorted(HOSTILE_KEYS)


@pytest.mark.parametrize(("override", "key"), [
    ('[search]\nqueue_depths = [1]\n', "search.queue_depths"),
    ('[response_time]\nmax_avg_ms = 31.0\n', "response_time.max_avg_ms"),
    ('[instruments]\nmax_uncertainty_pct = 2.0\n', "instruments.max_uncertainty_pct"),
    ('[stability]\ntolerance_pct = 6.0\n', "stability.tolerance_pct"),
    ('[instruments]\nfrequency_hz = [45.0, 63.0]\n', "instruments.frequency_hz"),
])
def test_each_loosened_key_alone_is_a_deviation(tmp_path, override, key):
    path = tmp_path / "loose.toml"
    path.write_text(f'base = "emerald-block-v3"\nname = "loose"\nversion = "1"\n'
                    f'compliant = true\n{override}', encoding="utf-8")
    verdict = assess_method(load_method_file(path))
    assert [c.name for c in verdict.failures] == [f"Method key {key}"]


def test_a_stricter_variant_is_compliant_and_says_it_is_a_variant(tmp_path):
    path = tmp_path / "strict.toml"
    path.write_text('base = "emerald-block-v3"\nname = "lab-strict"\nversion = "1.0"\n'
                    'compliant = true\n[instruments]\nmax_uncertainty_pct = 0.5\n'
                    'frequency_hz = [49.0, 51.0]\n[search]\njobs = 8\n', encoding="utf-8")
    method = load_method_file(path)
    verdict = assess_method(method)
    assert verdict.compliant, verdict.summary()
    assert identify(method).relation() == \
        "variant of emerald-block-v3 3.0.0-sw1: 2 keys differ (no deviation)"
    assert "search.jobs" not in normative_content(method)  # lab-settable
    assert KEYS["search.jobs"] is Kind.LAB


def test_a_run_is_judged_against_the_entry_of_the_version_it_recorded(monkeypatch, tmp_path):
    """A later release registering 3.1.0 with a stricter default never flips a run of 3.0.0."""
    import app.method.registry as reg

    newer = normative_content(load_method("emerald-block-v3"))
    newer["instruments.max_uncertainty_pct"] = 0.5
    (tmp_path / entry_file_name("emerald-block-v3", "3.1.0")).write_text(
        json.dumps({"normative": newer}), encoding="utf-8")
    for name, version, _ in PINNED:
        (tmp_path / entry_file_name(name, version)).write_bytes(
            (registry_dir() / entry_file_name(name, version)).read_bytes())
    monkeypatch.setattr(reg, "registry_dir", lambda: tmp_path)
    monkeypatch.setattr(reg, "REGISTERED", PINNED + (
        ("emerald-block-v3", "3.1.0", normative_sha256(newer)),))
    reg.registry.cache_clear()
    try:
        old = identify(load_method("emerald-block-v3"))
        assert old.registered and old.entry.version == "3.0.0-sw1"
    finally:
        reg.registry.cache_clear()
