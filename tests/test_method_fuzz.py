"""Fuzzed method files: every one is either refused with a message naming the file and a key
it changed, or plans and runs (simulated SUT, fake clock) without an exception or a busy loop.

Each case takes one shipped method file and changes one to three of its values: a number to
NaN, ±inf, 0, a negative, a huge or a tiny number; a list emptied; a value swapped for another
type; a key removed. The TOML is written out again, so the loader reads a real file.
"""

from __future__ import annotations

import copy
import json
import math
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from app.labs.simulated import simulated_sut
from app.method.loader import MethodError, load_method_file
from app.method.model import Method
from app.core.paths import methods_dir
from app.core.records import RunConfig, RunStatus, SutDescription
from app.sequencer import events as ev
from app.sequencer.equipment import Lab
from app.sequencer.plan import build_phases
from app.sequencer.sequencer import Sequencer
from drivers.clock import FakeClock
from drivers.simulators.engine import SimulatedWorkloadEngine
from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer

Path_ = tuple[str | int, ...]
SHIPPED = {p.name: tomllib.loads(p.read_text()) for p in sorted(methods_dir().glob("*.toml"))
           if not p.name.startswith("taxonomy")}
BASE_TEXT = {name: (methods_dir() / name).read_text() for name in SHIPPED}
#: a run is sequenced when it is at most this many power samples long (longer accepted
#: methods are only planned: the fuzz hunts crashes and busy loops, not long runs)
MAX_SEQUENCED_SAMPLES = 3000
#: wall-clock bound for one sequenced run; a busy loop never ends within it
RUN_BOUND_S = 20.0

NUMBERS = [math.nan, math.inf, -math.inf, 0, 0.0, -1, -0.5, 10**18, 1e300, 1e-300, 1e-9, 0.3,
           1, 2.5, 7]
OTHER_TYPES: list[Any] = ["text", "", True, [1, 2], {"x": 1}]


@dataclass(frozen=True)
class Mutation:
    path: Path_
    value: Any  # the new value, or DELETE

    @property
    def key(self) -> str:
        """The innermost key name, which the refusal must mention."""
        return next(str(p) for p in reversed(self.path) if isinstance(p, str))


DELETE = object()


def leaves(node: Any, path: Path_ = ()) -> list[Path_]:
    """Every key and list element of a method file, tables and lists included."""
    found = [path] if path else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += leaves(value, path + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += leaves(value, path + (i,))
    return found


def get(node: Any, path: Path_) -> Any:
    for p in path:
        node = node[p]
    return node


def mutated(data: dict, mutations: list[Mutation]) -> dict:
    data = copy.deepcopy(data)
    for m in mutations:
        try:
            parent = get(data, m.path[:-1])
            if m.value is DELETE:
                del parent[m.path[-1]]
            else:
                parent[m.path[-1]] = copy.deepcopy(m.value)  # never alias OTHER_TYPES
        except (KeyError, IndexError, TypeError):  # an earlier mutation removed the parent
            continue
    return data


def toml_value(value: Any) -> str:
    """A TOML literal (inline tables and arrays only; enough for any method file)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_text(data: dict) -> str:
    return "".join(f"{json.dumps(k)} = {toml_value(v)}\n" for k, v in data.items())


#: (file changed, file loaded): a variant inherits most keys from its base, so changing the
#: base and loading the short ``smoke`` variant runs the changed stability, profile and
#: instrument keys through a whole sequence in a fraction of a second
CASES = [("smoke.toml", "smoke.toml"), ("emerald-block-v3.toml", "smoke.toml"),
         ("demo.toml", "demo.toml"), ("emerald-block-v3.toml", "emerald-block-v3.toml"),
         ("emerald-block-v3.toml", "demo.toml")]


@st.composite
def method_cases(draw: st.DrawFn) -> tuple[str, str, list[Mutation]]:
    changed, loaded = draw(st.sampled_from(CASES))
    paths = leaves(SHIPPED[changed])
    mutations = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        old = get(SHIPPED[changed], path)
        if isinstance(old, list) and draw(st.booleans()):
            value: Any = []
        elif isinstance(old, (int, float)) and not isinstance(old, bool) and \
                draw(st.integers(0, 3)):
            value = draw(st.sampled_from(NUMBERS))
        else:
            value = draw(st.sampled_from([*OTHER_TYPES, *NUMBERS[:4], DELETE]))
        mutations.append(Mutation(path, value))
    return changed, loaded, mutations


def sequence(method: Method, path: Path) -> None:
    """Run every plan of an accepted method on the simulated SUT; it must end, and with a
    final status, within the bound."""
    for plan in method.plans:
        coms = tuple(c.id for c in method.coms[:1])
        config = RunConfig(method=method.name, taxonomy=f"{plan.categories[0]}-1",
                           lab="sim-direct",
                           sut=SutDescription(coms_declared=coms, coms_on_during_test=coms,
                                              # a set-up the (mutated) method accepts
                                              supply=method.instruments.voltage_ranges[0].id,
                                              ashrae_class=method.instruments.inlet_classes[0]
                                              .name))
        phases = build_phases(method, config)
        samples = sum(p.planned_s for p in phases) / method.sample_period_s
        if samples > MAX_SEQUENCED_SAMPLES or plan.prefill and not plan.prefill_max_intervals:
            continue
        clock = FakeClock()
        sut = simulated_sut(config)
        lab = Lab(SimulatedPowerMeter(sut), SimulatedWorkloadEngine(sut, clock),
                  SimulatedThermometer(sut), sut.used_capacity_bytes)
        errors: list[str] = []
        seq = Sequencer(method, config, lab, clock, [
            lambda e: errors.append(e.error) if isinstance(e, ev.RunFinished) else None])  # noqa: B023 - joined below
        outcome: list[object] = []

        def run() -> None:
            try:
                outcome.append(seq.run())  # noqa: B023 - joined within this iteration
            except BaseException as exc:  # noqa: BLE001 — reported below with the file
                outcome.append(exc)  # noqa: B023 - joined within this iteration

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        worker.join(RUN_BOUND_S)
        assert outcome, f"{path}: the run of plan {plan.name} did not end in {RUN_BOUND_S} s"
        # COMPLETED, not just any status: a run() that ends every crash as FAILED must not
        # hide one here (the simulated SUT never fails an accepted method)
        assert outcome[0] is RunStatus.COMPLETED, f"{path}: {outcome[0]!r} {errors}"


SMOKE, BASE = "smoke.toml", "emerald-block-v3.toml"


def _one(changed: str, path: Path_, value: Any) -> Any:
    """An explicit case: one change in ``changed``, loading the ``smoke`` variant."""
    return example(case=(changed, SMOKE, [Mutation(path, value)]))


# the crash and busy-loop kinds the first fuzzing of issue 15 found, always tried first
@_one(SMOKE, ("search", "queue_depths"), [])
@_one(BASE, ("stability", "weights", 8), math.inf)
@_one(BASE, ("stability", "weights", 1), math.nan)
@_one(BASE, ("profiles", 4, "block_size_kib"), 1e-9)
@_one(BASE, ("profiles", 0, "align_kib"), math.inf)
@_one(SMOKE, ("plans", 0, "prefill_block_kib"), 0)
@_one(SMOKE, ("plans", 0, "prefill_block_kib"), -1)
@_one(SMOKE, ("plans", 0, "prefill_block_kib"), math.inf)
@_one(SMOKE, ("plans", 0, "categories"), [])
@_one(SMOKE, ("interval_s",), 1e-300)
@_one(BASE, ("instruments", "max_temperature_interval_s"), 1e-300)
@_one(SMOKE, ("search", "queue_depths", 0), 0)
@_one(SMOKE, ("plans", 0, "conditioning_intervals"), 10**18)
@_one(BASE, ("profiles", 1, "intensity_of"), "MW2")
@pytest.mark.slow  # 15-25 s of CPU (1000 fuzzed method files): not for make test-fast
@settings(max_examples=1000, deadline=None, database=None, derandomize=True,
          phases=(Phase.explicit, Phase.generate),  # the cases are small: no shrinking
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=method_cases())
def test_fuzzed_method_files_are_refused_by_key_or_run(case, tmp_path_factory) -> None:
    changed, loaded, mutations = case
    folder = tmp_path_factory.mktemp("methods", numbered=True)
    for name, text in BASE_TEXT.items():
        (folder / name).write_text(text)
    (folder / changed).write_text(toml_text(mutated(SHIPPED[changed], mutations)))
    path = folder / loaded
    try:
        method = load_method_file(path)
    except MethodError as exc:
        message = str(exc)
        assert message.startswith(f"{path}: "), message
        assert any(names(m, message) for m in mutations), (mutations, message)
        if changed != loaded:
            assert changed in message, message
        return
    method.summary()
    sequence(method, path)


def names(mutation: Mutation, message: str) -> bool:
    """The refusal names the changed key, or (a renamed reference) the new name."""
    value = mutation.value
    return mutation.key in message or (isinstance(value, str) and value != "" and
                                       value in message)
