"""How many bytes an object keeps alive: its own and everything it alone reaches."""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterable


def retained_bytes(root: object, shared: Iterable[object] = ()) -> int:
    """``sys.getsizeof`` summed over every object reachable from ``root``, not counting
    ``shared`` objects (and what only they reach), classes, modules and functions: those
    belong to the program, not to the object measured."""
    seen = {id(o) for o in shared}
    stack, total = [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, types.ModuleType, types.FunctionType)):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        stack.extend(gc.get_referents(obj))
    return total
