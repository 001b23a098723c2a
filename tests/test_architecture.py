"""Contract: the domain core and the drivers never import Qt or the GUI (brief: ui → app → drivers),
and the project's own modules are imported by ``import`` statements only, so this scan sees
every edge (a module named in a string would slip past it)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN_IN_CORE = ("PySide6", "pyqtgraph", "ui", "shiboken6")
FORBIDDEN_IN_DRIVERS = FORBIDDEN_IN_CORE + ("app", "sqlalchemy", "alembic")
#: the measurement core is pure numbers: it takes samples and bins, never a driver (issue 13)
FORBIDDEN_IN_METRICS = FORBIDDEN_IN_CORE + ("drivers", "sqlalchemy")
#: the product never reaches into the benchmarks (issue 13): they measure it, it does not use them;
#: nor into the documentation tooling (``tools/``, issue 31): it shows the product, it is not
#: part of it
FORBIDDEN_IN_UI = ("bench", "tests", "tools")
PROJECT_PACKAGES = ("app", "ui", "drivers", "tools")
DYNAMIC_IMPORTERS = ("import_module", "__import__")


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package,forbidden", [("app", FORBIDDEN_IN_CORE + FORBIDDEN_IN_UI),
                                               ("app/metrics", FORBIDDEN_IN_METRICS),
                                               ("drivers", FORBIDDEN_IN_DRIVERS
                                                + FORBIDDEN_IN_UI),
                                               ("ui", FORBIDDEN_IN_UI)])
def test_layer_never_imports_upwards(package: str, forbidden: tuple[str, ...]) -> None:
    offenders = {
        str(p.relative_to(ROOT)): sorted(imported_roots(p) & set(forbidden))
        for p in python_files(package)
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"layering violated: {offenders}"


def test_checker_sees_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from PySide6.QtCore import QObject\nimport ui.main\n")
    assert {"PySide6", "ui"} <= imported_roots(bad)


def string_imports(path: Path) -> list[str]:
    """Calls that import a module named at run time: ``importlib.import_module(x)``,
    ``import_module(x)``, ``__import__(x)``. A literal naming a third-party module is allowed;
    a project module or a computed name (which could be one) is reported as ``line: source``."""
    source = path.read_text(encoding="utf-8")
    found = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in DYNAMIC_IMPORTERS:
            continue
        target = node.args[0]
        literal = target.value if isinstance(target, ast.Constant) else None
        if isinstance(literal, str) and literal.split(".")[0] not in PROJECT_PACKAGES:
            continue
        found.append(f"{node.lineno}: {ast.get_source_segment(source, node)}")
    return found


def test_project_modules_are_never_imported_by_name() -> None:
    offenders = {str(p.relative_to(ROOT)): string_imports(p)
                 for package in PROJECT_PACKAGES for p in python_files(package)}
    offenders = {k: v for k, v in offenders.items() if v}
    assert not offenders, f"import these with an import statement instead: {offenders}"


def test_checker_sees_a_string_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import importlib\nfrom importlib import import_module\n"
                   "importlib.import_module('ui.app')\nimport_module(f'app.cli.{name}')\n"
                   "__import__('drivers.fio')\nimportlib.import_module('PySide6.QtSvg')\n")
    assert [line.split(":")[0] for line in string_imports(bad)] == ["3", "4", "5"]


def test_one_simulators_folder() -> None:
    """Every simulator lives in ``drivers/simulators/``: a reader looking for "the simulator"
    finds one folder, not ``drivers/sim/`` beside it (issue 13)."""
    packages = sorted(str(p.parent.relative_to(ROOT))
                      for p in (ROOT / "drivers").rglob("__init__.py") if "sim" in p.parent.name)
    assert packages == ["drivers/simulators"]


def test_in_process_meters_never_identify_as_a_real_instrument() -> None:
    """A run on the in-process meters must never be mistaken for one on real hardware: their
    identity names StorWatt and a SIM model, and the driver field says ``sim``."""
    from drivers.simulators.direct_meters import SimulatedPowerMeter, SimulatedThermometer
    from drivers.simulators.sut import SimulatedSut

    sut = SimulatedSut()
    for meter in (SimulatedPowerMeter(sut), SimulatedThermometer(sut)):
        identity = meter.open()
        assert identity.vendor == "StorWatt" and identity.model.startswith("SIM-")
        assert identity.driver == "sim"


def test_no_module_reads_as_a_serial_port() -> None:
    """In an instrument application "COM" reads as a serial port: the capacity-optimisation
    checks live in a module named for what they are (issue 13)."""
    assert not sorted(str(p.relative_to(ROOT)) for package in PROJECT_PACKAGES
                      for p in python_files(package) if p.stem.lower() == "com")


#: top-level names kept without a production caller, and why
KEPT_WITHOUT_CALLER = {
    # PTS steady state (method-notes §5): a tested library piece whose user, the PTS
    # pre-conditioning of the workloads issue, is planned; docs/domain-words.md says so
    ("app/metrics/steady_state.py", "steady_state"),
    # alembic calls a migration's upgrade/downgrade by name
    ("app/storage/migrations/versions/v0001_initial.py", "downgrade"),
}


def top_level_names(path: Path) -> list[str]:
    names = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(d, ast.Attribute) and d.attr == "on" for d in node.decorator_list):
            continue  # an event handler, called through the EventTable it is registered in
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names.extend(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [n for n in names if not n.startswith("__")]


def test_no_dead_top_level_code() -> None:
    """Every top-level function, class and constant of the product is used by the product: a
    name defined once and named nowhere else (re-exports in ``__init__`` and tests do not
    count) is dead code a reader has to read for nothing (issue 13)."""
    files = [p for package in PROJECT_PACKAGES for p in python_files(package)]
    # each file's words counted once: a name is an identifier, so its ``\bname\b`` matches are
    # exactly the \w+ runs equal to it (one regex per name and file took 6 s of CPU)
    words = {p: Counter(re.findall(r"\w+", p.read_text(encoding="utf-8"))) for p in files}
    users = [p for p in files if p.name != "__init__.py"]
    dead = []
    for path in files:
        rel = str(path.relative_to(ROOT))
        for name in top_level_names(path):
            if (rel, name) in KEPT_WITHOUT_CALLER or words[path][name] > 1:
                continue
            if not any(name in words[p] for p in users if p != path):
                dead.append(f"{rel}::{name}")
    assert not dead, f"defined but used nowhere in app/ui/drivers/tools: {dead}"


# --- import cycles (issue 31) -------------------------------------------------------------------

GRAPH_ROOTS = ("app", "ui", "drivers", "verifier", "tools")


@dataclass(frozen=True)
class ImportEdge:
    """``source`` imports ``target`` at ``line``; ``function`` names the function the import
    statement sits in (None: it runs when the module loads, ``if TYPE_CHECKING`` included)."""

    source: str
    target: str
    line: int
    function: str | None


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name → file, for every module of the product (a package is its
    ``__init__``)."""
    modules = {}
    for package in GRAPH_ROOTS:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The project module ``name`` loads: itself, or the nearest package above it."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, module: str,
             modules: dict[str, Path]) -> list[str | None]:
    if isinstance(node, ast.Import):
        return [_known(alias.name, modules) for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".")
        if modules[module].name != "__init__.py":
            package.pop()
        package = package[:len(package) - node.level + 1]
        base = ".".join(package + ([base] if base else []))
    # ``from pkg import name``: the submodule ``pkg.name`` when there is one, else ``pkg``
    return [_known(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base,
                   modules) for alias in node.names]


def import_edges(modules: dict[str, Path]) -> list[ImportEdge]:
    """Every import statement of every module, wherever it sits (module level, class body,
    function body, ``if TYPE_CHECKING``, ``try``): each is an edge of the graph."""
    return [edge for module, path in modules.items()
            for edge in _edges_of(module, path, modules)]


def _edges_of(module: str, path: Path, modules: dict[str, Path]) -> list[ImportEdge]:
    edges: list[ImportEdge] = []

    def visit(node: ast.AST, function: str | None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                edges.extend(ImportEdge(module, target, child.lineno, function)
                             for target in _targets(child, module, modules)
                             if target and target != module)
            inner = child.name if isinstance(child, (ast.FunctionDef,
                                                     ast.AsyncFunctionDef)) else None
            visit(child, function or inner)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), None)
    return edges


def package_of(module: str) -> str:
    """The folder a module lives in, one level below its root (``app.storage``,
    ``drivers.meters``; sub-folders belong to it); a loose module at the top of a root is its
    own node (``app.rules.compliance``, ``drivers.interfaces``)."""
    return ".".join(module.split(".")[:2])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle, as a closed chain of nodes, per strongly connected group of ``graph``
    (Tarjan's algorithm, then the shortest way round from the group's first node); the
    group's other members follow the chain."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_shortest_round(graph, group) + sorted(group - set(_shortest_round(graph, group)))
            for group in groups]


def _shortest_round(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph.get(node, set()) & group):
                if nxt == start:
                    chain = [node]
                    while chain[-1] != start:
                        chain.append(came_from[chain[-1]])
                    return [*reversed(chain), start]
                if nxt not in came_from:
                    came_from[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no way round {sorted(group)}")  # a group always has one


def module_graph(edges: list[ImportEdge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
    return graph


def package_graph(edges: list[ImportEdge]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for edge in edges:
        source, target = package_of(edge.source), package_of(edge.target)
        if source != target:
            graph.setdefault(source, set()).add(target)
    return graph


def described(found: list[list[str]], edges: list[ImportEdge], by: Any) -> str:
    """Each cycle as ``a → b → a``, every step with the import statements that make it."""
    lines = []
    for group in found:
        chain = group[:group.index(group[0], 1) + 1]
        lines.append(" → ".join(chain) + (f"  (tangled with it: {', '.join(group[len(chain):])})"
                                          if len(group) > len(chain) else ""))
        for source, target in zip(chain, chain[1:]):
            where = sorted({f"{e.source}:{e.line}" + (f" (in {e.function})" if e.function
                                                       else "")
                            for e in edges if by(e.source) == source and by(e.target) == target})
            lines.append(f"    {source} → {target}: {', '.join(where)}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def edges() -> list[ImportEdge]:
    return import_edges(project_modules())


def test_no_import_cycle_between_modules(edges: list[ImportEdge]) -> None:
    """A cycle between modules is one tangle a reader must take in whole, and a function-level
    import that holds it together only hides it (issue 31): every import statement counts."""
    found = cycles(module_graph(edges))
    if found:
        pytest.fail("import cycles between modules:\n" + described(found, edges, str))


def test_no_import_cycle_between_packages(edges: list[ImportEdge]) -> None:
    """Folders form floors: a folder (or a loose top-level module) that imports from another
    is never imported back by it (issue 31)."""
    found = cycles(package_graph(edges))
    if found:
        pytest.fail("import cycles between packages:\n" + described(found, edges, package_of))


def test_cycle_finder_names_the_chain() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": {"b"}, "e": {"a"}}
    assert cycles(graph) == [["a", "b", "c", "a", "d"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_imports_are_edges(tmp_path: Path) -> None:
    for package in GRAPH_ROOTS:
        (tmp_path / package).mkdir()
    (tmp_path / "app" / "__init__.py").write_text("")
    (tmp_path / "app" / "low.py").write_text("def f():\n    from app import high\n")
    (tmp_path / "app" / "high.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import low\n")
    found = import_edges(project_modules(tmp_path))
    assert ImportEdge("app.low", "app.high", 2, "f") in found
    assert ImportEdge("app.high", "app.low", 3, None) in found
    assert cycles(module_graph(found)) == [["app.high", "app.low", "app.high"]]


#: function-level imports of project modules, allowed only where start-up time needs them:
#: module → (why, the functions that may import inside themselves)
CLI_DISPATCH = ("a sub-command loads the database, report, numeric and method libraries only "
                "when it runs, so `storwatt --version` and `--help` stay light "
                "(tests/test_cli_startup.py)")
GUI_FIRST_PAINT = ("the history, the wizard and the report libraries load when first used, "
                   "not before the start page is painted (tests/test_cli_startup.py)")
AFTER_QAPPLICATION = ("windows with plots are imported once the QApplication exists: "
                      "pyqtgraph reads the application's palette when it loads")
DEFERRED_IMPORTS = {
    **{module: (CLI_DISPATCH, functions) for module, functions in {
        "app.cli.main": ("_command",),
        "app.cli.cmd_audit": ("add_command", "list_command"),
        "app.cli.cmd_db_roles": ("_apply", "roles_command"),
        "app.cli.cmd_db": ("_lab_pair", "copy_command", "info_command", "recover_command",
                           "status_command", "sync_command", "upgrade_command"),
        "app.cli.cmd_family": ("list_command", "sweet_spot_command"),
        "app.cli.cmd_instruments": ("_read", "drivers_command", "sim_meter_command"),
        "app.cli.cmd_rails": ("read_command", "sim_command"),
        "app.cli.cmd_methods": ("_guarded", "_header", "_numbers_verdict", "classify_command",
                                "list_command", "show_command", "taxonomy_list_command"),
        "app.cli.cmd_report": ("report_command",),
        "app.cli.cmd_run": ("_classification_reason", "_confirm_range_plan", "_declared_sut",
                            "_finish", "_message", "_resumed_session", "_typed_settings",
                            "_with_station_calibration", "_write_reports", "config_from_args",
                            "entries_from_args", "run_command"),
        "app.cli.cmd_runs": ("_run_text", "list_command", "run_json", "show_command"),
        "app.cli.cmd_savings": ("savings_command",),
        "app.cli.cmd_signoff": ("_append", "approve_command", "com_command", "on_lab"),
        "app.cli.cmd_station": ("_shown", "lab_db_command"),
        "ui.cli": ("gui_command",),
    }.items()},
    "ui.shell.main_window": (GUI_FIRST_PAINT, ("new_run", "show_history")),
    "ui.widgets.report_export": (GUI_FIRST_PAINT, ("ask_report_path", "export")),
    "ui.app": (AFTER_QAPPLICATION, ("run_gui",)),
    "tools.screenshots": (AFTER_QAPPLICATION, ("capture", "capture_live_hosts",
                                            "capture_power_inputs")),
}


def test_function_level_imports_only_where_start_up_needs_them(edges: list[ImportEdge]) -> None:
    """An import inside a function is a late edge a reader does not see at the top of the
    module; it is allowed only to keep start-up light, and every such place is listed in
    ``DEFERRED_IMPORTS`` with its reason (issue 31)."""
    found = sorted({f"{e.source}:{e.line} in {e.function} imports {e.target}" for e in edges
                    if e.function and e.function not in DEFERRED_IMPORTS.get(e.source,
                                                                             ("", ()))[1]})
    if found:
        pytest.fail("import these at the top of the module (or, for start-up time, list "
                    "them in DEFERRED_IMPORTS):\n" + "\n".join(found))


#: the app modules that may import concrete drivers, and why; every other app module works
#: against ``drivers.interfaces`` and ``drivers.clock`` only (drivers/interfaces.py says so)
DRIVER_ASSEMBLY = {
    "app.labs.builder": "puts the station's meters, PTDaemons and workload engine together",
    "app.labs.local_fio": "builds the fio engine and checks its targets for a run",
    "app.labs.simulated": "builds the simulated SUT, meters and engine of a simulated run",
    "app.cli.cmd_instruments": "talks to one instrument or simulator from the command line",
    "app.cli.cmd_rails": "scans a rail DAQ (or its simulator) to check a current-sensor board",
    "app.cli.cmd_run": "names fio's target-size rule in a refused run's message",
    "app.method.loader": "checks a replay profile's trace with fio's own trace reader",
}
#: what app may use of drivers anywhere: the interfaces, the clock, and the one guarded reader
#: of a named file (issue 40: the trace reader in drivers needs it, so it stands lowest)
DRIVER_CONTRACT = ("drivers", "drivers.interfaces", "drivers.clock", "drivers.guarded_file")


def test_app_uses_concrete_drivers_only_where_it_assembles_them(edges: list[ImportEdge]) -> None:
    found = sorted({f"{e.source}:{e.line} imports {e.target}" for e in edges
                    if e.source.startswith("app.") and e.target.startswith("drivers")
                    and e.target not in DRIVER_CONTRACT and e.source not in DRIVER_ASSEMBLY})
    if found:
        pytest.fail("app imports a concrete driver outside the assembly modules (use "
                    "drivers.interfaces, or list the module in DRIVER_ASSEMBLY):\n"
                    + "\n".join(found))


def test_deferred_imports_list_nothing_stale(edges: list[ImportEdge]) -> None:
    """A function taken off the list when its late import goes, so the list stays the map of
    every late edge."""
    present = {(e.source, e.function) for e in edges if e.function}
    stale = sorted(f"{module}.{function}" for module, (_, functions) in DEFERRED_IMPORTS.items()
                   for function in functions if (module, function) not in present)
    assert not stale, f"listed in DEFERRED_IMPORTS but importing nothing late: {stale}"


#: the only modules loose at the top of ``app/`` and ``ui/``, and why each stands there: everything
#: else lives in a room (a sub-folder) that says what it is, so the top folder and one sub-folder
#: lead to any behaviour (issue 31; docs/architecture.md is the map of the rooms)
ENTRY_POINTS = {
    "app/__init__.py": "the package's face: __version__, which packaging and the CLI read",
    "ui/__init__.py": "the package's face",
    "ui/__main__.py": "`python -m ui`: the GUI without the CLI wrapper",
    "ui/app.py": "launches the GUI (one QApplication, the main window) for `storwatt gui`",
    "ui/cli.py": "the installed `storwatt` command (pyproject's scripts): app's commands + gui",
}

#: the rooms of each package in data-flow order: a room imports only rooms before it (issue 31)
ROOMS = {
    "app": ("core", "method", "metrics", "sequencer", "labs", "rules", "storage", "signoff",
            "reports", "station", "cli"),
    "ui": ("widgets", "plots", "run", "history", "wizard", "shell"),
}

#: imports that still run back up the flow: none since the import cycles were broken (issue 31);
#: a row here would be (importing file, room imported), struck when its import goes
KNOWN_BACK_ARROWS: set[tuple[str, str]] = set()


def loose_modules(root: Path, package: str) -> list[str]:
    return sorted(f"{package}/{p.name}" for p in (root / package).glob("*.py"))


def test_no_project_module_is_loose_at_the_top_of_app_or_ui() -> None:
    loose = [m for package in ("app", "ui") for m in loose_modules(ROOT, package)]
    assert [m for m in loose if m not in ENTRY_POINTS] == [], (
        "put these modules in a room of docs/architecture.md (or list a true entry point)")
    assert sorted(ENTRY_POINTS) == sorted(m for m in loose if m in ENTRY_POINTS), (
        "an entry point listed here is gone: strike it from ENTRY_POINTS")


def test_the_loose_module_check_sees_one(tmp_path: Path) -> None:
    (tmp_path / "app" / "core").mkdir(parents=True)
    for name in ("app/__init__.py", "app/labs.py", "app/core/records.py"):
        (tmp_path / name).write_text("")
    assert [m for m in loose_modules(tmp_path, "app") if m not in ENTRY_POINTS] == ["app/labs.py"]


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, function-level and type-only imports included: an import
    inside a function is an edge all the same."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def back_arrows(root: Path, package: str, rooms: tuple[str, ...]) -> set[tuple[str, str]]:
    """(file, room) for each import of a room that comes later in the flow than the file's own."""
    arrows = set()
    for path in sorted((root / package).glob("*/**/*.py")):
        own = path.relative_to(root / package).parts[0]
        if own not in rooms:
            continue
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[0] == package and len(parts) > 1 and parts[1] in rooms \
                    and rooms.index(parts[1]) > rooms.index(own):
                arrows.add((str(path.relative_to(root)), f"{package}/{parts[1]}"))
    return arrows


@pytest.mark.parametrize("package", sorted(ROOMS))
def test_every_room_has_its_place_in_the_flow(package: str) -> None:
    folders = sorted(p.parent.name for p in (ROOT / package).glob("*/__init__.py"))
    assert folders == sorted(ROOMS[package]), "place a new room in ROOMS and in the map"


@pytest.mark.parametrize("package", sorted(ROOMS))
def test_no_arrow_runs_back_up_the_flow(package: str) -> None:
    arrows = back_arrows(ROOT, package, ROOMS[package])
    known = {row for row in KNOWN_BACK_ARROWS if row[0].startswith(f"{package}/")}
    assert sorted(arrows - known) == [], "an import runs against the data flow"
    assert sorted(known - arrows) == [], "this import is gone: strike it from KNOWN_BACK_ARROWS"


def test_the_flow_check_sees_an_arrow_back_up(tmp_path: Path) -> None:
    for room in ("core", "storage"):
        (tmp_path / "app" / room).mkdir(parents=True)
        (tmp_path / "app" / room / "__init__.py").write_text("")
    (tmp_path / "app" / "core" / "records.py").write_text(
        "def f():\n    from app.storage.db import Database\n")
    (tmp_path / "app" / "storage" / "db.py").write_text("from app.core.records import f\n")
    assert back_arrows(tmp_path, "app", ("core", "storage")) == {
        ("app/core/records.py", "app/storage")}
