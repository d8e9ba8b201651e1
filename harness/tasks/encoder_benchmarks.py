"""`glue`, `superglue` and `xnli` task types: fine-tune the encoder, report the field's metrics.

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
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.downstream.benchmarks import (
    GLUE,
    SUPERGLUE,
    SYNTHETIC,
    USER_TSV,
    XNLI_GATE,
    XNLI_LANGUAGES,
    xnli,
)
from harness.downstream.data import Example, TaskData, load_examples, local_names, local_path
from harness.results.gates import Gate
from harness.results.metrics import METRICS
from harness.tasks.base import TASKS, Result, TaskContext, TaskType
from harness.tasks.finetune_params import (
    FinetuneParams,
    XNLIParams,
    describe_xnli,
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


def _data(task: TaskData, p: FinetuneParams, split: str) -> list[Example]:
    files = _given(p, split, task.name)
    exs = load_examples(task, split, p.source, _root(p), files, USER_TSV.get(task.name), p.revision)
    return _cap(exs, p.max_examples if split == "train" else p.max_eval_examples)


def _runs(
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


def _results(
    label: str, task: TaskData, runs: list[list[dict[str, dict[str, float]]]], eval_name: str
) -> list[Result]:
    """Last-epoch and best-epoch rows for one eval set, averaged over fine-tuning runs."""
    out = []
    for metric in task.metrics:
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


def _average(prefix: str, results: list[Result], primaries: dict[str, str]) -> list[Result]:
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


def _benchmark_runner(
    benchmark: str, registry: dict[str, TaskData], default: list[str]
) -> Callable[[TaskContext], list[Result]]:
    def run(ctx: TaskContext) -> list[Result]:
        p: FinetuneParams = ctx.params
        assert ctx.checkpoint is not None
        results: list[Result] = []
        primaries = {}
        for name in p.tasks or default:
            task = registry[name]
            label = f"{benchmark}/{name}"
            train, dev = _data(task, p, "train"), _data(task, p, "eval")
            runs = _runs(ctx.checkpoint, task, train, {"dev": dev}, p, ctx.seed)
            results += [*_results(label, task, runs, "dev"), majority(label, task, train, dev)]
            primaries[label] = task.primary
        return results + _average(benchmark, results, primaries)

    return run


def run_xnli(ctx: TaskContext) -> list[Result]:
    p: XNLIParams = ctx.params
    assert ctx.checkpoint is not None
    prefix = f"xnli-{p.mode}"
    results: list[Result] = []
    if p.mode == "zero-shot":
        evals = {lang: _data(xnli(lang), p, "eval") for lang in p.languages}
        runs = _runs(ctx.checkpoint, xnli("en"), _data(xnli("en"), p, "train"), evals, p, ctx.seed)
        for lang in p.languages:
            results += _results(f"{prefix}/{lang}", xnli(lang), runs, lang)
    else:
        for lang in p.languages:
            task = xnli(lang)
            runs = _runs(
                ctx.checkpoint,
                task,
                _data(task, p, "train"),
                {lang: _data(task, p, "eval")},
                p,
                ctx.seed,
            )
            results += _results(f"{prefix}/{lang}", task, runs, lang)
    return results + _average(
        prefix, results, {f"{prefix}/{lang}": "accuracy" for lang in p.languages}
    )


def _read_digests(tasks: list[TaskData], p: FinetuneParams) -> dict[str, str | None]:
    """The local files that `tasks`, run under `p`, read (`local_names`: none from the Hub or
    for generated data), each by its name and digest (`TaskType.data_digests`)."""
    return short_digests(
        {
            name: local_path(_root(p), name)
            for task in tasks
            for split in ("train", "eval")
            for name in local_names(task, split, p.source, _given(p, split, task.name))
        }
    )


def _data_digests(
    registry: dict[str, TaskData], default: list[str]
) -> Callable[[FinetuneParams, Path], dict[str, str | None]]:
    def digests(p: FinetuneParams, suite_dir: Path) -> dict[str, str | None]:
        return _read_digests([registry[name] for name in p.tasks or default if name in registry], p)

    return digests


def _xnli_digests(p: XNLIParams, suite_dir: Path) -> dict[str, str | None]:
    """The XNLI files a cell reads: each language's, and English's for zero-shot training."""
    langs = dict.fromkeys([*p.languages, "en"] if p.mode == "zero-shot" else p.languages)
    return _read_digests([xnli(lang) for lang in langs if lang in XNLI_LANGUAGES], p)


def _check(
    registry: dict[str, TaskData], default: list[str]
) -> Callable[[FinetuneParams, Path], list[tuple[str, str]]]:
    def check(p: FinetuneParams, suite_dir: Path) -> list[tuple[str, str]]:
        problems = [
            (f"tasks[{i}]", f"unknown task {name!r} (known: {', '.join(registry)})")
            for i, name in enumerate(p.tasks)
            if name not in registry
        ]
        for i, name in enumerate(p.tasks or default):
            if name in registry:
                problems += _data_problems(registry[name], i, p)
        problems += [
            ("train_files" if key in p.train_files else "eval_files", f"unknown task {key!r}")
            for key in (*p.train_files, *p.eval_files)
            if key not in registry
        ]
        return problems

    return check


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


def _check_xnli(p: XNLIParams, suite_dir: Path) -> list[tuple[str, str]]:
    return [
        (f"languages[{i}]", f"unknown XNLI language {lang!r} (known: {', '.join(XNLI_LANGUAGES)})")
        for i, lang in enumerate(p.languages)
        if lang not in XNLI_LANGUAGES
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


def _benchmark_type(
    name: str, description: str, tasks: dict[str, TaskData], default: list[str], **more: Any
) -> TaskType:
    """A fine-tuning benchmark's task type: its runner, checks and description over `tasks`
    (`default`: the sub-tasks a suite runs when it names none); `more`: digests, gates."""
    return TaskType(
        name=name,
        description=description,
        run=_benchmark_runner(name, tasks, default),
        params=FinetuneParams,
        describe=describer(tasks, default),
        default_subtasks=tuple(default),
        kinds=("encoder",),
        check=_check(tasks, default),
        hub_tasks={"encoder": "text-classification"},
        **more,
    )


GLUE_TASK = _benchmark_type(
    "glue",
    "GLUE fine-tuning (balanced or plain CE): CoLA mcc, STS-B spearman, "
    "MRPC/QQP acc+F1, acc elsewhere",
    GLUE,
    GLUE_DEFAULT,
    data_digests=_data_digests(GLUE, GLUE_DEFAULT),
    hub_datasets=hub_datasets(GLUE),
    gates={name: data.gate for name, data in GLUE.items() if data.gate is not None},
)
SUPERGLUE_TASK = _benchmark_type(
    "superglue",
    "SuperGLUE fine-tuning: BoolQ, CB, COPA (multiple choice), WiC accuracy",
    SUPERGLUE,
    SUPERGLUE_DEFAULT,
    data_digests=_data_digests(SUPERGLUE, SUPERGLUE_DEFAULT),
    hub_datasets=hub_datasets(SUPERGLUE),
)
SYNTHETIC_TASK = _benchmark_type(
    "synthetic",
    "CoLA-like acceptability (subject-verb agreement) in the embedded synthetic "
    "language: no download",
    SYNTHETIC,
    SYNTHETIC_DEFAULT,
)
XNLI_TASK = TaskType(
    name="xnli",
    description="XNLI: translate-train or English-only zero-shot transfer, "
    "accuracy per language and average",
    run=run_xnli,
    params=XNLIParams,
    describe=describe_xnli,
    kinds=("encoder",),
    check=_check_xnli,
    data_digests=_xnli_digests,
    hub_tasks={"encoder": "text-classification"},
    hub_datasets=hub_datasets({lang: xnli(lang) for lang in XNLI_LANGUAGES}),
    gates={
        **{lang: XNLI_GATE for lang in XNLI_LANGUAGES},
        "average": Gate("average", 1 / 3, 0.02, paper="55.37 % and 62.87 % (Table 5)"),
    },
)
TASKS.add(GLUE_TASK.name, GLUE_TASK)
TASKS.add(SUPERGLUE_TASK.name, SUPERGLUE_TASK)
TASKS.add(SYNTHETIC_TASK.name, SYNTHETIC_TASK)
TASKS.add(XNLI_TASK.name, XNLI_TASK)
