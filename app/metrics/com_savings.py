"""What a capacity optimisation (COM) saves: capacity, power, efficiency, CAPEX and OPEX.

The Green Grid's COM study (docs/method-notes.md §6; seed green-grid-coms-poms.txt) measures a
baseline configuration and an optimised one holding the same usable capacity, then reports
both efficiency metrics before and after and what the fewer drives and watts are worth:

* capacity per idle watt (GB/W, the ready-idle metric) and IOs per active watt (IO/W, a 70/30
  random workload), each with its change in % of the baseline;
* CAPEX: drives and drive enclosures no longer bought, at a price per drive and per empty
  enclosure (the seed: $549 for a 450 GB 15K SAS drive, $2,710 per enclosure);
* OPEX: the installed (active) power no longer needed, at a cost per month per 10 kW of
  installed power ($5,320 in the seed, a first-order data-centre cost of power, cooling and
  space by Patel and Shah) — editable, because it is a site's figure, not the method's;
* both scaled from the tested system's installed power to 10 kW and 100 kW installations.

Pure functions of two :class:`ConfigFigures`: the CLI, the history view and the xlsx/PDF
tables format the same :class:`ComSavings`, so they cannot disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.metrics.errors import MetricsError

#: the seed's cost figures (green-grid-coms-poms.txt, "CAPEX/OPEX Savings Estimated")
SEED_DRIVE_USD = 549.0
SEED_ENCLOSURE_USD = 2710.0
SEED_OPEX_PER_10KW_MONTH_USD = 5320.0
#: the seed's active workload: 70/30 random (green-grid-coms-poms.txt)
DEFAULT_ACTIVE_METRIC = "EP_MW1"
#: installations the seed scales the tested system's savings to
SCALE_KW = (10.0, 100.0)


@dataclass(frozen=True)
class ConfigFigures:
    """One configuration as the seed's tables describe it (measured or entered)."""

    label: str
    capacity_gb: float  # usable capacity, GB (10⁹ B); the same before and after in the seed
    idle_w: float  # ready-idle power (the seed's "(I)")
    active_w: float  # power under the active workload (the seed's "(B)", busy)
    iops: float  # the active workload's IO rate
    drives: int
    enclosures: int = 0

    def __post_init__(self) -> None:
        for name in ("capacity_gb", "idle_w", "active_w", "iops"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise MetricsError(f"{self.label}: {name} must be a positive number "
                                   f"(got {value!r})")
        for name in ("drives", "enclosures"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise MetricsError(f"{self.label}: {name} must be a whole number ≥ 0 "
                                   f"(got {value!r})")

    @property
    def gb_per_w(self) -> float:
        return self.capacity_gb / self.idle_w

    @property
    def io_per_w(self) -> float:
        return self.iops / self.active_w


@dataclass(frozen=True)
class CostRates:
    """Prices the savings are valued at; the defaults are the seed's."""

    drive_usd: float = SEED_DRIVE_USD
    enclosure_usd: float = SEED_ENCLOSURE_USD
    opex_per_10kw_month_usd: float = SEED_OPEX_PER_10KW_MONTH_USD

    def __post_init__(self) -> None:
        for name in ("drive_usd", "enclosure_usd", "opex_per_10kw_month_usd"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise MetricsError(f"{name} must be a number ≥ 0 (got {value!r})")


@dataclass(frozen=True)
class SavingsRow:
    """One figure before and after, and its change: a % of the baseline (``pct``), a
    difference (``count``), a ratio (``ratio``) or none (``""``)."""

    figure: str
    baseline: float
    optimised: float
    change: float
    change_kind: str
    decimals: int  # how the seed prints the figure

    def texts(self) -> tuple[str, str, str, str]:
        """(figure, baseline, optimised, change) as the seed prints them: "+51 %", "0.47×"."""
        change = {"pct": lambda v: f"{v:+.0f} %", "count": lambda v: f"{v:+.0f}",
                  "ratio": lambda v: f"{v:.2f}×"}.get(self.change_kind)
        return (self.figure, f"{self.baseline:,.{self.decimals}f}",
                f"{self.optimised:,.{self.decimals}f}",
                change(self.change) if change and math.isfinite(self.change) else "")


def change_pct(before: float, after: float) -> float:
    """``after`` relative to ``before`` in % (+51 means 51 % more)."""
    return (after / before - 1) * 100


@dataclass(frozen=True)
class ComSavings:
    """The seed's before/after figures and what the difference is worth."""

    baseline: ConfigFigures
    optimised: ConfigFigures
    rates: CostRates = CostRates()
    #: why these two runs' savings are weak (app.rules.comparability), shown above every table
    caveats: tuple[str, ...] = ()

    @property
    def gb_per_w_change_pct(self) -> float:
        return change_pct(self.baseline.gb_per_w, self.optimised.gb_per_w)

    @property
    def io_per_w_change_pct(self) -> float:
        return change_pct(self.baseline.io_per_w, self.optimised.io_per_w)

    @property
    def fewer_drives(self) -> int:
        return self.baseline.drives - self.optimised.drives

    @property
    def fewer_enclosures(self) -> int:
        return self.baseline.enclosures - self.optimised.enclosures

    @property
    def capacity_savings_pct(self) -> float:
        """Physical capacity saved: the share of the baseline's drives no longer needed
        (the seed: "capacity savings = fewer drives")."""
        return 100 * self.fewer_drives / self.baseline.drives if self.baseline.drives else \
            math.nan

    @property
    def idle_power_savings_pct(self) -> float:
        return -change_pct(self.baseline.idle_w, self.optimised.idle_w)

    @property
    def active_power_savings_pct(self) -> float:
        return -change_pct(self.baseline.active_w, self.optimised.active_w)

    @property
    def iops_ratio(self) -> float:
        return self.optimised.iops / self.baseline.iops

    @property
    def capex_usd(self) -> float:
        r = self.rates
        return self.fewer_drives * r.drive_usd + self.fewer_enclosures * r.enclosure_usd

    @property
    def installed_w_saved(self) -> float:
        """Installed power no longer needed: the active (busy) power difference."""
        return self.baseline.active_w - self.optimised.active_w

    @property
    def opex_usd_per_month(self) -> float:
        return self.installed_w_saved / 10_000 * self.rates.opex_per_10kw_month_usd

    def scaled(self, kw: float) -> tuple[float, float]:
        """(CAPEX, OPEX per month) for an installation of ``kw`` kW built of systems like the
        tested one (the savings in proportion to its installed, active power)."""
        factor = kw * 1000 / self.baseline.active_w
        return self.capex_usd * factor, self.opex_usd_per_month * factor

    def rows(self) -> list[SavingsRow]:
        """The before/after comparison: the one table the CLI, the history view, the xlsx
        (full precision) and the PDF (as the seed prints it) all show."""
        b, o = self.baseline, self.optimised
        return [SavingsRow("Capacity (GB)", b.capacity_gb, o.capacity_gb, math.nan, "", 0),
                SavingsRow("Drives", b.drives, o.drives, -self.fewer_drives, "count", 0),
                SavingsRow("Enclosures", b.enclosures, o.enclosures, -self.fewer_enclosures,
                           "count", 0),
                SavingsRow("Idle power (W)", b.idle_w, o.idle_w, -self.idle_power_savings_pct,
                           "pct", 1),
                SavingsRow("Active power (W)", b.active_w, o.active_w,
                           -self.active_power_savings_pct, "pct", 1),
                SavingsRow("Capacity per idle watt (GB/W)", b.gb_per_w, o.gb_per_w,
                           self.gb_per_w_change_pct, "pct", 2),
                SavingsRow("Active IO rate (IOPS)", b.iops, o.iops, self.iops_ratio, "ratio",
                           0),
                SavingsRow("IOs per active watt (IO/W)", b.io_per_w, o.io_per_w,
                           self.io_per_w_change_pct, "pct", 2)]

    def cost_rows(self) -> list[CostRow]:
        """CAPEX and OPEX, each a number with its unit (the xlsx writes the numbers, the text
        views their words), then the rates they assume."""
        r = self.rates
        rows = [CostRow("Fewer drives", self.fewer_drives, "drives"),
                CostRow("Fewer enclosures", self.fewer_enclosures, "enclosures"),
                CostRow("CAPEX saved (tested system)", self.capex_usd, "USD"),
                CostRow("Less installed power", self.installed_w_saved, "W"),
                CostRow("OPEX saved (tested system)", self.opex_usd_per_month, "USD/month")]
        for kw in SCALE_KW:
            capex, opex = self.scaled(kw)
            rows += [CostRow(f"CAPEX saved, scaled to {kw:g} kW", capex, "USD"),
                     CostRow(f"OPEX saved, scaled to {kw:g} kW", opex, "USD/month")]
        return rows + [CostRow("Price per drive", r.drive_usd, "USD"),
                       CostRow("Price per enclosure", r.enclosure_usd, "USD"),
                       CostRow("OPEX per 10 kW installed", r.opex_per_10kw_month_usd,
                               "USD/month")]


@dataclass(frozen=True)
class CostRow:
    """One CAPEX/OPEX figure: a number and its unit (``USD``, ``USD/month``, ``W`` or a count's
    noun), shown whole as the seed prints money."""

    figure: str
    value: float
    unit: str

    @property
    def is_money(self) -> bool:
        return self.unit.startswith("USD")

    def text(self) -> str:
        """``$34,517``, ``-$45/month``, ``934 W``, ``20 drives``: never ``-0``."""
        whole = round(self.value)  # an int: a small negative rounds to 0, not -0
        if self.is_money:
            sign = "-" if whole < 0 else ""
            return f"{sign}${abs(whole):,}" + self.unit.removeprefix("USD")
        return f"{whole:,} {self.unit}"

    def texts(self) -> tuple[str, str]:
        return self.figure, self.text()
