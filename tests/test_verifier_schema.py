"""The published schema is the one the verifier checks (issue 37, "a published schema").

``docs/export-format.md`` ("Structure checked before use") prints, for ``manifest.json`` and
``run.json``, every field the verifier checks before it uses a byte of them — its path, its
type, whether it is required. The verifier declares that structure in one place
(``SCHEMAS``); this test reads the doc's tables and the declaration and requires them equal,
so neither can change alone. A bundle breaking a row is refused naming the member and the
field (tests/test_verifier_hostile.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.bundles import verifier_module

DOC = Path(__file__).resolve().parents[1] / "docs" / "export-format.md"
SECTION = "### Structure checked before use"
WORDS = {"str": "text", "int": "integer", "num": 'number, null, "inf" or "-inf"',
         "bool": "true or false", "obj": "object", "list": "list", "any": "any value"}


def _type(kind: str) -> str:
    base = kind.removesuffix("?")
    word = WORDS[base]
    return f"{word} or null" if kind.endswith("?") and base not in ("num", "any") else word


def schema_rows(schema: Any, prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """(field path, type, required) of every field ``schema`` names, in its order."""
    for key, inner in schema.items():
        name = key.removesuffix("?")
        path, required = prefix + name, "yes" if key == name else "no"
        if isinstance(inner, dict):
            yield path, "object", required
            yield from schema_rows(inner, path + ".")
        elif isinstance(inner, list) and isinstance(inner[0], dict):
            yield path, "list of objects", required
            yield from schema_rows(inner[0], path + "[].")
        elif isinstance(inner, list):
            items = "objects" if inner[0] == "obj" else _type(inner[0])
            yield path, f"list of {items}", required
        else:
            yield path, _type(inner), required


def doc_rows(member: str) -> list[tuple[str, str, str]]:
    """The rows of the doc's table for ``member``."""
    text = DOC.read_text(encoding="utf-8")
    assert SECTION in text, f"{DOC.name} lacks {SECTION!r}"
    section = text.split(SECTION, 1)[1]
    table = section.split(f"`{member}`:", 1)[1].split("\n\n", 2)[1]
    rows = []
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if match := re.fullmatch(r"`([^`]+)`", cells[0]):
            rows.append((match.group(1), cells[1], cells[2]))
    return rows


@pytest.mark.parametrize("member", ["manifest.json", "run.json"])
def test_the_docs_schema_table_is_the_one_the_verifier_checks(member: str) -> None:
    declared = list(schema_rows(verifier_module().SCHEMAS[member]))
    assert declared, member
    assert doc_rows(member) == declared


def test_a_bundle_missing_a_required_field_is_refused_naming_it() -> None:
    """Each required row of the table is enforced: dropping it is refused with its path."""
    verifier = verifier_module()
    manifest = {"format": "storwatt-bundle/2", "run_id": "r", "record_format": "f",
                "record_sha256": "h", "samples_sha256": None, "method_sha256": None,
                "files": {}}
    verifier.check_schema(manifest, verifier.SCHEMAS["manifest.json"], "manifest.json")
    for path, _, required in schema_rows(verifier.SCHEMAS["manifest.json"]):
        if required == "yes":
            partial = {k: v for k, v in manifest.items() if k != path}
            with pytest.raises(verifier.BundleError, match=f"manifest.json: field '{path}'"):
                verifier.check_schema(partial, verifier.SCHEMAS["manifest.json"],
                                      "manifest.json")
