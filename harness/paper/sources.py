"""Where our side of a claim comes from: one `Source` per claim of a claims file.

A `Source` names the suite whose committed leaderboard (`leaderboards/<suite>/`) holds our
rows, the task and metric, the model playing each role, the checkpoint compared (`at`), the
unit of replication (`unit`, from the metric's `replicate`: the pretraining seed, or for speed
and memory the side-by-side measurement), where our protocol differs from the paper's
(`differs`), and the sanity `Check`s the vanilla model must pass for the comparison to say
anything. Each check applies the gate its task type declares (`TaskType.gates`: the task's
own metric against chance, a bar the paper's own model passes). A claims file
(`harness.paper.claims_file`) declares each source; `harness.paper.scales` maps them to other
sizes; `harness.paper.findings` computes the findings.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from typing import Literal

import pandas as pd

from harness.paper.figures import Role
from harness.results.gates import Gate, GateCheck
from harness.results.leaderboard import final_rows, unfinished
from harness.results.metrics import metric_info
from harness.results.stats import differences, magnitude
from harness.tasks import TASKS

At = Literal["final", "equal-time", "along", "sweep"]
Unit = Literal["seed", "measurement"]


def _measured(metric: str) -> bool:
    """Whether `metric` is a measurement of a cell that pretrains nothing (speed, memory)."""
    return metric_info(metric).replicate == "measurements"


def rows_of(rows: pd.DataFrame, model: str, task: str, metric: str) -> pd.DataFrame:
    """`model`'s rows of `task` and `metric`, every checkpoint (read-only: shared)."""
    return _parts_of(rows).rows.get((model, task, metric), rows.iloc[:0])


def final_values(rows: pd.DataFrame, model: str, task: str, metric: str) -> pd.Series:
    """`metric` of `model` on `task` at each seed's final checkpoint, one value per seed (a
    seed whose final checkpoint is not evaluated yet has none: `waiting`). Read-only."""
    parts, key = _parts_of(rows), (model, task, metric)
    if key not in parts.finals:
        parts.finals[key] = (
            final_rows(rows_of(rows, model, task, metric)).groupby("seed")["value"].mean()
        )
    return parts.finals[key]


@dataclass
class _Parts:
    """A frame's rows by (model, task, metric), and the final values asked for so far."""

    rows: dict[tuple[str, str, str], pd.DataFrame]
    finals: dict[tuple[str, str, str], pd.Series]


_PARTS: dict[int, tuple[weakref.ref[pd.DataFrame], _Parts]] = {}


def _parts_of(rows: pd.DataFrame) -> _Parts:
    """`rows` split once per frame: judging a claims file asks for parts of the same frame
    hundreds of times, and a pandas mask costs milliseconds. Kept while the frame lives;
    frames of rows are read, never changed in place."""
    key = id(rows)
    held = _PARTS.get(key)
    if held is not None and held[0]() is rows:
        return held[1]
    groups = rows.groupby(["model", "task", "metric"], sort=False, dropna=False)
    parts = _Parts({k: g for k, g in groups}, {})  # type: ignore[misc]
    _PARTS[key] = (weakref.ref(rows, lambda _, k=key: _PARTS.pop(k, None)), parts)  # type: ignore[misc]
    return parts


def waiting(rows: pd.DataFrame, model: str, task: str, metric: str) -> str:
    """The seeds of `model` with `task` rows along pretraining but none of the final
    checkpoint yet (a cell cut off mid-way), in words; empty where there are none."""
    return "; ".join(
        f"seed {int(key[2])}: {model}'s {task} has steps {', '.join(map(str, steps))} only, "
        "not its final checkpoint yet"
        for key, steps in unfinished(rows_of(rows, model, task, metric)).items()
    )


def gate(task_type: str, sub: str = "") -> Gate:
    """The sanity gate task type `task_type` declares for its sub-task `sub`."""
    return TASKS.get(task_type).gates[sub]


@dataclass(frozen=True)
class Check:
    """The gate of `task` (its label in the rows) applied to a model's final rows."""

    task: str
    gate: Gate

    def run(self, rows: pd.DataFrame, model: str) -> GateCheck:
        """The gate's outcome for `model`'s final rows, its text led by the task's label."""
        mine = final_values(rows, model, self.task, self.gate.metric)
        if mine.empty:
            nan = float("nan")
            later = waiting(rows, model, self.task, self.gate.metric)
            why = f" of the final checkpoint ({later})" if later else ""
            text = f"{self.task}: no `{self.gate.metric}` row{why}"
            return GateCheck(False, nan, nan, text, name=self.name)
        found = self.outcome(rows, model, float(mine.mean()))
        spread = differences(mine.to_numpy(), "seeds", magnitude(mine))  # the mean's interval
        found = found.within(spread.low, spread.high)
        return replace(found, text=f"{self.task} {found.text}", name=self.name)

    @property
    def name(self) -> str:
        """What the gate reads, in words: the task's label and the metric."""
        return f"{self.task} {self.gate.metric}"

    def outcome(self, rows: pd.DataFrame, model: str, value: float) -> GateCheck:
        """The gate's outcome for `model`'s mean final `value`: against chance (or the bar its
        baseline metric sets) and, where it passes that, against its untrained twin in
        `rows`; the text does not name the task."""

        def baseline(metric: str) -> float | None:
            values = final_values(rows, model, self.task, metric)
            return None if values.empty else float(values.mean())

        found = self.gate.check(value, baseline)
        twin = untrained_twin(rows, model)
        if found.passed and twin is not None:
            theirs = final_values(rows, twin, self.task, self.gate.metric)
            if not theirs.empty:
                beaten = self.gate.check_untrained(found.value, float(theirs.mean()), twin)
                found = found if beaten is None else beaten
        return found


def untrained_twin(rows: pd.DataFrame, model: str) -> str | None:
    """The model of `rows` with `model`'s preset whose every row saw no training token (a
    `steps: 0` run: the initial weights), or None."""
    preset = rows.loc[rows["model"] == model, "preset"]
    if preset.empty:
        return None
    same = rows[(rows["preset"] == preset.iloc[0]) & (rows["model"] != model)]
    untrained = same.groupby("model")["tokens_seen"].max()
    return next(iter(sorted(untrained.index[untrained == 0])), None)


@dataclass(frozen=True)
class Parts:
    """The parts an average is made of, each fine-tuned and scored on its own (XNLI's
    languages): the tasks named `prefix` + part and their `metric`; `name` says what a part
    is. At one seed without kept samples, they pair up for a test."""

    prefix: str
    metric: str
    name: str


@dataclass(frozen=True)
class Source:
    """Our figure: suite, task, metric, the model per role, the checkpoint, the unit, the
    sanity checks; `unavailable` says why no rows can exist here (no local data); `parts`:
    what an average is made of (its per-part gaps are shown); `speed`: for `equal-time`, the
    (suite, model) whose side-by-side `speedup_vs_baseline` sets the equal-time step;
    `differs`: where our protocol differs from the paper's; `machine`: for a speed measured
    again on a second machine (`harness.paper.scales`), the kind of machine each of its rows
    must record (part of their `hardware`); its rows lie in that machine's `folder`."""

    suite: str
    task: str
    metric: str
    roles: dict[Role, str]
    at: At = "final"
    checks: tuple[Check, ...] = ()
    unavailable: str = ""
    parts: Parts | None = None
    speed: tuple[str, str] | None = None
    differs: str = ""
    machine: str = ""

    @property
    def folder(self) -> str:
        """The subfolder of the leaderboards holding a second machine's rows (its name in
        lower case, dashed: `amd-epyc`); '' for the suite's own folder."""
        return self.machine.lower().replace(" ", "-")

    @property
    def board(self) -> str:
        """The rows' folder under the leaderboards: `<suite>`, or `<folder>/<suite>`."""
        return f"{self.folder}/{self.suite}" if self.folder else self.suite

    @property
    def command(self) -> str:
        """The command that computes the rows into `board` (in a second machine's folder,
        the measured task's cells alone: nothing there is pretrained)."""
        if not self.folder:
            return f"hlm run {self.suite}"
        return f"hlm run {self.suite} --task {self.task} --leaderboards leaderboards/{self.folder}"

    @property
    def unit(self) -> Unit:
        """ "measurement" where the metric's cell pretrains nothing (`Metric.replicate`: speed
        and memory, measured side by side), else "seed"."""
        return "measurement" if _measured(self.metric) else "seed"
