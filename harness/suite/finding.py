"""Finding a suite by name, from any working folder.

`hlm run quickstart` reads the first of:

1. `suites/quickstart.yaml` under `hlm_home()` ($HLM_HOME, else the current project);
2. the suites this checkout of headless-zoo ships (`<checkout>/suites/`);
3. those of installed packages, each naming a package whose folder holds suite files in the
   `hlm.suites` entry-point group:

       [project.entry-points."hlm.suites"]
       my_suites = "my_package.suites"

A reference that looks like a path (a `.yaml` suffix, a folder in it, or a file that exists) is
taken as given. Paths inside a suite (includes, plugins, corpora, task files) resolve against
the suite file's folder.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path

from zoo.data.corpus import resolve_local, source_kind
from zoo.train.names import hlm_home

ENTRY_POINTS = "hlm.suites"
SHIPPED = Path(__file__).resolve().parents[2] / "suites"  # this checkout's own suites


def suite_folders() -> list[Path]:
    """The folders a suite name is looked up in, in order (those that exist)."""
    folders = [hlm_home() / "suites", SHIPPED, *_installed_folders()]
    out: list[Path] = []
    for folder in folders:
        if folder.is_dir() and folder.resolve() not in {f.resolve() for f in out}:
            out.append(folder)
    return out


def _installed_folders() -> list[Path]:
    """The folders of the packages named in the `hlm.suites` entry points (found, not run)."""
    out = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINTS):
        try:
            spec = importlib.util.find_spec(entry.value)
        except (ImportError, ValueError):
            continue
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        out += [Path(p) for p in locations]
    return out


def looks_like_path(ref: str) -> bool:
    p = Path(ref)
    return p.suffix in (".yaml", ".yml") or p.exists() or len(p.parts) > 1


def resolve_suite_path(name_or_path: str) -> Path:
    """`quickstart` -> the first `quickstart.yaml` of `suite_folders()` (where none holds
    one: under `hlm_home()`'s `suites/`, which the file-not-found error names); a path is
    returned as is."""
    if looks_like_path(name_or_path):
        return Path(name_or_path)
    for folder in suite_folders():
        for suffix in (".yaml", ".yml"):
            if (folder / f"{name_or_path}{suffix}").is_file():
                return folder / f"{name_or_path}{suffix}"
    return hlm_home() / "suites" / f"{name_or_path}.yaml"


def known_suites() -> dict[str, Path]:
    """Every suite name `resolve_suite_path` finds, with its file (the first folder's wins)."""
    out: dict[str, Path] = {}
    for folder in suite_folders():
        for f in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            out.setdefault(f.stem, f)
    return out


def suite_relative(source: str, suite_file: Path) -> str:
    """A corpus source of a suite, resolved against the suite file's folder: a relative local
    path that names no file from the working folder or the data root but does beside the
    suite becomes that absolute path; any other source is returned as given (so the keys of
    sources found as before do not move)."""
    if source_kind(source).name != "local" or Path(source).expanduser().is_absolute():
        return source
    if resolve_local(source):
        return source
    beside = (suite_file.parent / source).resolve()
    return str(beside) if resolve_local(str(beside)) else source
