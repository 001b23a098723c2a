"""Load method files (TOML) into validated :class:`~app.method.model.Method` objects.

A variant names its ``base`` file and overrides keys; tables merge key by key, arrays replace
whole (so a variant restates a plan it shortens). Every error names the file, the key path
and the reason, because a lab editing a method file needs to know exactly what to fix.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.method.model import Method
from app.paths import methods_dir


class MethodError(ValueError):
    """A method file is missing, unreadable or invalid; the message says where and why."""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise MethodError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise MethodError(f"{path}: not valid TOML: {exc}") from None


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _resolve(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    if path in seen:
        raise MethodError(f"{path}: circular 'base' chain: {' -> '.join(map(str, seen))}")
    data = _read_toml(path)
    base_name = data.pop("base", None)
    if base_name is None:
        return data
    return _merge(_resolve(path.parent / base_name, seen + (path,)), data)


def _describe(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "(top level)"
        lines.append(f"  key '{key}': {err['msg']}")
    return "\n".join(lines)


def load_method_file(path: Path) -> Method:
    """Load one method file (resolving its ``base`` chain) and validate it."""
    data = _resolve(Path(path))
    try:
        return Method.model_validate(data)
    except ValidationError as exc:
        raise MethodError(f"{path}: invalid method definition:\n{_describe(exc)}") from None


def method_files(directory: Path | None = None) -> list[Path]:
    folder = directory or methods_dir()
    return sorted(p for p in folder.glob("*.toml") if not p.name.startswith("taxonomy"))


@lru_cache(maxsize=None)
def _load_all(directory: Path) -> dict[str, Method]:
    methods: dict[str, Method] = {}
    for path in method_files(directory):
        method = load_method_file(path)
        methods[method.name] = method
    return methods


def all_methods(directory: Path | None = None) -> dict[str, Method]:
    """Every method and variant in the folder, by name."""
    return dict(_load_all(directory or methods_dir()))


def load_method(name: str, directory: Path | None = None) -> Method:
    """A method by name (``emerald-block-v3``, ``demo``, ``smoke``) or by file path."""
    candidate = Path(name)
    if candidate.suffix == ".toml" and candidate.exists():
        return load_method_file(candidate)
    methods = all_methods(directory)
    if name not in methods:
        known = ", ".join(sorted(methods)) or "none"
        raise MethodError(f"unknown method {name!r}; known methods: {known}")
    return methods[name]
