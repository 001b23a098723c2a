"""When two or more stored runs may be set side by side, and what a reader must be told.

Compare, COM savings and best foot forward all put one run's figures against another's. A
figure of a different method or variant is not the same measurement; a SIMULATED run measured
nothing; a NON-COMPLIANT run's figures are not reportable. Those views differ in what they do
with such runs — compare shows them under a warning, savings and sweet spots warn on every
table and file they write — but the words come from here, so the GUI, the CLI and the exported
files cannot disagree about why a comparison is weak (issue 41).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from app.rules.compliance import ComplianceVerdict


class ComparedRun(Protocol):
    """What the caveats read of a run (a stored run has all of it)."""

    @property
    def run_id(self) -> str: ...

    @property
    def method_name(self) -> str: ...

    @property
    def method_version(self) -> str: ...

    @property
    def compliance(self) -> ComplianceVerdict: ...


def mixed_methods_caveat(runs: Sequence[ComparedRun]) -> str:
    """'' when every run used the same method and version; else what differs, each with its
    derived verdict."""
    if len({(r.method_name, r.method_version) for r in runs}) < 2:
        return ""
    variants = list(dict.fromkeys(r.compliance.method_label(r.method_name, r.method_version)
                                  for r in runs))
    return ("⚠ These runs used different methods or variants (" + " · ".join(variants)
            + "): their figures are not the same measurement — compare with care.")


def run_caveat(run: ComparedRun) -> str:
    """'' for a COMPLIANT run; else why its figures carry no weight in a comparison."""
    verdict = run.compliance
    if verdict.simulated:
        return (f"⚠ Run {run.run_id[:8]} is SIMULATED: its figures are a rehearsal, not a "
                "measurement.")
    if not verdict.compliant:
        return (f"⚠ Run {run.run_id[:8]} is {verdict.short()}: its figures are not a "
                "reportable result.")
    return ""


def comparison_caveats(runs: Sequence[ComparedRun]) -> tuple[str, ...]:
    """Every reason a comparison of ``runs`` is weak, in reading order: the method first, then
    each run's verdict (empty: the comparison stands)."""
    found = [mixed_methods_caveat(runs), *(run_caveat(r) for r in runs)]
    return tuple(text for text in found if text)
