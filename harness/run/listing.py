"""`hlm runs`: the runs of the cache by name, with their state.

    hlm runs                              # every named run
    hlm runs 'paper-cpu-encoder/*cwt*'    # a glob over names

A run is `done` (its `final/` verifies), `training` (a process holds its lock now), `stopped`
(killed or interrupted: `hlm run` resumes it from its newest verified checkpoint) or
`damaged` (its `final/` fails its checksums: `hlm run` makes it again). Each line gives the
step reached of the steps planned and the checkpoints along the way, whose names (`@step-N`)
every command that takes a checkpoint accepts.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path

from harness.run.points import preparing_now
from zoo.errors import UserError
from zoo.reader import read_bytes
from zoo.text import terminal
from zoo.train.atomic import checkpoint_problem
from zoo.train.layout import checkpoint_step, list_checkpoints
from zoo.train.names import named_runs
from zoo.yaml_files import read_yaml


@dataclass(frozen=True)
class RunState:
    name: str
    folder: Path
    state: str
    step: int | None  # the last step logged
    steps: int | None  # the steps planned
    checkpoints: tuple[int, ...]


def _last_step(folder: Path) -> int | None:
    """The step of the last complete line of `metrics.jsonl` (a killed run's partial line
    is skipped)."""
    path = folder / "metrics.jsonl"
    if not path.is_file():
        return None
    try:
        text = read_bytes(path, "a metrics log").decode("utf-8", errors="replace")
    except UserError:  # not a regular file, or past any run's size: no step to show
        return None
    for line in reversed(text.splitlines()):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and "step" in record and isinstance(record["step"], int):
            return int(record["step"])
    return None


def _planned(folder: Path) -> int | None:
    """The steps the run was resolved to (`resolved.yaml`), where it says."""
    path = folder / "resolved.yaml"
    try:
        resolved = read_yaml(path) if path.is_file() else None
        steps = resolved["recipe"]["steps"] if isinstance(resolved, dict) else None
    except (UserError, KeyError, TypeError):
        return None
    return steps if isinstance(steps, int) else None


def run_state(name: str, folder: Path) -> RunState:
    final = folder / "final"
    if final.is_dir():
        problem = checkpoint_problem(final)
        state = "done" if problem is None else f"damaged ({problem})"
    else:
        state = "training" if preparing_now(folder) else "stopped"
    steps = tuple(checkpoint_step(p) for p in list_checkpoints(folder))
    return RunState(name, folder, state, _last_step(folder), _planned(folder), steps)


def list_runs(pattern: str = "*", runs: Path | None = None) -> list[RunState]:
    """The named runs whose name matches the glob `pattern`, by name."""
    return [
        run_state(name, folder)
        for name, folder in named_runs(runs).items()
        if fnmatch.fnmatch(name, pattern) and folder.is_dir()
    ]


def format_runs(states: list[RunState]) -> str:
    """One line per run: name, state, step of steps, checkpoints, folder. Names and folders
    are file names anyone could make: their control characters are shown, never sent."""
    from tabulate import tabulate

    rows = [
        [
            terminal(s.name),
            s.state,
            f"{s.step if s.step is not None else '-'} / {s.steps if s.steps is not None else '?'}",
            " ".join(f"@step-{c}" for c in s.checkpoints) or "-",
            terminal(str(s.folder)),
        ]
        for s in states
    ]
    return tabulate(rows, ["run", "state", "step", "checkpoints", "folder"], tablefmt="github")
