"""The docs a newcomer navigates by must stay true to the tree.

``docs/architecture.md`` (the map of the rooms) and ``docs/domain-words.md`` (the lookup of
domain words) name files and the classes or functions in them (``path::Name``); a rename that
forgets the page would send a reader to nothing, so every named path must exist and every named
symbol must be defined there. The map names every room and answers its three questions with one
folder each. The code cites the project's own method notes, never a file outside the repository.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
DOMAIN_WORDS = ROOT / "docs" / "domain-words.md"
#: what a newcomer asks first; the map answers each with one folder (issue 31)
MAP_QUESTIONS = ("Where is the stability verdict computed?", "Where is a run stored?",
                 "Where does the report get its figures?")
NOTES = ROOT / "docs" / "method-notes.md"

#: a backticked repository path, optionally followed by ::Name or ::Class.method
PATH_REF = re.compile(r"`((?:app|ui|drivers|tests|bench|docs|resources|packaging|verifier)/"
                      r"[\w./*-]*)(?:::([\w.]+))?`")
MD_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
NOTES_SECTIONS = ("Taxonomy", "Test sequence", "Instruments", "Metrics",
                  "Response-time quality", "Other workloads in the seeds",
                  "fio facts that matter", "Instrument protocols", "fio driver traps",
                  "More facts")


def path_references(text: str) -> list[tuple[str, str | None]]:
    return [(m.group(1), m.group(2)) for m in PATH_REF.finditer(text)]


def defined_names(path: Path) -> set[str]:
    """Top-level names of a module, and ``Class.method`` for methods of its classes."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                names.update(f"{node.name}.{item.name}" for item in node.body
                             if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def broken_references(text: str, root: Path) -> list[str]:
    problems = []
    for rel, name in path_references(text):
        target = root / rel
        if "*" in rel:
            if not list(root.glob(rel)):
                problems.append(f"{rel}: matches no file")
            continue
        if not target.exists():
            problems.append(f"{rel}: no such file or folder")
        elif name and name not in defined_names(target):
            problems.append(f"{rel}::{name}: not defined in {rel}")
    return problems


@pytest.mark.parametrize("doc", [ARCHITECTURE, DOMAIN_WORDS], ids=lambda p: p.name)
def test_docs_name_only_existing_paths_and_symbols(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert broken_references(text, ROOT) == []


def test_the_domain_word_table_names_its_modules() -> None:
    assert len(path_references(DOMAIN_WORDS.read_text(encoding="utf-8"))) > 40


def test_the_map_names_every_room() -> None:
    """A room (a sub-folder of ``app/`` or ``ui/``) the map leaves out is a room no newcomer
    finds: each has its line."""
    named = {rel for rel, _ in path_references(ARCHITECTURE.read_text(encoding="utf-8"))}
    rooms = {f"{p.parent.relative_to(ROOT)}/" for package in ("app", "ui")
             for p in (ROOT / package).glob("*/__init__.py")}
    assert sorted(rooms - named) == []


def map_answers(text: str) -> dict[str, list[str]]:
    """Each question of the map with the folders its answer names before its first dash."""
    answers = {}
    for question in MAP_QUESTIONS:
        line = next((ln for ln in text.splitlines() if question in ln), "")
        head = line.split(question, 1)[-1].split("—", 1)[0]
        answers[question] = [rel for rel, _ in path_references(head) if rel.endswith("/")]
    return answers


def test_the_map_answers_each_question_with_one_folder() -> None:
    answers = map_answers(ARCHITECTURE.read_text(encoding="utf-8"))
    assert all(len(folders) == 1 and (ROOT / folders[0]).is_dir()
               for folders in answers.values()), answers


def test_the_answer_check_sees_a_vague_answer() -> None:
    text = ("- **Where is a run stored?** `app/storage/` and `app/station/` — both\n"
            "- **Where is the stability verdict computed?** `app/metrics/` — here\n")
    answers = map_answers(text)
    assert answers["Where is a run stored?"] == ["app/storage/", "app/station/"]
    assert answers["Where is the stability verdict computed?"] == ["app/metrics/"]
    assert answers["Where does the report get its figures?"] == []


def test_the_check_sees_a_stale_path_and_a_renamed_symbol(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "mod.py").write_text("class Kept:\n    def run(self): ...\n")
    text = ("`app/mod.py::Kept` `app/mod.py::Kept.run` `app/mod.py::Gone` "
            "`app/missing.py` `app/*.toml`")
    assert broken_references(text, tmp_path) == [
        "app/mod.py::Gone: not defined in app/mod.py",
        "app/missing.py: no such file or folder",
        "app/*.toml: matches no file",
    ]


USER_DOCS = [ROOT / "docs" / name for name in ("user-guide.md", "troubleshooting.md",
                                                "glossary.md")]


@pytest.mark.parametrize("doc", [ARCHITECTURE, DOMAIN_WORDS, NOTES, ROOT / "README.md",
                                 *USER_DOCS], ids=lambda p: p.name)
def test_relative_links_resolve(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = [link for link in MD_LINK.findall(text)
               if "://" not in link and not (doc.parent / link).exists()]
    assert missing == []


def test_readme_links_the_architecture_and_the_method_notes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/architecture.md" in readme and "docs/method-notes.md" in readme


def test_method_notes_keep_the_cited_section_numbers() -> None:
    headings = re.findall(r"^## (\d+)\. (.+)$", NOTES.read_text(encoding="utf-8"), re.M)
    assert headings == [(str(i), title) for i, title in enumerate(NOTES_SECTIONS, start=1)]


def test_citations_point_into_the_repository() -> None:
    """Sources outside the repository cannot be followed by a reader: cite method-notes."""
    outside = ("SPEC" + "-NOTES", "../" + "shared")
    offenders = []
    for folder in ("app", "ui", "drivers", "tests", "bench", "docs", "packaging", "resources",
                   "verifier"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in {".py", ".md", ".toml", ".json", ".yaml", ".sh", ".spec"}:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            offenders += [f"{path.relative_to(ROOT)}: {word}" for word in outside if word in text]
    assert offenders == []


def test_the_install_guides_self_test_sample_names_the_schema_head() -> None:
    """docs/install.md shows what ``storwatt --self-test`` prints; its schema line said 0011
    for ten revisions (issue 41): the sample follows the migrations' head."""
    from app.storage import migrate

    shown = re.findall(r"database\s+schema (\d{4})", (ROOT / "docs" / "install.md")
                       .read_text(encoding="utf-8"))
    assert shown == [migrate.head()]
