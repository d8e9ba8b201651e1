"""`hlm runs`: the runs of the cache by name, with their state.

    hlm runs                              # every named run
    hlm runs 'paper-cpu-encoder/*cwt*'    # a glob over names

Each line also gives the tokens seen, the tokens/s (a finished run's mean over its training
wall time, as its metadata records; else the rate last logged) and the training hours (a
stopped run's to its newest checkpoint, the steps it keeps); a last line sums them by suite,
the cost each study's note quotes. A run is `done` (its `final/` verifies), `training` (a
process holds its lock now), `stopped` (killed or interrupted: `hlm run` resumes it from its
newest verified checkpoint) or `damaged` (its `final/` fails its checksums: `hlm run` makes
it again). Each line gives the step reached of the steps planned and the checkpoints along
the way, whose names (`@step-N`) every command that takes a checkpoint accepts.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.run.points import preparing_now
from zoo.errors import UserError
from zoo.reader import read_bytes
from zoo.text import terminal
from zoo.train.atomic import checkpoint_problem
from zoo.train.budgets import planned_steps
from zoo.train.layout import checkpoint_step, list_checkpoints
from zoo.train.metadata import find_metadata
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
    tokens: int | None = None  # training tokens seen
    tokens_per_s: float | None = None  # a finished run's mean; else the last logged rate
    hours: float | None = None  # training wall time (a stopped run's to its newest checkpoint)


def _records(folder: Path) -> Iterator[dict[str, Any]]:
    """The complete lines of `metrics.jsonl`, last first, parsed as they are asked for (a
    killed run's partial line is skipped)."""
    path = folder / "metrics.jsonl"
    if not path.is_file():
        return
    try:
        text = read_bytes(path, "a metrics log").decode("utf-8", errors="replace")
    except UserError:  # not a regular file, or past any run's size: nothing to show
        return
    for line in reversed(text.splitlines()):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int):
            yield record


def _number(record: dict[str, Any], key: str) -> float | None:
    value = record.get(key)
    return float(value) if isinstance(value, int | float) else None


def _wall_seconds(checkpoint: Path) -> float | None:
    """The training seconds a checkpoint's metadata records; None where it has none that
    reads (a foreign or half-written folder: the listing shows "-", never fails on it)."""
    try:
        meta = find_metadata(checkpoint)
    except UserError:
        return None
    return meta.wall_seconds if meta is not None and meta.wall_seconds > 0 else None


def _throughput(folder: Path, done: bool, records: Iterator[dict[str, Any]]) -> dict[str, Any]:
    """Tokens seen, tokens/s and training hours: a finished run's from its metadata (the
    mean rate over its training wall time); a running or stopped one's rate and tokens from
    its last logged line, its hours from its newest checkpoint (what a resume keeps)."""
    meta = find_metadata(folder / "final") if done else None
    if meta is not None:
        timed = meta.wall_seconds > 0  # an untrained twin's run trains for no time
        return {
            "tokens": meta.tokens_seen,
            "tokens_per_s": meta.tokens_seen / meta.wall_seconds if timed else None,
            "hours": meta.wall_seconds / 3600 if timed else None,
        }
    rated = next((r for r in records if "tokens_per_s" in r), {})
    tokens = _number(rated, "tokens_seen")
    kept = list_checkpoints(folder)
    seconds = _wall_seconds(kept[-1]) if kept else None
    return {
        "tokens": int(tokens) if tokens is not None else None,
        "tokens_per_s": _number(rated, "tokens_per_s"),
        "hours": None if seconds is None else seconds / 3600,
    }


def _planned(folder: Path) -> int | None:
    """The steps the run stops at, where it says: its resolved recipe's (`resolved.yaml`), or
    fewer where its token budget (`config.yaml`'s `max_tokens`) ends it first."""
    try:
        recipe = read_yaml(folder / "resolved.yaml")["recipe"]
        steps, batch, seq = recipe["steps"], recipe["batch_size"], recipe["seq_len"]
        config = folder / "config.yaml"
        budget = read_yaml(config).get("max_tokens") if config.is_file() else None
    except (UserError, KeyError, TypeError, AttributeError):
        return None
    if not all(isinstance(v, int) and v > 0 for v in (batch, seq)) or not isinstance(steps, int):
        return None
    if isinstance(budget, int) and budget > 0:
        return planned_steps(steps, budget, batch * seq)
    return steps


def run_state(name: str, folder: Path) -> RunState:
    final = folder / "final"
    if final.is_dir():
        problem = checkpoint_problem(final)
        state = "done" if problem is None else f"damaged ({problem})"
    else:
        state = "training" if preparing_now(folder) else "stopped"
    steps = tuple(checkpoint_step(p) for p in list_checkpoints(folder))
    records = _records(folder)
    last = next(records, None)
    step = int(last["step"]) if last is not None else None
    rest = records if last is None else itertools.chain([last], records)
    speed = _throughput(folder, state == "done", rest)  # reads back to the last rated line
    return RunState(name, folder, state, step, _planned(folder), steps, **speed)


def list_runs(pattern: str = "*", runs: Path | None = None) -> list[RunState]:
    """The named runs whose name matches the glob `pattern`, by name."""
    return [
        run_state(name, folder)
        for name, folder in named_runs(runs).items()
        if fnmatch.fnmatch(name, pattern) and folder.is_dir()
    ]


def _figure(value: float | None, form: str) -> str:
    return "-" if value is None else format(value, form)


def format_runs(states: list[RunState]) -> str:
    """One line per run: name, state, step of steps, tokens seen, tokens/s, training hours,
    checkpoints, folder. Names and folders are file names anyone could make: their control
    characters are shown, never sent."""
    from tabulate import tabulate

    rows = [
        [
            terminal(s.name),
            s.state,
            f"{s.step if s.step is not None else '-'} / {s.steps if s.steps is not None else '?'}",
            _figure(None if s.tokens is None else s.tokens / 1e6, ".1f"),
            _figure(s.tokens_per_s, ",.0f"),
            _figure(s.hours, ".2f"),
            " ".join(f"@step-{c}" for c in s.checkpoints) or "-",
            terminal(str(s.folder)),
        ]
        for s in states
    ]
    head = ["run", "state", "step", "M tokens", "tokens/s", "hours", "checkpoints", "folder"]
    return (
        tabulate(rows, head, tablefmt="github", disable_numparse=True) + "\n" + suite_hours(states)
    )


def suite_hours(states: list[RunState]) -> str:
    """One line: the training hours of each suite's runs summed (a run two suites share counts
    in each), and of the distinct run folders listed. Wall hours of one process: CPU-hours
    where each ran on one thread."""
    by_suite: dict[str, float] = {}
    for s in states:
        suite = s.name.split("/", 1)[0]
        by_suite[suite] = by_suite.get(suite, 0.0) + (s.hours or 0.0)
    distinct = {s.folder.resolve(): s.hours or 0.0 for s in states}
    parts = [f"{terminal(name)} {hours:.2f}" for name, hours in sorted(by_suite.items())]
    return f"training hours by suite: {'; '.join(parts)} (all {sum(distinct.values()):.2f})"
