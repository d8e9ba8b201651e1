"""Reading suites: YAML files with `include:`, schema validation, plugins, semantic checks.

    suite = load_suite("suites/quickstart.yaml")    # raises SuiteError listing every problem

Every problem is reported as ``FILE: KEY.PATH: message``. ``include:`` reuses other suites:
their models and tasks come first, mappings are merged with this file's keys winning, scalars
are overridden. Plugin files are imported here, explicitly, before the semantic checks.
"""

from __future__ import annotations

import glob
import math
import warnings
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.suite.checks import semantic_problems
from harness.suite.finding import known_suites, resolve_suite_path
from harness.suite.record import SUITE_FILE
from harness.suite.schema import Suite
from zoo.errors import UserError, ZooWarning, close_names, validation_problems
from zoo.registry import load_plugin, may_run_code
from zoo.settings import listed
from zoo.text import control_in, visible
from zoo.yaml_files import YamlFileError, read_yaml_mapping


class SuiteError(UserError):
    """All problems of a suite, one per line."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if (
            key in ("models", "tasks")
            and isinstance(value, list)
            and isinstance(out.get(key), list)
        ):
            out[key] = [*out[key], *value]
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file() and not path.is_dir():
        if path.exists() or path.is_symlink():  # a FIFO, a device, a dangling link
            raise SuiteError([f"{path}: not a regular file"])
        raise SuiteError([f"{path}: file not found{_close_suites(path)}"])
    try:
        data = read_yaml_mapping(path, "suite keys")
    except YamlFileError as exc:
        raise SuiteError([str(exc)]) from None
    found = control_in(data, frozenset({"description"}))
    if found is not None:  # a newline in a name would break out of a table row, a heading
        where, text = found
        raise SuiteError([f"{path}: {where}: {visible(text)[:80]!r} holds a control character"])
    return data


def _close_suites(path: Path) -> str:
    """`; did you mean 'suites/quickstart.yaml'?` for the suite files beside a missing one
    whose names are close to its name, or where its folder does not exist, for the suites
    found by name (`harness.suite.finding`)."""
    if path.parent.is_dir():
        folder = path.parent
        known = {f.stem: str(f) for f in [*folder.glob("*.yaml"), *folder.glob("*.yml")]}
    else:
        known = {stem: str(f) for stem, f in known_suites().items()}
    close = close_names(path.stem, sorted(known))  # by stem: a shared .yaml is no likeness
    if close:
        return f"; did you mean {', '.join(repr(known[n]) for n in close)}?"
    return "" if path.parent.is_dir() else f" (no folder {path.parent})"


def read_raw(path: Path, stack: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The YAML mapping of `path` with its includes merged in."""
    if path.resolve() in stack:
        chain = " -> ".join(str(p) for p in (*stack, path.resolve()))
        raise SuiteError([f"{path}: include: cycle ({chain})"])
    data = _read_yaml(path)
    includes = listed(data["include"]) if "include" in data else []
    if not isinstance(includes, list) or not all(isinstance(i, str) for i in includes):
        raise SuiteError([f"{path}: include: expected a file path or a list of them"])
    merged: dict[str, Any] = {}
    for i, inc in enumerate(includes):
        inc_path = (path.parent / inc) if not Path(inc).is_absolute() else Path(inc)
        if not inc or not inc_path.is_file():
            raise SuiteError([f"{path}: include[{i}]: file not found: {inc_path}"])
        sub = read_raw(inc_path, (*stack, path.resolve()))
        sub.pop("name", None)
        sub.pop("include", None)
        merged = _merge(merged, sub)
    return _merge(merged, data)


def load_plugins(suite: Suite) -> list[str]:
    """Import the suite's plugin files (this runs their code); one problem line per file that
    fails. Code runs only as `may_run_code` allows: with --trust-plugins, wherever the file
    lies (beside the suite or in a received leaderboard's `_plugins/` grants nothing)."""
    problems = []
    named: dict[str, int] = {}
    for i, path in enumerate(suite.plugin_paths()):
        if path.name in named:  # cell ids and the leaderboard's copies know a plugin by name
            problems.append(
                f"{suite.path}: plugins[{i}]: a second plugin file named {path.name!r} (the "
                f"first: plugins[{named[path.name]}]); plugin files are told apart by their "
                "names: rename one"
            )
            continue
        named[path.name] = i
        try:
            load_plugin(path, trusted=may_run_code(path))
        except UserError as exc:
            problems.append(f"{suite.path}: plugins[{i}]: {exc}")
    return problems


MAX_CELLS = 10_000  # a suite's cells at most, unless --max-cells says more


def cell_bound(suite: Suite) -> int:
    """The most cells `suite` expands to (sweep points x models x seeds x tasks), counted
    without expanding anything."""
    points = math.prod(len(values) for values in suite.sweep.values())
    return points * len(suite.models) * len(suite.seeds) * len(suite.tasks)


def load_suite(path: str | Path, max_cells: int = MAX_CELLS) -> Suite:
    """Parse a suite, count its cells (at most `max_cells`), import its plugins, and check
    every registry name, path, task parameter and sweep value; a SuiteError lists every
    problem."""
    p = Path(path)
    raw = read_raw(p)
    try:
        suite = Suite.model_validate({**raw, "path": str(p)})
    except ValidationError as exc:
        raise SuiteError(validation_problems(exc, str(p), model=Suite)) from None
    if (n := cell_bound(suite)) > max_cells:
        raise SuiteError(
            [
                f"{p}: up to {n} cells (sweep points x models x seeds x tasks), more than "
                f"{max_cells}: shrink the sweep or the seeds, or pass --max-cells {n}"
            ]
        )
    problems = load_plugins(suite)
    if problems:
        raise SuiteError(problems)
    problems = semantic_problems(suite)
    if problems:
        raise SuiteError(problems)
    return suite


def suite_name(ref: str) -> str:
    """A suite's leaderboard name from its name or YAML path (the file's `name:` when it is one).

    Only the file's schema is read: the verbs that read a leaderboard need its name, not its
    plugins imported nor every registry name checked. A file the schema refuses is loaded in
    full, which reports its problems with the file and key."""
    p = resolve_suite_path(ref)
    if not p.is_file():
        return ref
    try:
        return Suite.model_validate({**read_raw(p), "path": str(p)}).name
    except ValidationError:
        return load_suite(p).name


def last_suite(directory: Path) -> Suite | None:
    """The suite as last run into leaderboard folder `directory` (its `_suite.yaml`), if it
    reads as one; one that does not is named in a warning with its problems (its baseline,
    and with it the significance marks, would otherwise vanish without a word)."""
    f = directory / SUITE_FILE
    if not f.is_file():
        return None
    try:
        return Suite.model_validate(read_yaml_mapping(f, "suite keys"))
    except ValidationError as exc:
        problems = validation_problems(exc, str(f), model=Suite)
        warnings.warn(
            f"{f}: does not read as a suite, so its baseline and settings go unused (run the "
            f"suite again, or pass --baseline): {'; '.join(problems)}",
            ZooWarning,
            stacklevel=2,
        )
        return None


def expand_suite_refs(refs: list[str]) -> list[Path]:
    """Suite files of names, paths, folders (their *.yaml) and globs, in order."""
    out: list[Path] = []
    for ref in refs:
        p = Path(ref)
        if p.is_dir():
            found = sorted(f for f in [*p.glob("*.yaml"), *p.glob("*.yml")] if f.is_file())
            if not found:
                raise UserError(f"{ref}: a folder that holds no suite (*.yaml): nothing to check")
            out += found
        elif glob.has_magic(ref):
            matches = sorted(Path(m) for m in glob.glob(ref))
            out += matches if matches else [p]  # reported as not found
        else:
            out.append(resolve_suite_path(ref))
    return out
