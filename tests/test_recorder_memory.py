"""The phase recorder's memory follows the measurement window, not the phase's length
(issue 27): a 12 h conditioning leaves it no bigger than a 2 h one, while every slice and
sample still reaches the store."""

from __future__ import annotations


from app.method.loader import load_method
from app.core.records import PhaseKind, RunConfig, SutDescription
from app.sequencer.sequencer import Sequencer
from app.station.session import open_session
from drivers.clock import FakeClock
from tests.support.memory import retained_bytes
from app.storage.repository import load_run

#: the recorder of a 12 h conditioning may keep at most this much more than a 2 h one's
#: (measured: ~40 kB, the per-interval records; the old recorder kept ~10 MB more here, and
#: ~1 GB more with one-second slices)
BOUND_BYTES = 200_000
#: coarse slices and samples keep the fake-clock run fast (the bench uses one-second ones)
SLICE_S = 120.0


def _conditioning_footprint(hours: float, tmp_path, monkeypatch) -> tuple[int, int, int]:
    """(bytes the recorder keeps at the end of a ``hours`` conditioning, its slices and
    power samples in the store)."""
    method = load_method("smoke")
    plans = tuple(p.model_copy(update={"conditioning_intervals": round(hours * 3600 / SLICE_S),
                                       "prefill": False, "active": p.active[:1]})
                  for p in method.plans)  # the conditioning and one profile after it
    method = method.model_copy(update={"plans": plans, "interval_s": SLICE_S,
                                       "sample_period_s": SLICE_S})
    sizes: list[int] = []
    finish = Sequencer._finish_phase

    def measured(self, recorder, *args, **kwargs):
        if recorder.phase.kind is PhaseKind.CONDITIONING:
            sizes.append(retained_bytes(recorder, (recorder.method, recorder.site,
                                                   recorder.phase)))
        return finish(self, recorder, *args, **kwargs)

    monkeypatch.setattr(Sequencer, "_finish_phase", measured)
    config = RunConfig(method="smoke", lab="sim-direct", sut=SutDescription())
    session = open_session(config, db_url=f"sqlite:///{tmp_path}/runs-{hours:g}.db",
                           clock=FakeClock(), method=method)
    session.lab.engine.slice_s = SLICE_S
    session.sequencer.run()
    session.writer.close()
    run = load_run(session.database, session.sequencer.run_id)
    phase = next(p.index for p in run.phases if p.info.kind is PhaseKind.CONDITIONING)
    slices = sum(1 for w in run.workload if w.phase_index == phase)
    samples = int((run.power.phase_index == phase).sum())
    session.database.close()
    assert len(sizes) == 1
    return sizes[0], slices, samples


def test_a_long_conditioning_keeps_no_more_in_memory_than_a_short_one(tmp_path, monkeypatch):
    short, short_slices, short_samples = _conditioning_footprint(2, tmp_path, monkeypatch)
    long, long_slices, long_samples = _conditioning_footprint(12, tmp_path, monkeypatch)
    assert long_slices >= 5 * short_slices > 0  # every slice is in the store …
    assert long_samples >= 5 * short_samples > 0  # … and every sample
    assert long - short < BOUND_BYTES, f"recorder grew {long - short:,} B from 2 h to 12 h"
    print(f"recorder: {short:,} B after 2 h, {long:,} B after 12 h")
