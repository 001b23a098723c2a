"""Method files: validated, immutable, and every error names the file, the key and the reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.method.loader import MethodError, all_methods, load_method, load_method_file
from app.core.paths import methods_dir

BASE = (methods_dir() / "emerald-block-v3.toml").read_text()


def write_variant(tmp_path: Path, body: str, name: str = "bad.toml",
                  header: str = 'base = "emerald-block-v3.toml"\ncompliant = false\n') -> Path:
    (tmp_path / "emerald-block-v3.toml").write_text(BASE)
    path = tmp_path / name
    path.write_text(header + body)
    return path


def test_shipped_methods_load_and_variants_are_non_compliant() -> None:
    methods = all_methods()
    assert {"emerald-block-v3", "demo", "smoke"} <= set(methods)
    assert methods["emerald-block-v3"].compliant
    assert "NON-COMPLIANT" not in methods["emerald-block-v3"].label
    for name in ("demo", "smoke"):
        assert not methods[name].compliant
        assert methods[name].variant_of == "emerald-block-v3"
        assert "NON-COMPLIANT" in methods[name].label
    compliant = methods["emerald-block-v3"]
    plan = compliant.plan_for("online")
    # method-notes §2: each profile ≥ 40 min (10 stabilisation + 30 measurement), 2 h idle
    assert all(s.stabilisation_intervals == 10 and s.measurement_intervals == 30
               for s in plan.active)
    assert plan.ready_idle_intervals * compliant.interval_s == 7200
    assert [s.profile for s in compliant.plan_for("removable").active] == ["SW", "SR"]


def test_method_objects_are_immutable() -> None:
    method = load_method("demo")
    with pytest.raises(ValidationError):
        method.interval_s = 5  # type: ignore[misc]  # frozen: must raise


UNKNOWN_STEP = ('[[plans]]\nname = "p"\ncategories = ["online"]\nready_idle_intervals = 1\n'
                'active = [{ profile = "MW1", stabilisation_intervals = 1, '
                'measurement_intervals = 1 }, { profile = "ZZ", stabilisation_intervals = 1, '
                'measurement_intervals = 1 }]\n')


@pytest.mark.parametrize("body,key,reason", [
    ('[stability]\nweights = [2, 1]\n', "stability", "weights has 2 entries but wma_points is 10"),
    ('interval_s = "sixty"\n', "interval_s", "valid number"),
    ('[search]\nqueue_depths = "many"\n', "search.queue_depths", "valid tuple"),
    ('[[profiles]]\nname = "MW1"\n', "profiles.0.title", "Field required"),
    (UNKNOWN_STEP, "plans.0.active.1.profile", "unknown profile 'ZZ' (profiles: MW1, MW2"),
    ('[[plans]]\nname = "p"\ncategories = ["online"]\nready_idle_intervals = 1\n'
     'conditioning_profile = "HOT"\nactive = [{ profile = "MW1", stabilisation_intervals = 0, '
     'measurement_intervals = 1 }]\n', "plans.0.conditioning_profile",
     "unknown profile 'HOT'"),
    ('surprise = 1\n', "surprise", "Extra inputs"),
    ('sample_period_s = 10.0\n', "sample_period_s", "exceeds instruments.max_power_interval_s"),
])
def test_invalid_definitions_name_file_key_and_reason(tmp_path: Path, body: str, key: str,
                                                      reason: str) -> None:
    path = write_variant(tmp_path, body)
    with pytest.raises(MethodError) as err:
        load_method_file(path)
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert reason in message
    if key != "(top level)":
        assert f"key '{key}'" in message


def test_a_profile_reference_in_intensity_of_must_exist(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE.replace('intensity_of = "MW1"', 'intensity_of = "MW9"'))
    with pytest.raises(MethodError, match=r"key 'profiles\.1\.intensity_of': profile MW2: 'MW9'"):
        load_method_file(path)


def test_missing_key_in_a_standalone_file(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE.replace('\ninterval_s = 60.0', '\n'))
    with pytest.raises(MethodError,
                       match=r"m\.toml: invalid .*\n  key 'interval_s': Field required"):
        load_method_file(path)


@pytest.mark.parametrize("text,reason", [
    ('name = "x"\nversion = = 2\n', r"m\.toml: not valid TOML: .*line 2"),
    ('base = "nowhere.toml"\ncompliant = false\n', r"m\.toml: key 'base': base file .*nowhere"
                                                   r"\.toml not found"),
    ('base = 3\ncompliant = false\n', r"m\.toml: key 'base': must name a shipped method"),
    ('base = "emerald-block-v3.toml"\n', r"m\.toml: key 'compliant': a variant must state"),
])
def test_unreadable_files_and_bad_base_references(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / "emerald-block-v3.toml").write_text(BASE)
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(MethodError, match=reason):
        load_method_file(path)


def test_a_missing_file_names_itself(tmp_path: Path) -> None:
    with pytest.raises(MethodError, match=r"method file .*absent\.toml: not found"):
        load_method_file(tmp_path / "absent.toml")


def test_a_variant_of_a_method_cannot_claim_compliance(tmp_path: Path) -> None:
    path = write_variant(tmp_path, 'name = "lab"\nvariant_of = "emerald-block-v3"\n',
                         header='base = "emerald-block-v3.toml"\ncompliant = true\n')
    with pytest.raises(MethodError, match=r"key 'compliant': a variant of emerald-block-v3 is "
                                          r"abbreviated and must say compliant = false"):
        load_method_file(path)


def test_circular_base_chain(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text('base = "b.toml"\ncompliant = false\n')
    (tmp_path / "b.toml").write_text('base = "a.toml"\ncompliant = false\n')
    with pytest.raises(MethodError, match="circular"):
        load_method_file(tmp_path / "a.toml")


def test_a_variant_inherits_and_overrides_key_by_key(tmp_path: Path) -> None:
    path = write_variant(tmp_path, 'name = "lab-rt"\nversion = "3.0.0-lab1"\n'
                                   'variant_of = "emerald-block-v3"\n'
                                   '[response_time]\nmax_avg_ms = 20.0\n')
    method = load_method_file(path)
    base = load_method_file(tmp_path / "emerald-block-v3.toml")
    assert method.response_time.max_avg_ms == 20.0
    assert method.response_time.confidence_levels == base.response_time.confidence_levels
    assert method.plans == base.plans and not method.compliant
    assert method.label == "lab-rt 3.0.0-lab1 [NON-COMPLIANT abbreviated variant]"


@pytest.mark.parametrize("second,reason", [
    ('name = "emerald-block-v3"\n', r"key 'name': 'emerald-block-v3' is already the name of"),
    ('name = "lab"\nvariant_of = "emerald-v9"\n', r"key 'variant_of': no method named "
                                                  r"'emerald-v9'; known: emerald-block-v3, lab"),
])
def test_a_methods_folder_with_clashing_names_or_dangling_variants(tmp_path: Path, second: str,
                                                                   reason: str) -> None:
    write_variant(tmp_path, second, name="second.toml")
    with pytest.raises(MethodError, match=r"second\.toml: " + reason):
        all_methods(tmp_path)


ONLY_MW2 = ('[[plans]]\nname = "p"\ncategories = ["online"]\nready_idle_intervals = 1\n'
            'active = [{ profile = "MW2", stabilisation_intervals = 0, '
            'measurement_intervals = 1 }]\n')


@pytest.mark.parametrize("body,line", [
    ('[search]\nqueue_depths = []\n', "key 'search.queue_depths': Tuple should have at least 1 "
                                      "item after validation, not 0 (got [])"),
    ('[search]\nqueue_depths = [1, 8, 4]\n', "key 'search.queue_depths': queue depths must rise "
                                             "strictly"),
    ('[stability]\nweights = [10, 9, 8, 7, 6, 5, 4, 3, nan, 1]\n',
     "key 'stability.weights.8': Input should be a finite number (got nan)"),
    ('interval_s = 0.001\n', "key 'interval_s': Input should be greater than or equal to 1 "
                             "(got 0.001)"),
    ('interval_s = inf\n', "key 'interval_s': Input should be a finite number (got inf)"),
    ('[search]\njobs = true\n', "key 'search.jobs': Input should be a valid integer (got True)"),
    (ONLY_MW2, "key 'plans.0.active.0.profile': plan p: MW2 runs at 25 % of MW1's measured "
               "IOPS, but MW1 is neither searched in this plan nor run before MW2"),
    (ONLY_MW2.replace("active", "conditioning_intervals = 3\nactive"),
     "key 'plans.0.conditioning_profile': plan p: 3 conditioning intervals need a "
     "conditioning_profile"),
    ('interval_s = 3600.0\n', "key 'plans.0': plan online would last up to 1142.43 h with every "
                              "COM checked (limit 168 h)"),
])
def test_every_number_and_list_is_checked(tmp_path: Path, body: str, line: str) -> None:
    with pytest.raises(MethodError) as err:
        load_method_file(write_variant(tmp_path, body))
    assert line in str(err.value)


@pytest.mark.parametrize("text,size", [("block_size_kib = 8", "0.3"),
                                       ("block_size_kib = 8", "1e-09"),
                                       ("align_kib = 8", "-1"),
                                       ("prefill_block_kib = 256", "0"),
                                       ("prefill_block_kib = 256", "0.75")])
def test_block_sizes_are_whole_sectors_of_fio_size(tmp_path: Path, text: str, size: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(BASE.replace(text, text.split("=")[0] + "= " + size, 1))
    key = text.split(" ")[0]
    with pytest.raises(MethodError, match=rf"key '(profiles|plans)\.0\.{key}': .*(0\.5|512 B)"):
        load_method_file(path)


def test_a_bad_inherited_value_names_the_base_file_that_set_it(tmp_path: Path) -> None:
    path = write_variant(tmp_path, 'name = "lab"\nvariant_of = "emerald-block-v3"\n')
    base = tmp_path / "emerald-block-v3.toml"
    base.write_text(BASE.replace("tolerance_pct = 5.0", "tolerance_pct = nan"))
    with pytest.raises(MethodError) as err:
        load_method_file(path)
    assert str(err.value).startswith(f"{path}: ")
    assert (f"key 'stability.tolerance_pct': Input should be a finite number (got nan) "
            f"[stability.tolerance_pct is set in {base}]") in str(err.value)


# --- a variant's base: a file beside it or a shipped method by name (issue 14 item 8) ---------

def test_a_variant_anywhere_may_name_a_shipped_method_as_its_base(tmp_path: Path) -> None:
    """No copy of the shipped file beside the variant: ``base = "emerald-block-v3"`` is the
    installed method (old code: "must name a method file like "emerald-block-v3.toml"")."""
    path = tmp_path / "lab-fast.toml"
    path.write_text('base = "emerald-block-v3"\nname = "lab-fast"\ncompliant = true\n'
                    'interval_s = 1.0\n')
    method = load_method_file(path)
    assert method.interval_s == 1.0 and method.compliant  # the file's claim, kept as a claim
    assert method.profiles == load_method("emerald-block-v3").profiles  # inherited
    assert method.compliance == load_method("emerald-block-v3").compliance


def test_a_variant_may_build_on_the_shipped_smoke_variant(tmp_path: Path) -> None:
    path = tmp_path / "quick.toml"
    path.write_text('base = "smoke"\nname = "quick"\ncompliant = false\n'
                    '[search]\nprobe_s = 0.5\nqueue_depths = [1, 4, 16]\n')
    method = load_method_file(path)
    smoke = load_method("smoke")
    assert method.search.queue_depths == (1, 4, 16)
    assert method.interval_s == smoke.interval_s and method.plans == smoke.plans
    assert method.compliance == load_method("emerald-block-v3").compliance  # smoke's base's


def test_an_unknown_shipped_base_names_the_file_the_key_and_the_choices(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text('base = "emerald-block-v4"\ncompliant = false\n')
    with pytest.raises(MethodError, match=r"m\.toml: key 'base': no shipped method named "
                                          r"'emerald-block-v4' \(shipped: demo, demo-workloads, "
                                          r"emerald-block-v3, emerald-hotband-v3, pts-di-demo, "
                                          r"smoke, spc1-like-demo; a file "
                                          r"beside the variant "
                                          r"is named with its \.toml ending\)"):
        load_method_file(path)
