"""Growable numpy buffers for live plot data.

Why: a 24 h run at 1 Hz is 86 400 points per curve; appending to Python lists and converting on
every redraw would cost more than the redraw itself. A series keeps preallocated float64 arrays
and doubles them when full (amortised O(1) per sample), and hands out *views* for plotting, so
the redraw timer never copies or re-reads the database.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_INITIAL_CAPACITY = 4096


class GrowableSeries:
    """An (x, y) series that grows by doubling; ``x`` must be non-decreasing for clip-to-view."""

    __slots__ = ("_x", "_y", "_n", "generation")

    def __init__(self, capacity: int = _INITIAL_CAPACITY) -> None:
        self._x = np.empty(max(1, capacity), dtype=np.float64)
        self._y = np.empty(max(1, capacity), dtype=np.float64)
        self._n = 0
        #: counts :meth:`clear` calls, so what is derived from the samples (``ui.plots.envelope``)
        #: knows they were replaced
        self.generation = 0

    def __len__(self) -> int:
        return self._n

    @property
    def capacity(self) -> int:
        return self._x.size

    def _reserve(self, extra: int) -> None:
        need = self._n + extra
        if need <= self._x.size:
            return
        size = self._x.size
        while size < need:
            size *= 2
        for name in ("_x", "_y"):
            old = getattr(self, name)
            grown = np.empty(size, dtype=np.float64)
            grown[: self._n] = old[: self._n]
            setattr(self, name, grown)

    def append(self, x: float, y: float) -> None:
        self._reserve(1)
        self._x[self._n] = x
        self._y[self._n] = y
        self._n += 1

    def extend(self, xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> None:
        xs = np.asarray(xs, dtype=np.float64)
        ys = np.asarray(ys, dtype=np.float64)
        if xs.shape != ys.shape:
            raise ValueError(f"x and y differ in length ({xs.size} vs {ys.size})")
        self._reserve(xs.size)
        self._x[self._n: self._n + xs.size] = xs
        self._y[self._n: self._n + ys.size] = ys
        self._n += xs.size

    def break_line(self, x: float) -> None:
        """Insert a gap (NaN) so a curve drawn with ``connect='finite'`` does not join two
        phases with a misleading straight line."""
        if self._n and self._y[self._n - 1] == self._y[self._n - 1]:
            self.append(x, float("nan"))

    def view(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the filled part (no copy)."""
        x, y = self._x[: self._n], self._y[: self._n]
        x.flags.writeable = False
        y.flags.writeable = False
        return x, y

    def clear(self) -> None:
        self._n = 0
        self.generation += 1
