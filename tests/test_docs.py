"""The docs name what exists: every `zoo.x` / `harness.x` name in them imports, every repository
path in them is a file or folder, every module has a docstring, and docs/ARCHITECTURE.md names
every package."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"
DOTTED = re.compile(r"`((?:zoo|harness)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")
# a path inside the repository: one of its top folders, then at least one more part
PATH = re.compile(r"`((?:zoo|harness|tests|tools|suites|docs|examples|leaderboards)/[^`\s<>*]*)`")


def _resolves(dotted: str) -> bool:
    """Whether `dotted` is a module, or an attribute reached from the longest module prefix."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def _named(doc: Path, pattern: re.Pattern[str]) -> list[str]:
    return sorted(set(pattern.findall(doc.read_text(encoding="utf-8"))))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_dotted_name_in_the_docs_imports(doc: Path) -> None:
    assert [d for d in _named(doc, DOTTED) if not _resolves(d)] == []


def _placeholder(path: str) -> bool:
    """`leaderboards/NAME/`, `tests/reliability/...`: a pattern, not a path."""
    return any(re.fullmatch(r"[A-Z_]+|\.\.\.", part) for part in path.split("/"))


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_repository_path_in_the_docs_exists(doc: Path) -> None:
    """A test's id (`tests/x.py::test_y`) names its file and its test."""
    missing = []
    for named in _named(doc, PATH):
        path, _, test = named.partition("::")
        found = (ROOT / path).exists() and (not test or f"def {test}(" in (ROOT / path).read_text())
        if not found and not _placeholder(path):
            missing.append(named)
    assert missing == []


def _undocumented() -> list[str]:
    """The modules of `zoo` and `harness` without a module docstring."""
    modules = [f for pkg in ("zoo", "harness") for f in (ROOT / pkg).rglob("*.py")]
    return sorted(
        f.relative_to(ROOT).as_posix()
        for f in modules
        if not ast.get_docstring(ast.parse(f.read_text(encoding="utf-8")))
    )


def test_every_module_says_what_it_holds() -> None:
    """Module docstrings carry what the architecture page leaves out."""
    assert _undocumented() == []


def test_the_architecture_names_every_package() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    packages = sorted(
        ".".join(p.parent.relative_to(ROOT).parts)
        for pkg in ("zoo", "harness")
        for p in (ROOT / pkg).glob("*/__init__.py")
    )
    assert [p for p in packages if f"`{p}`" not in text] == []


def test_the_checks_can_fail() -> None:
    assert not _resolves("zoo.train.config.NoSuchThing")
    assert not _resolves("nothing_here.at_all")
    assert _resolves("zoo.train.config.PretrainConfig.key_fields")
    assert _placeholder("leaderboards/NAME/") and not _placeholder("leaderboards/paper-cpu/")
    assert PATH.findall("see `zoo/no_such_module.py` and `tools/<x>.sh`") == [
        "zoo/no_such_module.py"
    ]
