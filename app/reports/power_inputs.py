"""The report's power-input part: each input's meter and accuracy formula, and a chart of each
input's power beside the SUT's total (method-notes §10, several power inputs).

The method measures the total; these pages show what it was summed from and how its
uncertainty was combined, so a reader can check the sum and see which formula judged each
input. All data comes from the stored run; a run with one meter has no such part.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from reportlab.graphics.shapes import Drawing
from reportlab.lib import colors

from app.metrics.formatting import format_figure
from app.reports.charts import time_unit
from app.reports.plot import SOLID_BLACK, Chart, Style
from app.reports.text import flag_text
from app.sequencer.power_inputs import COMBINATION_RULE
from app.storage.power_inputs import StoredPowerInput
from app.storage.stored import StoredRun
from drivers.interfaces import EXCLUDING_FLAGS

#: one style per input, in configured order (the total is solid black)
INPUT_STYLES = (Style(colors.HexColor("#1f4e9c"), 0.8, (4, 2)),
                Style(colors.HexColor("#2e7d32"), 0.8, (1, 1.5)),
                Style(colors.HexColor("#c25400"), 0.8, (6, 2, 1, 2)),
                Style(colors.HexColor("#6a1b9a"), 0.8, (8, 2, 1, 2, 1, 2)),
                Style(colors.HexColor("#00838f"), 0.8, (2, 2)))
INPUT_COLUMNS = ("Input", "Meter", "Element / wiring", "Accuracy formula", "Worst uncertainty",
                 "Flagged readings")
#: the sentence a report prints under the input table
COMBINATION_NOTE = (f"The SUT's power is the sum of its inputs at each sample instant; the "
                    f"uncertainty of the total is the {COMBINATION_RULE}. The method's 1 % limit "
                    "and resolution table apply to the total; each input's own over-range and "
                    "error flags exclude the total of that instant.")


def input_rows(run: StoredRun) -> list[list[str]]:
    """One row per input, in :data:`INPUT_COLUMNS` order."""
    rows = []
    for i in run.power_inputs:
        where = f"element {i.element}" if i.element is not None else "default element"
        if i.wiring != "1P2W":
            where = f"sum of the {i.wiring} elements"
        rows.append([i.name, f"{i.identity.describe()} ({i.identity.driver})",
                     f"{where}, {i.wiring}", i.accuracy, _worst(i),
                     f"{_flagged(i.flags)} of {len(i.flags)}"])
    return rows


def input_columns(run: StoredRun) -> tuple[list[str], list[list]]:
    """The per-input readings side by side, one row per sample instant: the instant, the
    total, then each input's watts, uncertainty and flags (``Input power`` sheet)."""
    titles = ["t_s", "total_w"]
    data: list[list] = [run.power.t.tolist(),
                        np.where(np.isfinite(run.power.watts), run.power.watts, np.nan).tolist()]
    for i in run.power_inputs:
        titles += [f"{i.name}_w", f"{i.name}_uncertainty_pct", f"{i.name}_flags"]
        data += [i.watts.tolist(), i.uncertainty_pct.tolist(), flag_text(i.flags)]
    return titles, data  # NaN stays NaN: the sheet writes it as an empty cell


def _flagged(flags: tuple[frozenset[str], ...]) -> int:
    """Readings with an excluding flag, judged once per distinct set of flags."""
    return sum(count for f, count in Counter(flags).items() if f & EXCLUDING_FLAGS)


def _worst(i: StoredPowerInput) -> str:
    finite = i.uncertainty_pct[np.isfinite(i.uncertainty_pct)]
    return f"{format_figure(float(finite.max()))} %" if len(finite) else "not evaluable"


def inputs_chart(run: StoredRun, width: float, height: float) -> Drawing:
    """Each input's power over the whole run beside the total (usable readings only)."""
    power = run.power
    span = float(power.t[-1] - power.t[0]) if len(power) > 1 else 1.0
    div, unit = time_unit(span)
    chart = Chart(width, height, "Power per input and the SUT's total", f"run time ({unit})",
                  "power (W)", y_min=0.0)
    chart.line(power.t / div, np.where(power.usable, power.watts, np.nan), "total", SOLID_BLACK)
    for k, i in enumerate(run.power_inputs):
        usable = np.fromiter((not f & EXCLUDING_FLAGS for f in i.flags), bool, len(i.flags))
        chart.line(i.t / div, np.where(usable, i.watts, np.nan), i.name,
                   INPUT_STYLES[k % len(INPUT_STYLES)])
    return chart.drawing()
