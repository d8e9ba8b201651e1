"""Task types: what a suite can ask to measure, registered like objectives.

A task type (`TaskType`, subclassed) declares its parameters (a pydantic model, unknown keys
rejected), the metrics it produces, whether it needs a pretrained checkpoint, and which model
kinds it accepts. `run` receives a `TaskContext` and returns `Result`s; the runner turns them
into leaderboard rows. Each task file registers its types in `TASKS` where it defines them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
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
class Identity:
    """What defines a cell's computation beyond its task params, each joining its cell id, so
    that an edit computes anew instead of being read as done (`harness.run.cells`):

    - `files`: files that define what it computes, by name (a user's lm-eval task folder),
      joined by their contents, as plugin files are;
    - `versions`: installed code outside the project that defines it, {distribution: version}
      (lm-eval's own task YAMLs come with its release);
    - `data`: the local data it reads, {name under the data root: sha256 prefix of the contents
      as read, None where it is not there}; what differs from its pin
      (`harness.tasks.keyed_defaults.PINNED_DATA`) joins the id.
    """

    files: dict[str, Path] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    data: dict[str, str | None] = field(default_factory=dict)


class TaskType:
    """A kind of measurement a suite can ask for. A task type is a subclass in one file of
    this package (or a plugin file): its class attributes say what it is, its methods what it
    does; the file registers an instance under its name.

        class MyTask(TaskType):
            name = "my-task"
            description = "what it measures"
            params = MyParams              # a pydantic model: unknown keys refused
            metrics = ("my_metric",)

            def run(self, ctx: TaskContext) -> list[Result]: ...

        TASKS.add(MyTask.name, MyTask())

    Only `run` must be written; every other method has a default that adds nothing.
    """

    name: str
    description: str
    params: type[BaseModel] = NoParams
    metrics: tuple[str, ...] = ()
    needs_checkpoint: bool = True
    kinds: tuple[str, ...] = ("encoder", "decoder")
    # the sub-tasks it runs when a task entry names none (`tasks: []`, "the paper's set"),
    # pinned as first keyed in `harness.tasks.keyed_defaults`; () for a type without sub-tasks
    default_subtasks: tuple[str, ...] = ()
    # the Hub task type of its results for a model kind ("encoder" -> "text-classification");
    # a kind not named: not a Hub evaluation (kept in the model card's table only)
    hub_tasks: Mapping[str, str] = MappingProxyType({})
    # the Hub dataset (id, config) each sub-task it reports evaluates on ("" for the task
    # itself); a sub-task not named (a local corpus, an average) stays out of model-indexes
    hub_datasets: Mapping[str, tuple[str, str]] = MappingProxyType({})
    # the sanity gate of each sub-task it reports ("" for the task itself; "sub/metric" where
    # one of a sub-task's metrics needs its own bar): the task's own metric against chance, a
    # bar the paper's own models pass (`harness.results.gates`)
    gates: Mapping[str, Gate] = MappingProxyType({})
    # params that change no score (a cache file, printing): left out of a cell's key
    unscored: frozenset[str] = frozenset()

    def run(self, ctx: TaskContext) -> list[Result]:
        """Measure one cell: the rows' values (the runner writes them)."""
        raise NotImplementedError(f"task type {self.name!r} defines no run()")

    def check(self, params: Any, suite_dir: Path) -> list[tuple[str, str]]:
        """Checks of validated params beyond their model's: [(key under params, message)]."""
        return []

    def preflight(self, params: Any, suite_dir: Path) -> list[tuple[str, str]]:
        """Checks only the task's own library can make, too slow to load for `hlm validate`:
        run by `hlm run` once per task entry before any cell computes (lm-eval's task
        names). [(key under params, message)]."""
        return []

    def identity(self, params: Any, suite_dir: Path) -> Identity:
        """What defines its computation beyond `params` (`Identity`); nothing by default."""
        return Identity()

    def scores(self, params: Any) -> bool:
        """Whether a cell with these params gives rows (lm-eval's `predict_only` keeps the
        model's outputs and scores nothing); a scoring cell without rows is an error."""
        return True

    def partial(self, params: Any) -> str:
        """Why its rows score only part of the task's examples, in words (lm-eval's `--limit`),
        "" for rows that score all of them: a leaderboard says so under its table."""
        return ""

    def describe(self, params: Any) -> str:
        """Its params in words, as a reader compares them with another protocol (the
        paper's): what a row of it ran ("fine-tuned 3 epochs ... on at most 4000 training
        examples"); "" where there is nothing to say."""
        return ""


TASKS: Registry[TaskType] = Registry("task type")
