"""Task types: what a suite can ask to measure, registered like objectives.

A task type declares its parameters (a pydantic model, unknown keys rejected), the metrics it
produces, whether it needs a pretrained checkpoint, and which model kinds it accepts. `run`
receives a `TaskContext` and returns `Result`s; the runner turns them into leaderboard rows.
Each task file registers its types in `TASKS` where it defines them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.results.gates import Gate
from zoo.models.spec import ModelSpec
from zoo.registry import Registry
from zoo.settings import Settings
from zoo.train.config import PretrainConfig


class NoParams(Settings):
    """The parameters of a task type that takes none: any key is refused."""


@dataclass(frozen=True)
class Result:
    metric: str
    value: float
    stderr: float | None = None
    step: int | None = None
    tokens_seen: int | None = None
    train_flops: float | None = None
    train_seconds: float | None = None
    higher_is_better: bool | None = None  # for metrics the registry does not know (lm-eval's own)
    task: str | None = None  # sub-task label (e.g. "glue/cola"); default: the suite's task label
    # per-example scores (example key -> score), kept beside the leaderboard for paired tests
    # and distributions (`harness.results.samples`)
    samples: dict[str, float] | None = None


@dataclass(frozen=True)
class TaskContext:
    """Everything a task needs about its cell."""

    spec: ModelSpec
    objective: str
    pretrain: PretrainConfig
    params: Any
    seed: int
    checkpoint: Path | None = None  # the checkpoint to evaluate (tasks with needs_checkpoint)
    work_dir: Path | None = None
    suite_dir: Path = Path(".")  # relative paths in task params are relative to the suite file
    artifacts: Path | None = None  # a folder for raw outputs kept beside the leaderboard


@dataclass(frozen=True)
class TaskType:
    name: str
    description: str
    run: Callable[[TaskContext], list[Result]]
    params: type[BaseModel] = NoParams
    metrics: tuple[str, ...] = ()
    needs_checkpoint: bool = True
    kinds: tuple[str, ...] = ("encoder", "decoder")
    # extra checks of validated params: (params, suite_dir) -> [(key under params, message)]
    check: Callable[[Any, Path], list[tuple[str, str]]] | None = None
    # checks only the task's own library can make, too slow to load for `hlm validate`:
    # (params, suite_dir) -> [(key under params, message)], run by `hlm run` once per task
    # entry before any cell computes (lm-eval's task names)
    preflight: Callable[[Any, Path], list[tuple[str, str]]] | None = None
    # the files that define what it computes, beyond its params: (params, suite_dir) ->
    # {name: path}; their contents join the cell id, as plugin files' do, so that an edited
    # definition (a user's lm-eval task folder) is computed anew, not read as done
    definition_files: Callable[[Any, Path], dict[str, Path]] | None = None
    # the installed code outside the project that defines what it computes: (params,
    # suite_dir) -> {distribution: version}; joins the cell id where there is any (lm-eval's
    # own tasks, whose YAMLs come with the lm-eval release), so a new release computes anew
    definition_versions: Callable[[Any, Path], dict[str, str]] | None = None
    # the local data it reads, beyond its params: (params, suite_dir) -> {name: the sha256
    # prefix of its contents as read, None where it is not there}, named under the data root
    # where it lies there; what differs from its pin (`keyed_defaults.PINNED_DATA`) joins the
    # cell id, so that an edited data file is computed anew, not read as done
    data_digests: Callable[[Any, Path], dict[str, str | None]] | None = None
    # its params in words, as a reader compares them with another protocol (the paper's):
    # what a row of it ran ("fine-tuned 3 epochs ... on at most 4000 training examples")
    describe: Callable[[Any], str] | None = None
    # the sub-tasks it runs when a task entry names none (`tasks: []`, "the paper's set"),
    # pinned as first keyed in `harness.tasks.keyed_defaults`; () for a type without sub-tasks
    default_subtasks: tuple[str, ...] = ()
    # the Hub task type of its results for a model kind ("encoder" -> "text-classification");
    # a kind not named: not a Hub evaluation (kept in the model card's table only)
    hub_tasks: dict[str, str] = field(default_factory=dict)
    # the Hub dataset (id, config) each sub-task it reports evaluates on ("" for the task
    # itself); a sub-task not named (a local corpus, an average) stays out of model-indexes
    hub_datasets: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the sanity gate of each sub-task it reports ("" for the task itself; "sub/metric" where
    # one of a sub-task's metrics needs its own bar): the task's own metric against chance, a
    # bar the paper's own models pass (`harness.results.gates`)
    gates: dict[str, Gate] = field(default_factory=dict)


TASKS: Registry[TaskType] = Registry("task type")
