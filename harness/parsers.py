"""The flags of `hlm`'s verbs, and nothing heavy: each verb's parser is built here from argparse
alone, and names its command as "module:function", imported only when the verb runs. So
`hlm --help` and `hlm VERB --help` answer without importing torch, transformers or pandas
(`hlm bench --only cli` measures it).

    VERBS["run"]          # (one-line help, "module:builder") of every verb
    command(args)         # the function a parsed command line names
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from harness.flags import (
    LM_EVAL_SEEDS,
    add_leaderboards,
    add_max_cells,
    add_refused,
    add_trust,
    int_at_least,
    lm_eval_flag,
    lm_eval_seeds,
    positive,
)
from zoo.registry import resolve_target

MAX_FEWSHOT = 1000  # past any task's examples: lm-eval fails deep inside past its own

# verb: (one-line help, its parser's builder); the order is `hlm --help`'s
VERBS: dict[str, tuple[str, str]] = {
    "ls": ("list objectives, presets, loss kernels and task types", "harness.cli:add_ls"),
    "pretrain": ("pretrain a model (flags and/or a YAML config)", "harness.cli:add_pretrain"),
    "finetune-causal": (
        "causal fine-tuning of a headless decoder (new LM head from the embeddings)",
        "harness.cli:add_finetune_causal",
    ),
    "validate": (
        "check suite YAML files without computing anything",
        "harness.parsers:add_validate",
    ),
    "run": (
        "run a suite: pretrain what is missing, evaluate, write the leaderboard",
        "harness.parsers:add_run",
    ),
    "runs": (
        "the cached pretraining runs by name (suite/model/seed-N), with their state",
        "harness.parsers:add_runs",
    ),
    "leaderboard": (
        "print a suite's leaderboard (seeds aggregated, models x metrics)",
        "harness.parsers:add_leaderboard",
    ),
    "publish": (
        "upload a checkpoint (model card) or a leaderboard (dataset card) to the Hub",
        "harness.cli:add_publish",
    ),
    "bench": (
        "measure loss kernels and training steps side by side, against targets",
        "harness.parsers:add_bench",
    ),
    "plot": ("write PNG figures of a suite's leaderboard", "harness.parsers:add_plot"),
    "evaluate": (
        "lm-eval tasks on one checkpoint, with lm_eval's flags and results file",
        "harness.parsers:add_evaluate",
    ),
    "report": (
        "write one static HTML page of a leaderboard (tables, figures, provenance)",
        "harness.parsers:add_report",
    ),
    "power": (
        "the power of a leaderboard's seeds: detectable Δ, seeds needed for an effect",
        "harness.parsers:add_power",
    ),
}


def command(args: argparse.Namespace) -> Callable[[argparse.Namespace], int]:
    """The command a parsed command line runs."""
    func = args.func
    return resolve_target(func) if isinstance(func, str) else func


def add_verbs(sub: Any, verb: str | None) -> None:
    """Every verb's parser into `sub`; the flags of `verb` only (all of them for None)."""
    for name, (help_text, builder) in VERBS.items():
        p = sub.add_parser(
            name, help=help_text, description=f"{help_text[:1].upper()}{help_text[1:]}."
        )
        if verb is None or name == verb:
            resolve_target(builder)(p)


def add_power(p: argparse.ArgumentParser) -> None:
    p.description = (
        "For every model, sweep point, task and metric it shares with the baseline, each arm "
        "is reduced to one value per pretraining seed and compared: the seeds, the observed "
        "Δ, the seed-level spread, the smallest |Δ| these seeds detect at 80 % power "
        "(two-sided, α = 0.05 / --claims), and for the effect asked (--effect) the power the "
        "seeds had and the seeds per arm it would need. A pilot's spread in, the seeds out. "
        "No power is given at the observed Δ: it is a function of p alone and says nothing "
        "the test has not."
    )
    p.add_argument("suite", help="suite name or YAML path")
    p.add_argument("--baseline", help="model compared against (default: the suite's baseline)")
    p.add_argument(
        "--effect",
        type=positive,
        help="the |Δ| to size for, in the metric's unit, decided before looking (the paper's "
        "Δ, or the smallest that would matter); unset: no power column",
    )
    p.add_argument("--task", help="only tasks matching this label (as `hlm leaderboard --task`)")
    p.add_argument(
        "--metric",
        help="only this metric (--effect is in one metric's unit: val_ce, not val_ppl)",
    )
    p.add_argument(
        "--claims",
        type=int_at_least(1),
        default=1,
        help="the tests corrected together for many claims (as `hlm report --paper` corrects "
        "its page, Holm): power at α = 0.05/CLAIMS, Bonferroni's level, a lower bound on "
        "Holm's (default 1: a test alone)",
    )
    add_leaderboards(p)
    p.set_defaults(func="harness.report.power:cmd_power")


def add_evaluate(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Run lm-eval 0.4 tasks on a decoder checkpoint and print lm-eval's table. It takes "
        "lm_eval's own flags with their meanings (`lm_eval --model hf --model_args "
        "pretrained=CKPT --tasks hlm_lambada --output_path out` works as `hlm evaluate ...`, "
        "and --output_path writes lm-eval's own results file). The shipped offline tasks "
        "(hlm_lambada, hlm_boolq, hlm_crows_pairs_english, hlm_pubmedqa) read $HLM_DATA_ROOT; "
        "--include_path adds your task folders. With --leaderboard NAME the rows are also "
        "added to leaderboards/NAME/."
    )
    p.add_argument(
        "checkpoint",
        nargs="?",
        help="a checkpoint folder, run name (`hlm runs`) or hub id (or --model_args pretrained=)",
    )
    lm_eval_flag(
        p,
        "tasks",
        "-t",
        nargs="+",
        required=True,
        help="lm-eval task names, comma- or space-separated",
    )
    lm_eval_flag(
        p, "model", "-M", default="hf", help="lm-eval's model type: hf (the one hlm evaluates)"
    )
    lm_eval_flag(
        p,
        "model_args",
        "-a",
        nargs="+",
        default=[],
        help="key=val,key2=val2 as lm-eval's: pretrained (the checkpoint), dtype, device",
    )
    lm_eval_flag(p, "limit", "-L", help="examples per task, or a fraction of them below 1")
    lm_eval_flag(
        p,
        "num_fewshot",
        "-f",
        type=int_at_least(0, MAX_FEWSHOT),
        help=f"few-shot examples (default: 0; at most {MAX_FEWSHOT})",
    )
    lm_eval_flag(p, "batch_size", "-b", default="8", help="an integer, auto or auto:N (default: 8)")
    lm_eval_flag(
        p,
        "include_path",
        nargs="+",
        default=[],
        help="folders of your task YAMLs; their !function hooks run Python, as with lm_eval: "
        "name only folders you trust",
    )
    lm_eval_flag(
        p, "output_path", "-o", help="lm-eval's results file (and samples): a folder or a .json"
    )
    lm_eval_flag(
        p, "log_samples", "-s", action="store_true", help="also write lm-eval's per-sample log"
    )
    lm_eval_flag(p, "device", help="auto, cpu or cuda (default: auto)")
    p.add_argument("--dtype", help="auto, float32, bfloat16 or float16 (default: auto)")
    lm_eval_flag(
        p,
        "seed",
        type=lm_eval_seeds,
        default=lm_eval_seeds(LM_EVAL_SEEDS),
        help="lm-eval's seeds for python random, numpy, torch and few-shot sampling: one "
        f"integer for all four, or 4 comma-separated, None leaving one unset (default: "
        f"{LM_EVAL_SEEDS}, as lm_eval's); the first is the row's seed",
    )
    p.add_argument(
        "--label", help="the model's label in the leaderboard (default: the run's folder name)"
    )
    p.add_argument("--leaderboard", help="also add the rows to leaderboards/NAME/")
    add_leaderboards(p)
    add_refused(p)  # lm_eval run's other flags: each refused with why
    p.set_defaults(func="harness.run.evaluate:cmd_evaluate")


def add_validate(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Load and validate suites: every key, registry name, path and sweep value. "
        "Prints one line per problem (FILE: KEY: message); exit status 2 if any. Validating "
        "imports the suite's plugin files, which runs their code: only with --trust-plugins "
        "(which also lets an lm_eval task folder's YAMLs run code through their !function "
        "hooks); a suite with neither needs no flag."
    )
    p.add_argument(
        "suites", nargs="+", metavar="SUITE", help="suite YAML paths or names under suites/"
    )
    add_trust(p)
    add_max_cells(p)
    p.set_defaults(func="harness.commands:cmd_validate")


def add_run(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Validate the suite, expand it into cells (model x sweep point x seed x task), skip "
        "cells already in leaderboards/<suite>/, compute the rest. Pretrained checkpoints are "
        "cached in $HLM_RUNS_DIR (default runs/) by configuration hash."
    )
    p.add_argument("suite", help="suite YAML path or name under suites/")
    add_trust(p)
    add_max_cells(p)
    p.add_argument(
        "--force", action="store_true", help="recompute cells already in the leaderboard"
    )
    p.add_argument("--model", help="run only the cells of this model label")
    p.add_argument(
        "--task",
        help="run only the cells of this task label (its `name:`, else its type); with "
        "--force, re-measure them, e.g. `--task throughput --force` on a quiet machine",
    )
    p.add_argument(
        "--skip-task",
        action="append",
        default=[],
        metavar="TASK",
        help="leave out the cells of this task label (repeatable): `--skip-task throughput` "
        "while other work shares the machine, then `--task throughput` once it is quiet",
    )
    p.add_argument(
        "--seed",
        type=int,
        help="run only the cells of this seed, for every model: `--seed 0`, then `--seed 1`, "
        "so that each stretch of work leaves whole seeds, each a paired comparison (two runs "
        "with the same --seed share its cells)",
    )
    p.add_argument(
        "--publish", action="store_true", help="run the suite's `publish:` step at the end"
    )
    add_leaderboards(p)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (cells to compute and done, pretraining runs cached or to train) "
        "and write nothing",
    )
    p.set_defaults(func="harness.commands:cmd_run")


def add_leaderboard(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", help="suite name or YAML path")
    p.add_argument(
        "--format",
        choices=["md", "csv", "json"],
        default="md",
        help="md: pivot table; csv/json: long table",
    )
    p.add_argument(
        "--baseline", help="model label to test against (default: the suite's `baseline`)"
    )
    p.add_argument("--sort", help="column (task/metric) to sort by, in its better direction")
    p.add_argument("--task", help="only this task (or family of sub-tasks: lm_eval, glue)")
    p.add_argument(
        "--at",
        metavar="BUDGET",
        help="compare at a matched budget: steps=N, tokens=T, flops=F or seconds=S; each "
        "model's rows come from its first checkpoint that reached it (see the suite's compare_at)",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="md: also informational metrics (params, FLOPs) and @best columns",
    )
    p.add_argument(
        "--width",
        type=int_at_least(1),
        default=None,
        help="md: widest table line; wider tables are turned (models as columns) or cut "
        "(default: the terminal's width, at most 120)",
    )
    add_leaderboards(p)
    p.set_defaults(func="harness.commands:cmd_leaderboard")


def add_bench(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Speed and memory of the CWT kernels (plain, chunked, recompute, torch), the "
        "duplicate modes, and whole training steps (hf-default, fair vanilla, headless, sparse "
        "embeddings, bf16), with ratios measured in the same run against the project's goals "
        "(docs/PERFORMANCE.md) and an fp32 matmul roofline measured in the same run."
    )
    p.add_argument("--quick", action="store_true", help="smaller shapes: a few minutes")
    p.add_argument(
        "--json", action="store_true", help="rows as JSON: name, value, unit, target, status"
    )
    p.add_argument(
        "--only",
        nargs="+",
        choices=["cwt", "steps", "compile", "corpus", "cli", "mfu"],
        help="run only these parts (not in the default run: compile, eager vs torch.compile "
        "steps; corpus, tokenisation speed, cache size and pretraining memory as the corpus "
        "grows 20x; cli, how long `hlm VERB --help` takes; mfu, with --device cuda only, the "
        "headless bert-base step at 256 x 128 tokens eager, compiled and as CUDA graphs, "
        "against the MFU goal of 0.40, which `steps` also runs after its table)",
    )
    p.add_argument(
        "--profile", action="store_true", help="print a torch.profiler table of a headless step"
    )
    p.add_argument("--strict", action="store_true", help="exit 1 if any target FAILs")
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="cpu (default): the goals of docs/PERFORMANCE.md, fp32; cuda: the same comparisons "
        "on a GPU under bf16 autocast, with cut-cross-entropy / Liger kernels where installed "
        "(INFO rows)",
    )
    p.set_defaults(func="harness.commands:cmd_bench")


def add_plot(p: argparse.ArgumentParser) -> None:
    p.add_argument("suite", help="suite name or YAML path")
    p.add_argument("--out", help="output folder (default: leaderboards/<suite>/_plots)")
    add_leaderboards(p)
    p.set_defaults(func="harness.commands:cmd_plot")


def add_report(p: argparse.ArgumentParser) -> None:
    p.description = (
        "One self-contained HTML file (no CDN: opens offline): a sortable table per "
        "task with significance marks, every figure of `hlm plot`, and the rows' provenance "
        "(commits, versions, budgets reached, the machine the page was made on)."
    )
    p.add_argument("suite", nargs="?", help="suite name or YAML path")
    p.add_argument(
        "--paper",
        action="store_true",
        help="instead: the paper's claims (suites/claims/paper.yaml) judged from the paper-* "
        "leaderboards into docs/REPRODUCTION.md, its figures in docs/figures/ (verdicts.svg: "
        "the judged claims; gates.svg: the baselines' gates) and the headline sentence of "
        "./README.md",
    )
    p.add_argument(
        "--claims",
        metavar="FILE",
        help="instead: judge the claims a YAML file declares (per scale: suite, arms, task, "
        "metric, the direction or numbers stated, the design, the gates) from the "
        "leaderboards, into <leaderboards>/<name>-claims.md (see harness/paper/claims_file.py)",
    )
    p.add_argument(
        "--out",
        help="the page's path (default: leaderboards/<suite>/report.html; with --paper "
        "docs/REPRODUCTION.md, whose headline sentence is also written into README.md; "
        "with --out, only the page and its figures/ beside it)",
    )
    add_leaderboards(p)
    p.set_defaults(func="harness.commands:cmd_report")


def add_runs(p: argparse.ArgumentParser) -> None:
    p.description = (
        "The runs `hlm run` trained, by name (suite/model/seed-N, linked in "
        "$HLM_RUNS_DIR/by-name/), each with its state (done, training, stopped, damaged), the "
        "step reached and its checkpoints. Every command that takes a checkpoint takes such "
        "a name, with @step-N for a checkpoint along the run: `hlm evaluate "
        "paper-cpu-decoder/pythia-tiny-ce/seed-0 --tasks hlm_lambada`."
    )
    p.add_argument("pattern", nargs="?", default="*", help="a glob over names (default: all)")
    p.set_defaults(func="harness.commands:cmd_runs")
