"""`glue`, `superglue` and `synthetic` task types: fine-tune the encoder, report the field's
metrics (`xnli` reuses their runs: `harness.tasks.xnli`).

Each sub-task is fine-tuned `finetune_seeds` times from the cell's checkpoint; a row holds the
mean over those runs (stderr: their standard error) at the last epoch (`mcc`) and at the best
epoch (`mcc@best`, chosen on the same dev set, as the paper reports along epochs). An
`average` row holds the mean of the primary metrics. Fine-tuning (torch, transformers) is
imported when a cell runs: checking a suite does not load it.
"""

from __future__ import annotations

import logging
import random
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from harness.downstream.benchmarks import (
    GLUE,
    SUPERGLUE,
    SYNTHETIC,
    USER_TSV,
)
from harness.downstream.data import Example, TaskData, load_examples, local_names, local_path
from harness.results.gates import Gate
from harness.results.metrics import METRICS
from harness.tasks.base import TASKS, Identity, Result, TaskContext, TaskType
from harness.tasks.finetune_params import (
    FinetuneParams,
    describer,
)
from zoo.checksums import short_digests
from zoo.data.corpus import data_root

if TYPE_CHECKING:
    from harness.downstream.classifier import FinetuneConfig

log = logging.getLogger(__name__)


def _cap(examples: list[Example], n: int | None, seed: int = 0) -> list[Example]:
    if n is None or len(examples) <= n:
        return examples
    idx = list(range(len(examples)))
    random.Random(seed).shuffle(idx)
    return [examples[i] for i in sorted(idx[:n])]


def _config(p: FinetuneParams, seed: int) -> FinetuneConfig:
    from harness.downstream.classifier import FinetuneConfig
    from zoo.train.distributed import resolve_device

    lr, wd = p.rate()
    return FinetuneConfig(
        epochs=p.epochs,
        batch_size=p.batch_size,
        lr=lr,
        weight_decay=wd,
        warmup_ratio=p.warmup_ratio,
        loss=p.loss,
        max_length=p.max_length,
        seed=seed,
        device=resolve_device(p.device),
        pooling=p.pooling,
        schedule=p.schedule,
    )


def _given(p: FinetuneParams, split: str, name: str) -> list[str] | None:
    """The files the suite gives for sub-task `name`'s `split`, or None."""
    files = p.train_files if split == "train" else p.eval_files
    return files[name] if name in files else None


def _root(p: FinetuneParams) -> Path:
    """Where local files are read: `data_dir`, else the data root."""
    return Path(p.data_dir) if p.data_dir else data_root()


def read_split(task: TaskData, p: FinetuneParams, split: str) -> list[Example]:
    files = _given(p, split, task.name)
    exs = load_examples(task, split, p.source, _root(p), files, USER_TSV.get(task.name), p.revision)
    return _cap(exs, p.max_examples if split == "train" else p.max_eval_examples)


def finetune_runs(
    ckpt: Path,
    task: TaskData,
    train: list[Example],
    evals: dict[str, list[Example]],
    p: FinetuneParams,
    seed: int,
) -> list[list[dict[str, dict[str, float]]]]:
    from harness.downstream.classifier import finetune

    cfg = _config(p, seed * 1000)
    if p.lr_grid is not None:
        cfg = replace(cfg, lr=chosen_rate(ckpt, task, train, p, cfg))
    return [
        finetune(ckpt, task, train, evals, replace(cfg, seed=seed * 1000 + r))
        for r in range(p.finetune_seeds)
    ]


HELD_OUT = 0.1  # share of the training set a learning rate is chosen on


def chosen_rate(
    ckpt: Path, task: TaskData, train: list[Example], p: FinetuneParams, cfg: FinetuneConfig
) -> float:
    """The rate of `p.lr_grid` whose fine-tuning on the training set less a held-out slice
    scores best on that slice (its last epoch's primary metric; the evaluation set is never
    read); ties go to the smaller rate."""
    from harness.downstream.classifier import finetune

    order = list(range(len(train)))
    random.Random(cfg.seed).shuffle(order)
    cut = max(1, int(len(train) * HELD_OUT))
    held, fit = [train[i] for i in order[:cut]], [train[i] for i in order[cut:]]
    scores = {
        lr: finetune(ckpt, task, fit, {"held": held}, replace(cfg, lr=lr))[-1]["held"][task.primary]
        for lr in p.lr_grid or []
    }
    best = max(sorted(scores), key=lambda lr: scores[lr])
    log.info("%s/%s: lr %g chosen on held-out train (%s)", task.benchmark, task.name, best, scores)
    return best


def _best_epoch(history: list[dict[str, dict[str, float]]], eval_name: str, metric: str) -> int:
    scores = [epoch[eval_name][metric] for epoch in history]
    return scores.index(max(scores))


def run_rows(
    label: str, task: TaskData, runs: list[list[dict[str, dict[str, float]]]], eval_name: str
) -> list[Result]:
    """Last-epoch and best-epoch rows for one eval set, averaged over fine-tuning runs."""
    out = []
    for metric in task.scored:
        last = [h[-1][eval_name][metric] for h in runs]
        best_epoch = [_best_epoch(h, eval_name, task.primary) for h in runs]
        best = [h[e][eval_name][metric] for h, e in zip(runs, best_epoch, strict=True)]
        for name, values in ((metric, last), (f"{metric}@best", best)):
            se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else None
            out.append(Result(name, statistics.fmean(values), stderr=se, task=label))
    return out


def majority(label: str, task: TaskData, train: list[Example], dev: list[Example]) -> Result:
    """The primary metric of the trivial predictor: the training set's most frequent class
    (regression: its mean score) for every example, the bar a fine-tuned model must clear."""
    gold = [e.label for e in dev]
    if task.labels:
        common = Counter(e.label for e in train).most_common(1)[0][0]
        pred = [common] * len(dev)
    else:
        pred = [statistics.fmean(e.label for e in train)] * len(dev)
    return Result("majority", METRICS.get(task.primary).score(pred, gold), task=label)


def average_rows(prefix: str, results: list[Result], primaries: dict[str, str]) -> list[Result]:
    out = []
    for suffix in ("", "@best"):
        vals = [
            r.value
            for r in results
            if r.task in primaries and r.metric == primaries[r.task] + suffix
        ]
        if len(vals) > 1:
            out.append(Result(f"average{suffix}", statistics.fmean(vals), task=f"{prefix}/average"))
    return out


def read_digests(tasks: list[TaskData], p: FinetuneParams) -> dict[str, str | None]:
    """The local files that `tasks`, run under `p`, read (`local_names`: none from the Hub or
    for generated data), each by its name and digest (`TaskType.identity`)."""
    return short_digests(
        {
            name: local_path(_root(p), name)
            for task in tasks
            for split in ("train", "eval")
            for name in local_names(task, split, p.source, _given(p, split, task.name))
        }
    )


def _data_problems(task: TaskData, i: int, p: FinetuneParams) -> list[tuple[str, str]]:
    """Why sub-task `i` (`task`) has no data as `p` reads it: local files it lacks, or a Hub
    revision for data the task generates (which any `source` reads, and no revision pins)."""
    if task.generate is not None:
        if p.revision is None:
            return []
        return [("revision", f"{task.name}'s data is generated by the task: no revision is read")]
    if p.source != "local":
        return []
    return [
        (
            f"tasks[{i}]",
            f"{task.name} has no local {split} files ({task.notes}); "
            f"use source: hub or give {split}_files.{task.name}",
        )
        for split, local, given in (
            ("train", task.local_train, p.train_files),
            ("eval", task.local_eval, p.eval_files),
        )
        if local is None and task.name not in given
    ]


GLUE_DEFAULT = [
    "cola",
    "sst2",
    "mrpc",
    "stsb",
    "qnli",
    "qqp",
    "mnli",
]  # paper Table 1 (RTE excluded)
SUPERGLUE_DEFAULT = ["boolq", "cb", "copa", "wic"]
SYNTHETIC_DEFAULT = ["agreement"]


def hub_datasets(tasks: dict[str, TaskData]) -> dict[str, tuple[str, str]]:
    """Each sub-task's Hub dataset (id, config), where it has one."""
    return {name: data.hub for name, data in tasks.items() if data.hub[0]}


class FinetuneBenchmark(TaskType):
    """A fine-tuning benchmark over sub-tasks `tasks` (`default`: those a suite runs when it
    names none): each fine-tuned k times at the chosen rate, scored on its dev set, beside
    its majority class, and averaged over the sub-tasks. `keyed_data`: its local files join
    the cell id (`Identity.data`)."""

    params = FinetuneParams
    kinds = ("encoder",)
    hub_tasks = MappingProxyType({"encoder": "text-classification"})

    def __init__(
        self,
        name: str,
        description: str,
        tasks: dict[str, TaskData],
        default: list[str],
        keyed_data: bool,
        gates: Mapping[str, Gate] = MappingProxyType({}),
    ) -> None:
        self.name, self.description = name, description
        self.tasks, self.keyed_data = tasks, keyed_data
        self.default_subtasks = tuple(default)
        self.hub_datasets = MappingProxyType(hub_datasets(tasks))
        self.gates = gates
        self._describe = describer(tasks, default)

    def _names(self, p: FinetuneParams) -> list[str]:
        return list(p.tasks or self.default_subtasks)

    def run(self, ctx: TaskContext) -> list[Result]:
        p: FinetuneParams = ctx.params
        assert ctx.checkpoint is not None
        results: list[Result] = []
        primaries = {}
        for name in self._names(p):
            task = self.tasks[name]
            label = f"{self.name}/{name}"
            train, dev = read_split(task, p, "train"), read_split(task, p, "eval")
            runs = finetune_runs(ctx.checkpoint, task, train, {"dev": dev}, p, ctx.seed)
            results += [*run_rows(label, task, runs, "dev"), majority(label, task, train, dev)]
            primaries[label] = task.primary
        return results + average_rows(self.name, results, primaries)

    def check(self, params: FinetuneParams, suite_dir: Path) -> list[tuple[str, str]]:
        p, known = params, self.tasks
        problems = [
            (f"tasks[{i}]", f"unknown task {name!r} (known: {', '.join(known)})")
            for i, name in enumerate(p.tasks)
            if name not in known
        ]
        for i, name in enumerate(self._names(p)):
            if name in known:
                problems += _data_problems(known[name], i, p)
        problems += [
            ("train_files" if key in p.train_files else "eval_files", f"unknown task {key!r}")
            for key in (*p.train_files, *p.eval_files)
            if key not in known
        ]
        return problems

    def identity(self, params: FinetuneParams, suite_dir: Path) -> Identity:
        if not self.keyed_data:
            return Identity()
        read = [self.tasks[name] for name in self._names(params) if name in self.tasks]
        return Identity(data=read_digests(read, params))

    def describe(self, params: FinetuneParams) -> str:
        return self._describe(params)


GLUE_TASK = FinetuneBenchmark(
    "glue",
    "GLUE fine-tuning (balanced or plain CE): CoLA mcc, STS-B spearman, "
    "MRPC/QQP acc+F1, acc elsewhere",
    GLUE,
    GLUE_DEFAULT,
    keyed_data=True,
    gates=MappingProxyType({name: data.gate for name, data in GLUE.items() if data.gate}),
)
SUPERGLUE_TASK = FinetuneBenchmark(
    "superglue",
    "SuperGLUE fine-tuning: BoolQ, CB, COPA (multiple choice), WiC accuracy",
    SUPERGLUE,
    SUPERGLUE_DEFAULT,
    keyed_data=True,
)
SYNTHETIC_TASK = FinetuneBenchmark(
    "synthetic",
    "CoLA-like acceptability (subject-verb agreement) in the embedded synthetic "
    "language: no download",
    SYNTHETIC,
    SYNTHETIC_DEFAULT,
    keyed_data=False,
)


TASKS.add(GLUE_TASK.name, GLUE_TASK)
TASKS.add(SUPERGLUE_TASK.name, SUPERGLUE_TASK)
TASKS.add(SYNTHETIC_TASK.name, SYNTHETIC_TASK)
