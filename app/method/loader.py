"""Load method files (TOML) into validated :class:`~app.method.model.Method` objects.

A variant names its ``base`` file and overrides keys; tables merge key by key, arrays replace
whole (so a variant restates a plan it shortens). Every error names the file, the key path
and the reason, because a lab editing a method file needs to know exactly what to fix.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from app.method.model import Method, MethodProblems
from app.method.registry import identify, registered
from app.core.paths import methods_dir, traces_dir
from drivers import guarded_file
from drivers.fio.replay import read_trace
from drivers.interfaces import WorkloadError


class MethodError(ValueError):
    """A method file is missing, unreadable or invalid; the message says where and why."""


#: a method file is a few kB (the largest shipped one 14 kB): anything beyond this is not one
MAX_METHOD_BYTES = 1 << 20
#: tables and arrays nested deeper than this are no method (the model nests 4 levels)
MAX_METHOD_DEPTH = 16


def _read_toml(path: Path) -> dict[str, Any]:
    """A method file's keys, read once from a regular file of bounded size and depth.

    Issue 25: a FIFO named as a method file hung every command, a link to /dev/zero ran out
    of memory at 4 GiB and 5000-deep arrays ended in a RecursionError traceback. So the file
    is read by the one guarded reader of named files (``drivers.guarded_file``): a regular
    file, at most :data:`MAX_METHOD_BYTES`, opened without waiting."""
    try:
        text = guarded_file.read_text(path, "method file", MAX_METHOD_BYTES)
    except guarded_file.GuardedFileError as exc:
        raise MethodError(str(exc)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MethodError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise MethodError(f"{path}: tables or arrays nested too deeply to be a method "
                          f"(at most {MAX_METHOD_DEPTH} levels)") from None
    if _depth(data) > MAX_METHOD_DEPTH:
        raise MethodError(f"{path}: tables or arrays nested more than {MAX_METHOD_DEPTH} "
                          "levels deep: not a method")
    return data


def _depth(value: Any) -> int:
    """How deeply tables and arrays nest in ``value`` (iterative: no recursion limit)."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        item, level = todo.pop()
        deepest = max(deepest, level)
        if level <= MAX_METHOD_DEPTH:
            children = item.values() if isinstance(item, dict) else \
                item if isinstance(item, list) else ()
            todo.extend((child, level + 1) for child in children)
    return deepest


#: which file set each key of a merged method: key path → file (tables key by key, arrays whole)
Origins = dict[tuple[str, ...], Path]


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _origins(data: dict[str, Any], path: Path, prefix: tuple[str, ...] = ()) -> Origins:
    found: Origins = {}
    for key, value in data.items():
        found[prefix + (key,)] = path
        if isinstance(value, dict):
            found.update(_origins(value, path, prefix + (key,)))
    return found


def _resolve(path: Path, seen: tuple[Path, ...] = ()) -> tuple[dict[str, Any], Origins]:
    """The file's keys over its ``base`` chain, and which file set each; a variant must state
    ``compliant`` itself so an abbreviated copy never inherits its base's compliance by
    accident, and may not set ``[compliance]`` (the minimums a run is judged against)."""
    if path.resolve() in {p.resolve() for p in seen}:  # `../x/a.toml` names a.toml too
        raise MethodError(f"{path}: circular 'base' chain: {' -> '.join(map(str, seen))}")
    data = _read_toml(path)
    base_name = data.pop("base", None)
    if base_name is None:
        return data, _origins(data, path)
    base_path = _base_path(path, base_name)
    if "compliant" not in data:
        raise MethodError(f"{path}: key 'compliant': a variant must state compliant = false "
                          f"(or true) itself; it is not inherited from {base_name}")
    if "compliance" in data:
        raise MethodError(f"{path}: key 'compliance': a variant may not set the compliance "
                          f"minimums; they are {base_name}'s alone (docs/method-notes.md §2, "
                          "§3), so a shortened run can never read as compliant")
    base, origins = _resolve(base_path, seen + (path,))
    return _merge(base, data), {**origins, **_origins(data, path)}


def _base_path(path: Path, base_name: object) -> Path:
    """The file a variant's ``base`` names: ``"x.toml"`` is a file beside the variant, any
    other name a shipped method (``"emerald-block-v3"``, ``"smoke"``), so a lab's variant
    can live anywhere and still build on the installed method."""
    if not isinstance(base_name, str) or not base_name.strip():
        raise MethodError(f"{path}: key 'base': must name a shipped method like "
                          f"\"emerald-block-v3\" or a method file beside this one like "
                          f"\"my-method.toml\", got {base_name!r}")
    if base_name.endswith(".toml"):
        beside = path.parent / base_name
        if not beside.is_file():
            raise MethodError(f"{path}: key 'base': base file {beside} not found")
        return beside
    shipped = _shipped_files()
    if base_name not in shipped:
        raise MethodError(f"{path}: key 'base': no shipped method named {base_name!r} "
                          f"(shipped: {', '.join(sorted(shipped)) or 'none'}; a file beside "
                          f"the variant is named with its .toml ending)")
    return shipped[base_name]


def _shipped_files() -> dict[str, Path]:
    """Shipped method name → its file (the ``name`` key each file states)."""
    found = {}
    for file in method_files(methods_dir()):
        name = _read_toml(file).get("name")
        if isinstance(name, str):
            found[name] = file
    return found


def describe_validation_error(exc: ValidationError,
                              where: Callable[[str], str] = lambda key: "") -> str:
    """One line per problem: ``key 'a.0.b': reason (got VALUE)``; ``where(key)`` may add
    which file set the key. Cross-key problems (:class:`MethodProblems`) name their keys."""
    lines = []
    errors = exc.errors()
    for err in errors:
        if _followed_from(err, errors):
            continue
        loc = ".".join(str(p) for p in err["loc"])
        cause = err.get("ctx", {}).get("error")
        if isinstance(cause, MethodProblems):
            for problem in cause.problems:
                keys = [".".join(filter(None, (loc, k))) for k in problem.keys]
                notes = "".join(where(k) for k in keys)
                lines.append(f"  key '{keys[0]}': {problem.why}{notes}")
            continue
        message = err["msg"].removeprefix("Value error, ")
        if loc:
            lines.append(f"  key '{loc}': {message}{_evidence(err)}{where(loc)}")
        else:
            lines.extend(f"  {line}" for line in message.splitlines())
    return "\n".join(lines)


def _followed_from(err: Any, errors: list[Any]) -> bool:
    """pydantic also calls a list with one invalid entry "too short": only the entry counts."""
    n = len(err["loc"])
    return err["type"] == "too_short" and any(
        len(other["loc"]) > n and other["loc"][:n] == err["loc"] for other in errors)


def _evidence(err: Any) -> str:
    """The offending value, when it is short enough to quote."""
    value = err.get("input")
    if err["type"] == "missing" or not isinstance(value, (bool, int, float, str, list)):
        return ""
    text = repr(value)
    return f" (got {text})" if len(text) <= 40 and text not in err["msg"] else ""


def load_method_file(path: Path) -> Method:
    """Load one method file (resolving its ``base`` chain) and validate it."""
    path = Path(path)
    data, origins = _resolve(path)
    files = sorted({str(f) for f in origins.values()})

    def where(key: str) -> str:
        """Which file set a key another file than ``path`` set, or (a missing key of a
        variant) that no file of the chain sets it."""
        parts = tuple(key.split("."))
        for n in range(len(parts), 0, -1):
            origin = origins.get(parts[:n])
            if origin is not None:
                return f" [{key} is set in {origin}]" if origin != path else ""
        return f" [set in none of {', '.join(files)}]" if len(files) > 1 else ""

    data = _resolve_traces(data, path, where)
    try:
        method = Method.model_validate(data)
    except ValidationError as exc:
        hint = ""
        missing = any(err["type"] == "missing" for err in exc.errors())
        if missing and len(files) == 1:
            example = f"{data['variant_of']}.toml" if isinstance(data.get("variant_of"), str) \
                else "emerald-block-v3.toml"
            hint = (f"\n  (no key 'base' in this file: a variant names its base file, "
                    f"e.g. base = \"{example}\", and inherits the keys it does not set)")
        raise MethodError(f"{path}: invalid method definition:\n"
                          f"{describe_validation_error(exc, where)}{hint}") from None
    _check_shipped_minimums(path, method, where)
    _check_registered(path, method)
    return method


def _check_registered(path: Path, method: Method) -> None:
    """A name and version on the registry of shipped compliant methods
    (:mod:`app.method.registry`) name that normative content and no other: a lab's copy that
    keeps the name and version but changes the method is refused, so it can never pass for the
    shipped method on a report (docs/method.md, versioning rule)."""
    entry = registered(method.name, method.version)
    if entry is None:
        return
    found = identify(method)
    if not found.differences:
        return
    raise MethodError(f"{path}: name {method.name!r} version {method.version!r} is a registered "
                      "compliant method, but this file's normative content differs from it "
                      "(give a variant its own name and version):\n" + "\n".join(
                          f"  key '{d.key}': {d.evidence(entry.label)}"
                          for d in found.differences))


def _resolve_traces(data: dict[str, Any], path: Path,
                    where: Callable[[str], str]) -> dict[str, Any]:
    """Each profile's ``trace`` as an absolute path, checked to be an fio iolog now rather
    than hours into a run. A relative path names a file in the station's traces folder (not
    beside the method file: a lab copies method files around, and a copy must replay the
    same trace). An error starts with the file loaded, like every other refusal, and names
    the file of the chain that set the trace (``where``)."""
    profiles = data.get("profiles")
    if not isinstance(profiles, list):
        return data
    resolved = []
    for i, profile in enumerate(profiles):
        trace = profile.get("trace") if isinstance(profile, dict) else None
        if isinstance(trace, str) and trace:
            full = (traces_dir() / trace).resolve()
            try:
                read_trace(str(full))
            except WorkloadError as exc:
                key = f"profiles.{i}.trace"
                raise MethodError(f"{path}: key '{key}': {exc}{where(key)}") from None
            profile = {**profile, "trace": str(full)}
        resolved.append(profile)
    return {**data, "profiles": resolved}


def _check_shipped_minimums(path: Path, method: Method,
                            where: Callable[[str], str]) -> None:
    """Outside the shipped folder a ``[compliance]`` table must equal a shipped method's: a lab
    may copy the compliant method (and its minimums) but not loosen the minimums a run is
    judged against, or a copy could declare 1 s intervals compliant (docs/method-notes.md §2,
    §3). Inside the folder the installation is the reference."""
    shipped_dir = methods_dir().resolve()
    if method.compliance is None or path.resolve().parent == shipped_dir:
        return
    shipped = sorted((m for m in _load_all(shipped_dir).values() if m.compliance is not None),
                     key=lambda m: m.variant_of is not None)  # the method, then its variants
    if any(m.compliance == method.compliance for m in shipped):
        return
    first = shipped[0].compliance if shipped else None  # (shipped holds none without one)
    reference = first.model_dump(mode="json") if first is not None else {}
    keys = _differences(method.compliance.model_dump(mode="json"), reference, "compliance")
    origin = f" ({shipped[0].name})" if shipped else ""
    raise MethodError(f"{path}: the compliance minimums may be copied but not changed outside "
                      f"{shipped_dir}:\n" + "\n".join(
                          f"  key '{key}': differs from the shipped compliance minimums"
                          f"{origin}{where(key)}" for key in keys))


def _differences(ours: Any, shipped: Any, key: str) -> list[str]:
    """The innermost keys where ``ours`` differs from ``shipped`` (JSON data)."""
    if isinstance(ours, dict) and isinstance(shipped, dict):
        return [d for k in sorted(ours.keys() | shipped.keys())
                for d in _differences(ours.get(k), shipped.get(k), f"{key}.{k}")]
    if isinstance(ours, list) and isinstance(shipped, list) and len(ours) == len(shipped):
        return [d for i, (a, b) in enumerate(zip(ours, shipped))
                for d in _differences(a, b, f"{key}.{i}")]
    return [] if ours == shipped else [key]


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
