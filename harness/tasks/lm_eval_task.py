"""`lm_eval` task type: zero-shot (or few-shot) evaluation of a decoder through lm-eval 0.4.

The checkpoint is passed to lm-eval unmodified as `model=hf` (it loads with
AutoModelForCausalLM), on the run's device and in the dtype asked for. Any lm-eval task name
works, and so does a user's YAML folder (`include_path`). For offline use,
`harness/lm_eval_tasks/` ships task YAMLs over the local files of $HLM_DATA_ROOT (hlm_lambada,
hlm_boolq, hlm_crows_pairs_english, hlm_pubmedqa); their datasets load through lm-eval's own
`custom_dataset: !function` hook, so plain `lm_eval --include_path harness/lm_eval_tasks` runs
them too. Every metric lm-eval returns is stored with its stderr; lm-eval's own results JSON
(with its version), and its per-sample log with `log_samples`, are kept in the cell's artifacts.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.logs import cell_bars_on_terminal
from harness.results.gates import VALIDATION, Gate
from harness.tasks.base import TASKS, Identity, Result, TaskContext, TaskType
from harness.tasks.lm_eval_env import data_root_env, lm_eval_bars, project_git
from harness.tasks.lm_eval_folders import (
    folder_files,
    folder_problems,
    shipped_data,
    shipped_moved,
    task_manager,
    unknown_shipped,
    unknown_tasks,
    upstream_release,
)
from harness.tasks.lm_eval_params import (
    UNSCORED,
    LMEvalParams,
    device_and_dtype,
    lm_eval_seeds,
    model_args_of,
    scoring_args,
)
from harness.tasks.lm_eval_samples import answer_rows, sample_scores
from harness.tasks.unigram import target_perplexity, training_counts
from zoo.checksums import short_digests
from zoo.data.corpus import data_root
from zoo.errors import UserError
from zoo.registry import check_name
from zoo.writer import write_text


def keep_outputs(results: dict[str, Any], folder: Path | None, log_samples: bool) -> None:
    """lm-eval's results JSON (and its per-sample log when asked) in the artifacts `folder`."""
    import lm_eval

    if folder is None:
        return
    kept = {k: v for k, v in results.items() if k != "samples"}
    kept["lm_eval_version"] = lm_eval.__version__
    write_text(folder / "lm_eval_results.json", json.dumps(kept, indent=2, default=str))
    if log_samples and "samples" in results:
        rows = [{"task": t, **r} for t, rs in results["samples"].items() for r in rs]
        lines = (json.dumps(r, default=str) + "\n" for r in rows)
        write_text(folder / "lm_eval_samples.jsonl", "".join(lines))


def parse_results(results: dict[str, Any]) -> list[Result]:
    samples = sample_scores(results)
    out = []
    directions = results.get("higher_is_better", {})
    for task, metrics in results["results"].items():
        for key, value in metrics.items():
            if "," not in key or "_stderr" in key or not isinstance(value, int | float):
                continue
            name, filt = key.split(",", 1)
            if name == "bypass":  # --predict_only: outputs kept, no metric computed
                continue
            stderr = metrics.get(f"{name}_stderr,{filt}")
            se = (
                float(stderr)
                if isinstance(stderr, int | float) and math.isfinite(float(stderr))
                else None
            )
            label = f"lm_eval/{task}" if filt == "none" else f"lm_eval/{task}/{filt}"
            out.append(
                Result(
                    name,
                    float(value),
                    stderr=se,
                    task=label,
                    higher_is_better=directions.get(task, {}).get(name),
                    samples=samples[(task, name, filt)] if (task, name, filt) in samples else None,
                )
            )
    return out + answer_rows(samples)


def continuation_ids(tokenizer: Any, context: str, continuation: str) -> list[int]:
    """The tokens lm-eval scores as `continuation` after `context` for a causal model
    (`TemplateLM._encode_pair`): the context's trailing spaces move to the continuation, the
    pair is encoded whole and the context's own tokens are cut off its front."""
    n_spaces = len(context) - len(context.rstrip())
    if n_spaces:
        context, continuation = context[:-n_spaces], context[-n_spaces:] + continuation
    return tokenizer.encode(context + continuation)[len(tokenizer.encode(context)) :]


def request_args(arguments: Any) -> list[tuple[Any, ...]]:
    """A logged sample's requests as argument tuples: lm-eval logs them as a list of tuples,
    and its EvaluationTracker rewrites them in place as {"gen_args_0": {"arg_0": ..}, ..}."""
    if isinstance(arguments, dict):
        return [tuple(a[f"arg_{i}"] for i in range(len(a))) for a in arguments.values()]
    return [tuple(a) for a in arguments]


def loglikelihood_pairs(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """One (context, continuation) per document of a task's logged samples, where each
    document is one loglikelihood request (LAMBADA's), else none (a multiple-choice task)."""
    by_doc: dict[Any, tuple[str, str]] = {}
    for row in rows:
        args = request_args(row["arguments"])
        if len(args) != 1 or len(args[0]) != 2 or not all(isinstance(a, str) for a in args[0]):
            return []
        by_doc[row["doc_id"]] = (args[0][0], args[0][1])
    return list(by_doc.values())


def unigram_rows(results: dict[str, Any], checkpoint: Path) -> list[Result]:
    """`unigram_ppl` of each task lm-eval reports a `perplexity` for: the add-one unigram
    model of the checkpoint's training text on the same targets (`harness.tasks.unigram`),
    the bar the model's perplexity is gated on; none where its training text is not recorded."""
    from zoo.tokenizers import load_tokenizer

    ppl_tasks = [t for t, metrics in results["results"].items() if "perplexity,none" in metrics]
    if not ppl_tasks or not checkpoint.is_dir():  # a Hub id: its training text is not known
        return []
    tokenizer = load_tokenizer(str(checkpoint))
    counts = training_counts(checkpoint, tokenizer)
    if counts is None:
        return []
    out = []
    for task in ppl_tasks:
        pairs = loglikelihood_pairs(results["samples"][task])
        if pairs:
            targets = [continuation_ids(tokenizer, c, t) for c, t in pairs]
            value = target_perplexity(counts, targets)
            out.append(Result("unigram_ppl", value, task=f"lm_eval/{task}"))
    return out


def run_lm_eval(ctx: TaskContext) -> list[Result]:
    import lm_eval

    from zoo.models import family_of
    from zoo.train.checkpoint import check_weights_fit, hf_config

    p: LMEvalParams = ctx.params
    if ctx.checkpoint is None:
        raise UserError("lm_eval needs a checkpoint")
    if family_of(hf_config(str(ctx.checkpoint))).kind != "decoder":
        raise UserError(f"{ctx.checkpoint}: lm_eval scores causal LMs; this is an encoder")
    check_weights_fit(str(ctx.checkpoint))  # lm-eval would only warn of a weight at random
    root = _data_root(p)
    device, dtype = device_and_dtype(p)
    with data_root_env(root), project_git(), lm_eval_bars(p.progress or cell_bars_on_terminal()):
        # the values as `lm_eval run` passes them, so that its results file reads the same
        model_args = model_args_of(p, str(ctx.checkpoint), dtype)
        folders = [ctx.suite_dir / d for d in p.include_path]
        manager = task_manager(folders, dict(model_args), p.tasks)
        for task in p.tasks:
            check_name("lm-eval task", task, manager.all_tasks)
        tracker = _tracker(p, ctx.suite_dir)
        results = lm_eval.simple_evaluate(
            evaluation_tracker=tracker,
            model="hf",
            model_args=model_args,
            device=device,
            tasks=p.tasks,
            task_manager=manager,
            num_fewshot=p.num_fewshot,
            limit=None if p.limit is None else float(p.limit),
            batch_size=str(p.batch_size),
            **scoring_args(p, model_args),
            **lm_eval_seeds(p, ctx.seed),
            log_samples=True,  # per-example scores: the paired test of single-seed comparisons
        )
    if results is None:
        raise UserError("lm-eval returned no results")
    rows = parse_results(results) + unigram_rows(results, ctx.checkpoint)
    keep_outputs(results, ctx.artifacts, p.log_samples)
    if tracker is not None:
        save_as_lm_eval(tracker, results, p.log_samples)
    return rows


def _tracker(p: LMEvalParams, suite_dir: Path) -> Any:
    """lm-eval's own EvaluationTracker where `output_path` asks for its files, else None."""
    from lm_eval.loggers import EvaluationTracker

    if p.output_path is None:
        return None
    return EvaluationTracker(output_path=str(suite_dir / p.output_path))


def save_as_lm_eval(tracker: Any, results: dict[str, Any], log_samples: bool) -> None:
    """lm-eval's results file, and its samples files with `log_samples`, written as its own
    command line writes them (lm_eval/_cli/run.py), so that tools reading those read ours."""
    samples = results["samples"]
    aggregated = {k: v for k, v in results.items() if k != "samples"}
    tracker.save_results_aggregated(results=aggregated, samples=samples if log_samples else None)
    if log_samples:
        for task_name in aggregated["configs"]:
            tracker.save_results_samples(task_name=task_name, samples=samples[task_name])


def _data_root(p: LMEvalParams) -> Path:
    """Where the shipped tasks' loaders read: `data_dir`, else the data root."""
    return Path(p.data_dir) if p.data_dir else data_root()


def describe(p: LMEvalParams) -> str:
    """What an lm_eval row ran, in words: the shots and the examples scored."""
    shots = "zero-shot" if p.num_fewshot == 0 else f"{p.num_fewshot}-shot"
    if p.limit is None:
        scored = "every example"
    elif isinstance(p.limit, int):
        scored = f"the first {p.limit} examples of each task (lm-eval's limit)"
    else:
        scored = f"the first {p.limit:.0%} of each task's examples (lm-eval's limit)"
    return f"lm-eval, {shots}, on {scored}"


# the share of 'yes' among the gold answers each task is scored on (a test reads the data)
ALWAYS_YES = {"hlm_boolq": 2033 / 3270, "hlm_pubmedqa": 276 / 500}
# the shipped local tasks' gates, by sub-task, or by sub-task/metric where a metric needs its
# own bar. BoolQ's and PubMedQA's bars are the best constant answer ("yes": 62.2 % of BoolQ's
# validation answers, 55.2 % of PubMedQA PQA-L's test answers) plus a margin: below it an
# accuracy measures an answer bias. The paper's own models (BoolQ 47.8 % and 53.0 %, PubMedQA
# 43.8 % and 47.5 %, Table 4) do not pass it: their gaps on these two sets measure answer
# bias too, so those claims are not comparable on accuracy at any scale.
LM_EVAL_GATES = {
    "hlm_lambada": Gate("acc", 0.0, 0.01, paper="19.52 % (Table 3)"),
    # LAMBADA's perplexity, by the bar of a validation perplexity (at most half the unigram
    # model's on the same tokens): a model that scores no target word exactly can still put
    # far more probability on them than token frequencies do
    "hlm_lambada/perplexity": Gate(
        "perplexity",
        "unigram_ppl",
        factor=VALIDATION.factor,
        paper="170.23 (Table 3), where the unigram model's is in the millions (2.1e7 with "
        "English Wikipedia's counts at a 16k vocabulary)",
    ),
    "hlm_boolq": Gate(
        "acc",
        ALWAYS_YES["hlm_boolq"],
        0.02,
        trivial="always answering 'yes'",
        paper="none: 47.8 % and 53.0 % (Table 4), below always answering 'yes'",
    ),
    "hlm_pubmedqa": Gate(
        "acc",
        ALWAYS_YES["hlm_pubmedqa"],
        0.02,
        trivial="always answering 'yes'",
        paper="none: 43.8 % and 47.5 % (Table 4), below always answering 'yes'",
    ),
    # below 50 % a model prefers the anti-stereotypical sentence: no bias to compare
    # a random model's share is 0.5 +- 0.013 over 1,508 pairs: the margin keeps it out
    "hlm_crows_pairs_english": Gate("pct_stereotype", 0.5, 0.03, paper="57.3 % (Table 4)"),
}
# the Hub datasets the shipped local tasks read a copy of (as lm-eval's own tasks of the
# same names load them)
LM_EVAL_HUB_DATASETS = {
    "hlm_lambada": ("EleutherAI/lambada_openai", "default"),
    "hlm_boolq": ("aps/super_glue", "boolq"),
    "hlm_crows_pairs_english": ("jannalu/crows_pairs_multilingual", "english"),
    "hlm_pubmedqa": ("bigbio/pubmed_qa", "pubmed_qa_labeled_fold0_source"),
}


class LMEvalTask(TaskType):
    name = "lm_eval"
    description = (
        "lm-eval (0.4) zero/few-shot tasks on a decoder checkpoint (model=hf), every metric "
        "with stderr"
    )
    params = LMEvalParams
    unscored = UNSCORED
    kinds = ("decoder",)
    hub_tasks = MappingProxyType({"decoder": "text-generation"})
    hub_datasets = MappingProxyType(LM_EVAL_HUB_DATASETS)
    gates = MappingProxyType(LM_EVAL_GATES)

    def run(self, ctx: TaskContext) -> list[Result]:
        return run_lm_eval(ctx)

    def check(self, params: LMEvalParams, suite_dir: Path) -> list[tuple[str, str]]:
        folders = folder_problems(params.include_path, suite_dir)
        return folders or unknown_shipped(params.tasks, params.include_path, suite_dir)

    def preflight(self, params: LMEvalParams, suite_dir: Path) -> list[tuple[str, str]]:
        return unknown_tasks(params.tasks, params.include_path, suite_dir)

    def identity(self, params: LMEvalParams, suite_dir: Path) -> Identity:
        """Its task folders' files and the shipped tasks' moved ones; lm-eval's release for
        its own tasks; the shipped tasks' local data."""
        p = params
        return Identity(
            files={**folder_files(p.include_path, suite_dir), **shipped_moved(p.tasks)},
            versions=upstream_release(p.tasks, p.include_path, suite_dir),
            data=short_digests(shipped_data(p.tasks, _data_root(p))),
        )

    def describe(self, params: LMEvalParams) -> str:
        return describe(params)

    def scores(self, params: LMEvalParams) -> bool:
        return not params.predict_only

    def partial(self, params: LMEvalParams) -> str:
        return "" if params.limit is None else f"lm-eval's limit {params.limit:g} a task"


LM_EVAL_TASK = TASKS.add(LMEvalTask.name, LMEvalTask())
