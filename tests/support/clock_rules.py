"""The suite's two rules about time, checked on the test sources' syntax trees
(tests/test_suite_clock_rules.py runs them over ``tests/``):

* **No test asserts a wall-clock duration.** An ``assert`` that bounds a clock difference from
  above (``took < 1.0``, ``max(times) <= 0.2``) or pins it (``==``) fails on a busy machine
  and proves nothing about the station there (issue 36: a histogram merge "took 1.44 s,
  assert <= 0.2"; a run "lost although more than 1 s old"). A speed goal is a ``bench/`` row;
  a test may bound a duration from *below* (a real timeout lasted at least its length: load
  only stretches time), compare two durations it measured (a ratio: an order of growth), or
  give its wait a budgeted patience (the rule below).
* **No literal patience.** A waiting call's ``timeout=`` and a polling deadline
  (``time.monotonic() + N``) are written through the time budget
  (``tests/support/time_budget.py``), so they scale with the machine.

The Python a test hands a child process (pytester's ``makepyfile``, a ``textwrap.dedent``
script for ``python -c``) is checked by the same rules, at its lines in the test's file.

A *clock reading* is a call of ``time.monotonic``, ``time.perf_counter``, ``time.time``,
``time.process_time`` or ``time.thread_time`` (``_ns`` too), or a name assigned one; a
*duration* is the difference of two readings of the same clock, or any expression or name
computed from one (a list it was appended to, a function that returns one). A duration
divided by a duration is a ratio, not a duration.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

CLOCKS = {"monotonic", "perf_counter", "time", "process_time", "thread_time",
          "monotonic_ns", "perf_counter_ns", "time_ns", "process_time_ns", "thread_time_ns"}
#: the clocks a polling deadline is read on (``time.time() + 180`` is a skewed clock, not one)
DEADLINE_CLOCKS = {"monotonic", "perf_counter"}
#: the suite's helpers that return a duration measured in another module
#: (``tests/support/time_budget.py``)
DURATION_HELPERS = {"least_cpu_s"}
#: calls whose string argument is a child's Python source (checked by the same rules)
EMBEDDERS = {"makepyfile", "dedent"}
#: calls whose ``timeout=`` is the test's patience (not a limit of the station under test)
WAITS = {"waitSignal", "waitSignals", "waitUntil", "waitCallback", "waitExposed", "run",
         "check_output", "check_call", "communicate", "wait", "join", "read_until",
         "runpytest_subprocess", "create_connection", "acquire", "get"}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule}: {self.text}"


def _held_in(node: ast.Name | ast.Attribute) -> str:
    """The name a value is kept under: ``start`` or ``trial.kill_t`` → "kill_t"."""
    return node.id if isinstance(node, ast.Name) else node.attr


def _clock_of(node: ast.AST) -> str | None:
    """Which clock a call reads (``time.monotonic()`` → "monotonic"), else None."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name in CLOCKS and (not isinstance(func, ast.Attribute)
                           or getattr(func.value, "id", None) == "time"):
        return name.removesuffix("_ns")
    return None


class _Module:
    """The names of one module that hold clock readings or durations (a fixed point over
    its assignments, appends and returns: scope-blind, as a reviewer reads a test)."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.stamps: dict[str, str] = {}  # name → clock it holds a reading of
        self.durations = set(DURATION_HELPERS)  # names (and functions) that hold a duration
        for _ in range(4):
            before = (dict(self.stamps), set(self.durations))
            self._learn()
            if (self.stamps, self.durations) == before:
                break

    def _learn(self) -> None:
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names = [_held_in(n) for t in targets for n in ast.walk(t)
                         if isinstance(n, (ast.Name, ast.Attribute))]
                clock = self.reading(node.value)
                for name in names:
                    if clock:
                        self.stamps[name] = clock
                    if self.is_duration(node.value):
                        self.durations.add(name)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in {"append", "extend", "add"}
                  and isinstance(node.func.value, ast.Name)
                  and any(self.is_duration(a) for a in node.args)):
                self.durations.add(node.func.value.id)
            elif isinstance(node, ast.FunctionDef):
                if any(isinstance(r, ast.Return) and r.value is not None
                       and self.is_duration(r.value) for r in ast.walk(node)):
                    self.durations.add(node.name)

    def reading(self, node: ast.AST) -> str | None:
        """The clock ``node`` is a reading of (a call, a name holding one, or a reading plus
        or minus an offset), else None."""
        if (clock := _clock_of(node)) is not None:
            return clock
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.stamps.get(_held_in(node))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            left, right = self.reading(node.left), self.reading(node.right)
            if isinstance(node.op, ast.Add) or right is None:
                return left or right if (left is None) != (right is None) else None
        return None

    def is_duration(self, node: ast.AST) -> bool:
        if isinstance(node, (ast.Name, ast.Attribute)):
            return _held_in(node) in self.durations
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Sub):
                left, right = self.reading(node.left), self.reading(node.right)
                if left is not None and left == right:
                    return True  # two readings of one clock: a duration (different: an offset)
                if (left is None) != (right is None) and isinstance(
                        node.right if right is None else node.left,
                        (ast.Name, ast.Attribute)) and not _constant_name(
                        node.right if right is None else node.left):
                    return True  # a reading less a moment read elsewhere (a child's stamp)
            if isinstance(node.op, ast.Div) and self.is_duration(node.left) \
                    and self.is_duration(node.right):
                return False  # a ratio of two measured durations
            return self.is_duration(node.left) or self.is_duration(node.right)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in self.durations:
                return True
            return any(self.is_duration(a) for a in node.args)
        if isinstance(node, (ast.UnaryOp,)):
            return self.is_duration(node.operand)
        if isinstance(node, ast.Subscript):
            return self.is_duration(node.value)
        if isinstance(node, (ast.List, ast.Tuple)):
            return any(self.is_duration(e) for e in node.elts)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
            return self.is_duration(node.elt) or any(self.is_duration(g.iter)
                                                      for g in node.generators)
        return False


def wall_clock_assertions(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, source)`` of every assert bounding a duration from above or pinning it."""
    module = _Module(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assert):
            continue
        for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
            sides = [compare.left, *compare.comparators]
            for op, smaller, larger in zip(compare.ops, sides, sides[1:]):
                small, large = module.is_duration(smaller), module.is_duration(larger)
                if isinstance(op, (ast.Lt, ast.LtE)):
                    bounded = small and not large
                elif isinstance(op, (ast.Gt, ast.GtE)):
                    bounded = large and not small
                elif isinstance(op, (ast.Eq, ast.NotEq)):
                    bounded = small != large
                else:
                    bounded = False
                if bounded:
                    found.append((node.lineno, ast.unparse(compare)))
    return found


def _constant_name(node: ast.AST) -> bool:
    """``LOSS_WINDOW_S``, ``self.LIMIT``: a constant by the naming convention, an offset."""
    name = _held_in(node) if isinstance(node, (ast.Name, ast.Attribute)) else ""
    return name.isupper()


def _literal(node: ast.AST) -> bool:
    """A number written in the source (or arithmetic on numbers only)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) and _literal(node.right)
    return False


def literal_patience(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, source)`` of a waiting call's literal ``timeout=`` and of a polling deadline
    made of a clock reading plus a literal."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in WAITS:
                for keyword in node.keywords:
                    if keyword.arg == "timeout" and _literal(keyword.value):
                        found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            if (_clock_of(node.left) in DEADLINE_CLOCKS and _literal(node.right)) or \
                    (_clock_of(node.right) in DEADLINE_CLOCKS and _literal(node.left)):
                found.append((node.lineno, ast.unparse(node)))
    return found


def embedded_sources(tree: ast.Module) -> list[tuple[int, str]]:
    """``(line, source)`` of the Python a test hands a child: the strings given to pytester's
    ``makepyfile`` and to ``textwrap.dedent`` (a ``python -c`` script) that parse as Python.
    A child's test or script waits on the same machine as the test that started it."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in EMBEDDERS:
            continue
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                try:
                    ast.parse(textwrap.dedent(arg.value))
                except SyntaxError:
                    continue
                found.append((arg.lineno, textwrap.dedent(arg.value)))
    return found


def check_source(source: str, path: str = "<planted>", first_line: int = 1) -> list[Finding]:
    """Every finding in ``source`` and in the sources it embeds, by line in its file
    (``first_line``: the file's line the source starts on)."""
    tree = ast.parse(source)
    at = first_line - 1
    return ([Finding(path, at + line, "wall-clock duration asserted", text)
             for line, text in wall_clock_assertions(tree)]
            + [Finding(path, at + line, "literal patience (use tests/support/time_budget.py)",
                       text) for line, text in literal_patience(tree)]
            + [finding for line, inner in embedded_sources(tree)
               for finding in check_source(inner, path, at + line)])


def check_tree(root: Path) -> list[Finding]:
    """Every finding in the ``*.py`` files under ``root`` (the suite: ``tests/``)."""
    findings: list[Finding] = []
    for path in sorted(root.rglob("*.py")):
        findings += check_source(path.read_text(encoding="utf-8"), str(path.relative_to(
            root.parent)))
    return findings
