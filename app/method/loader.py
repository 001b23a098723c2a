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
    """The file's keys over its ``base`` chain; a variant must state ``compliant`` itself so an
    abbreviated copy never inherits its base's compliance by accident."""
    if path in seen:
        raise MethodError(f"{path}: circular 'base' chain: {' -> '.join(map(str, seen))}")
    data = _read_toml(path)
    base_name = data.pop("base", None)
    if base_name is None:
        return data
    if not isinstance(base_name, str) or not base_name.endswith(".toml"):
        raise MethodError(f"{path}: key 'base': must name a method file like "
                          f"\"emerald-block-v3.toml\", got {base_name!r}")
    if "compliant" not in data:
        raise MethodError(f"{path}: key 'compliant': a variant must state compliant = false "
                          f"(or true) itself; it is not inherited from {base_name}")
    base_path = path.parent / base_name
    if not base_path.is_file():
        raise MethodError(f"{path}: key 'base': base file {base_path} not found")
    return _merge(_resolve(base_path, seen + (path,)), data)


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem: ``key 'a.0.b': reason`` (cross-reference checks name their own
    key inside the message)."""
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        if key:
            lines.append(f"  key '{key}': {message}")
        else:
            lines.extend(f"  {line}" for line in message.splitlines())
    return "\n".join(lines)


def load_method_file(path: Path) -> Method:
    """Load one method file (resolving its ``base`` chain) and validate it."""
    data = _resolve(Path(path))
    try:
        return Method.model_validate(data)
    except ValidationError as exc:
        raise MethodError(f"{path}: invalid method definition:\n{describe_validation_error(exc)}") from None


def method_files(directory: Path | None = None) -> list[Path]:
    folder = directory or methods_dir()
    return sorted(p for p in folder.glob("*.toml") if not p.name.startswith("taxonomy"))


@lru_cache(maxsize=None)
def _load_all(directory: Path) -> dict[str, Method]:
    methods: dict[str, Method] = {}
    origin: dict[str, Path] = {}
    for path in method_files(directory):
        method = load_method_file(path)
        if method.name in methods:
            raise MethodError(f"{path}: key 'name': {method.name!r} is already the name of "
                              f"{origin[method.name]}")
        methods[method.name], origin[method.name] = method, path
    for name, method in methods.items():
        if method.variant_of is not None and method.variant_of not in methods:
            raise MethodError(f"{origin[name]}: key 'variant_of': no method named "
                              f"{method.variant_of!r}; known: {', '.join(sorted(methods))}")
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
