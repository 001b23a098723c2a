"""The method as a run records it: the resolved text (base and variant merged) and its hash.

A run stores the method it actually ran, not a name to look up later: a lab's variant file
may be edited or deleted after the run, and the report must still say — and be computed
from — exactly what the run used. The text is canonical JSON of the validated model (keys
sorted, no spaces), so the same method always gives the same SHA-256.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from app.method.model import Method


def resolved_method(method: Method) -> dict[str, Any]:
    """The validated method as plain JSON data (every default filled in)."""
    return method.model_dump(mode="json")


def method_sha256(data: dict[str, Any]) -> str:
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def method_from_record(data: dict[str, Any]) -> Method:
    """Rebuild the method a run stored (validated again, so a damaged record fails loudly)."""
    return Method.model_validate(data)
