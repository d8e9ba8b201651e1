"""The docs name what exists: every `zoo.x` / `harness.x` name in them imports, every repository
path in them is a file or folder, and docs/ARCHITECTURE.md names every module."""

from __future__ import annotations

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


def _named_in(rel: Path, text: str) -> bool:
    """Whether the architecture names module `rel` (a package by its `__init__.py`): by its
    path or dotted name, or by its file or bare name on a line that names its folder."""
    if rel.name == "__init__.py":
        rel = rel.parent
        return f"`{rel.as_posix()}/" in text or f"`{'.'.join(rel.parts)}`" in text
    dotted = ".".join(rel.with_suffix("").parts)
    if rel.as_posix() in text or re.search(rf"`{re.escape(dotted)}[`.(]", text):
        return True
    folder = f"{rel.parent.as_posix()}/"
    short = (f"`{rel.name}`", f"`{rel.stem}`", f"`{rel.stem}.")
    return any(folder in line and any(n in line for n in short) for line in text.splitlines())


def test_the_architecture_names_every_module() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    modules = [
        f.relative_to(ROOT) for pkg in ("zoo", "harness") for f in (ROOT / pkg).rglob("*.py")
    ]
    assert sorted(m.as_posix() for m in modules if not _named_in(m, text)) == []


def test_the_checks_can_fail() -> None:
    assert not _resolves("zoo.train.config.NoSuchThing")
    assert not _resolves("nothing_here.at_all")
    assert _resolves("zoo.train.config.PretrainConfig.key_fields")
    assert not _named_in(Path("zoo/train/no_such.py"), "`zoo/train/` holds `other.py`")
    assert _named_in(Path("zoo/train/loop.py"), "`zoo/train/` holds `loop.py`")
    assert _placeholder("leaderboards/NAME/") and not _placeholder("leaderboards/paper-cpu/")
    assert PATH.findall("see `zoo/no_such_module.py` and `tools/<x>.sh`") == [
        "zoo/no_such_module.py"
    ]
