"""The `xnli` task type: fine-tune the encoder on XNLI, translate-train (each language on its
own data) or zero-shot transfer (English only, scored on every language); accuracy per
language and their average, with the fine-tuning runs of `harness.tasks.encoder_benchmarks`.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from harness.downstream.benchmarks import XNLI_GATE, XNLI_LANGUAGES, xnli
from harness.results.gates import Gate
from harness.tasks.base import TASKS, Identity, Result, TaskContext, TaskType
from harness.tasks.encoder_benchmarks import (
    average_rows,
    finetune_runs,
    hub_datasets,
    read_digests,
    read_split,
    run_rows,
)
from harness.tasks.finetune_params import XNLIParams, describe_xnli


def run_xnli(ctx: TaskContext) -> list[Result]:
    p: XNLIParams = ctx.params
    assert ctx.checkpoint is not None
    prefix = f"xnli-{p.mode}"
    results: list[Result] = []
    if p.mode == "zero-shot":
        evals = {lang: read_split(xnli(lang), p, "eval") for lang in p.languages}
        runs = finetune_runs(
            ctx.checkpoint, xnli("en"), read_split(xnli("en"), p, "train"), evals, p, ctx.seed
        )
        for lang in p.languages:
            results += run_rows(f"{prefix}/{lang}", xnli(lang), runs, lang)
    else:
        for lang in p.languages:
            task = xnli(lang)
            runs = finetune_runs(
                ctx.checkpoint,
                task,
                read_split(task, p, "train"),
                {lang: read_split(task, p, "eval")},
                p,
                ctx.seed,
            )
            results += run_rows(f"{prefix}/{lang}", task, runs, lang)
    return results + average_rows(
        prefix, results, {f"{prefix}/{lang}": "accuracy" for lang in p.languages}
    )


def _xnli_digests(p: XNLIParams, suite_dir: Path) -> dict[str, str | None]:
    """The XNLI files a cell reads: each language's, and English's for zero-shot training."""
    langs = dict.fromkeys([*p.languages, "en"] if p.mode == "zero-shot" else p.languages)
    return read_digests([xnli(lang) for lang in langs if lang in XNLI_LANGUAGES], p)


def _check_xnli(p: XNLIParams, suite_dir: Path) -> list[tuple[str, str]]:
    return [
        (f"languages[{i}]", f"unknown XNLI language {lang!r} (known: {', '.join(XNLI_LANGUAGES)})")
        for i, lang in enumerate(p.languages)
        if lang not in XNLI_LANGUAGES
    ]


class XNLITask(TaskType):
    name = "xnli"
    description = (
        "XNLI: translate-train or English-only zero-shot transfer, accuracy per language and "
        "average"
    )
    params = XNLIParams
    kinds = ("encoder",)
    hub_tasks = MappingProxyType({"encoder": "text-classification"})
    hub_datasets = MappingProxyType(hub_datasets({lang: xnli(lang) for lang in XNLI_LANGUAGES}))
    gates = MappingProxyType(
        {
            **{lang: XNLI_GATE for lang in XNLI_LANGUAGES},
            "average": Gate("average", 1 / 3, 0.02, paper="55.37 % and 62.87 % (Table 5)"),
        }
    )

    def run(self, ctx: TaskContext) -> list[Result]:
        return run_xnli(ctx)

    def check(self, params: XNLIParams, suite_dir: Path) -> list[tuple[str, str]]:
        return _check_xnli(params, suite_dir)

    def identity(self, params: XNLIParams, suite_dir: Path) -> Identity:
        return Identity(data=_xnli_digests(params, suite_dir))

    def describe(self, params: XNLIParams) -> str:
        return describe_xnli(params)


XNLI_TASK = XNLITask()
TASKS.add(XNLI_TASK.name, XNLI_TASK)
