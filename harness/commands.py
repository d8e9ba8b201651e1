"""The harness verbs of `hlm`: validate, run, leaderboard, plot (thin layers over the library)."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.logs import verbosity
from harness.publish.hub import add_publish
from harness.run.evaluate import add_evaluate
from harness.suite import expand_suite_refs, last_suite, resolve_suite_path, suite_name

if TYPE_CHECKING:
    from harness.run.runner import Selection


def trust_plugins(args: argparse.Namespace) -> None:
    """`--trust-plugins`: suites may import plugin files from outside their folder."""
    from harness.suite.loading import TRUST_ENV

    if args.trust_plugins:
        os.environ[TRUST_ENV] = "1"


def cmd_validate(args: argparse.Namespace) -> int:
    from harness.run.cells import expand
    from harness.suite import SuiteError, load_suite

    trust_plugins(args)
    problems: list[str] = []
    for path in expand_suite_refs(args.suites):
        try:
            suite = load_suite(path)
            cells = expand(suite)
            print(
                f"{path}: ok ({len(suite.models)} models, {len(suite.tasks)} tasks, {len(cells)} cells)"
            )
        except SuiteError as exc:
            problems += exc.problems
    for p in problems:
        print(p, file=sys.stderr)
    return 2 if problems else 0


def _selection(args: argparse.Namespace) -> Selection:
    from harness.run.runner import Selection

    return Selection(model=args.model, task=args.task, seed=args.seed)


def cmd_run(args: argparse.Namespace) -> int:
    from harness.run.runner import plan_suite, run_suite

    trust_plugins(args)
    if args.dry_run:
        plan = plan_suite(
            resolve_suite_path(args.suite),
            Path(args.leaderboards),
            args.force,
            _selection(args),
        )
        print(plan.table())
        return 0

    summary = run_suite(
        resolve_suite_path(args.suite),
        force=args.force,
        root=Path(args.leaderboards),
        progress=not args.no_progress and verbosity(args) >= 0,
        select=_selection(args),
        publish=args.publish,
    )
    print(
        f"{summary.total} cells: {summary.skipped} already done, {summary.computed} computed, "
        f"{len(summary.failed)} failed"
        + (f", {summary.elsewhere} by another run" if summary.elsewhere else "")
        + f" -> {summary.leaderboard}"
    )
    for f in summary.failed:
        print(f"failed: {f}", file=sys.stderr)
    for repo in summary.published:
        print(f"published: {repo}")
    return 1 if summary.failed else 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from harness.report.tables import WIDTH, render, select_task
    from harness.results.leaderboard import aggregate, current_cells, read_leaderboard
    from harness.results.metrics import is_baseline
    from harness.results.samples import read_samples
    from harness.results.significance import compare_to_baseline

    name = suite_name(args.suite)
    directory = Path(args.leaderboards) / name
    df = read_leaderboard(directory)
    if df.empty:
        print(f"no results in {directory} (run `hlm run {args.suite}` first)", file=sys.stderr)
        return 1
    if args.task:
        df = df[select_task(df["task"], args.task)]
    if args.at:
        df = _at_budget(df, args.at)
    agg = aggregate(df)
    if args.format == "md" and not args.all:  # readable: no informational (but baselines) or @best
        shown = agg["higher_is_better"].notna() | agg["metric"].map(is_baseline)
        agg = agg[shown & ~agg["metric"].str.contains("@")]
    suite = last_suite(directory)
    baseline = args.baseline or (suite.baseline if suite is not None else None)
    if baseline is not None:
        agg = compare_to_baseline(agg, baseline, read_samples(directory, current_cells(directory)))
    width = args.width or min(shutil.get_terminal_size((WIDTH, 24)).columns, WIDTH)
    print(render(agg, args.format, args.sort, width))
    if args.format == "md" and baseline is not None:
        print(textwrap.fill(footnote(agg, baseline), width))
    return 0


def footnote(agg: Any, baseline: str) -> str:
    """What † means in this table: the tests that made its marks."""
    tests = sorted({t for t, s in zip(agg["test"], agg["significant"], strict=True) if s and t})
    how = "; ".join(tests) if tests else "none significant"
    return (
        f"\n† better than the baseline `{baseline}` at Holm-adjusted p < 0.05 over every "
        f"comparison in this table (two-sided; the pretraining seed is the unit; tests: {how}); "
        "values are mean ± std over seeds at the latest step. A metric comparable only within "
        "one objective (a loss over in-batch negatives) is not compared across objectives."
    )


def _at_budget(df: Any, text: str) -> Any:
    """The rows at budget `text` (tokens=T...), after printing which checkpoint each came from."""
    from tabulate import tabulate

    from harness.results.leaderboard import at_budget, budget_checkpoints, parse_budget

    measure, value = parse_budget(text)
    table = budget_checkpoints(df, measure, value)
    print(f"each model at {measure} = {value:g}, from the first checkpoint that reached it:")
    print(tabulate(table.to_dict("records"), headers="keys", tablefmt="github") + "\n")
    return at_budget(df, measure, value)


def cmd_plot(args: argparse.Namespace) -> int:
    from harness.report.plots import make_plots
    from harness.results.leaderboard import read_leaderboard

    name = suite_name(args.suite)
    directory = Path(args.leaderboards) / name
    df = read_leaderboard(directory)
    if df.empty:
        print(f"no results in {directory}", file=sys.stderr)
        return 1
    out = Path(args.out) if args.out else directory / "_plots"
    from harness.results.leaderboard import current_cells
    from harness.results.samples import read_samples

    for f in make_plots(df, out, read_samples(directory, current_cells(directory))):
        print(f)
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from harness.bench import format_rows, profile_headless_step, run_bench, run_cuda_bench

    if args.profile:
        print(profile_headless_step())
        return 0
    parts = tuple(args.only) if args.only else ("cwt", "steps")
    if args.device == "cuda":
        rows = run_cuda_bench(quick=args.quick, parts=parts)
    else:
        rows = run_bench(quick=args.quick, parts=parts)
    print(format_rows(rows, args.json))
    return 1 if any(r.status == "FAIL" for r in rows) and args.strict else 0


def _add_validate(sub: Any) -> None:
    p = sub.add_parser(
        "validate",
        help="check suite YAML files without computing anything",
        description="Load and validate suites: every key, registry name, path and sweep value. "
        "Prints one line per problem (FILE: KEY: message); exit status 2 if any. Validating "
        "imports the suite's plugin files, which runs their code: only those in the suite's "
        "own folder unless --trust-plugins.",
    )
    p.add_argument(
        "suites", nargs="+", metavar="SUITE", help="suite YAML paths or names under suites/"
    )
    _add_trust(p)
    p.set_defaults(func=cmd_validate)


def _add_trust(p: Any) -> None:
    p.add_argument(
        "--trust-plugins",
        action="store_true",
        help="let a suite import plugin files from outside its own folder (absolute paths, "
        "../): their code runs in this process",
    )


def _add_run(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run a suite: pretrain what is missing, evaluate, write the leaderboard",
        description="Validate the suite, expand it into cells (model x sweep point x seed x task), skip "
        "cells already in leaderboards/<suite>/, compute the rest. Pretrained checkpoints are cached "
        "in $HLM_RUNS_DIR (default runs/) by configuration hash.",
    )
    p.add_argument("suite", help="suite YAML path or name under suites/")
    _add_trust(p)
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
        "--seed",
        type=int,
        help="run only the cells of this seed (two runs with --seed 1 finish seed 1 of every "
        "model before either starts seed 2)",
    )
    p.add_argument(
        "--publish", action="store_true", help="run the suite's `publish:` step at the end"
    )
    p.add_argument(
        "--leaderboards",
        default="leaderboards",
        help="leaderboard root folder (default: leaderboards)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the plan (cells to compute and done, pretraining runs cached or to train) "
        "and write nothing",
    )
    p.set_defaults(func=cmd_run)


def _add_leaderboard(sub: Any) -> None:
    p = sub.add_parser(
        "leaderboard", help="print a suite's leaderboard (seeds aggregated, models x metrics)"
    )
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
        type=int,
        default=None,
        help="md: widest table line; wider tables are turned (models as columns) or cut "
        "(default: the terminal's width, at most 120)",
    )
    p.add_argument("--leaderboards", default="leaderboards")
    p.set_defaults(func=cmd_leaderboard)


def _add_bench(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="measure loss kernels and training steps side by side, against targets",
        description="Speed and memory of the CWT kernels (plain, chunked, recompute, torch), the "
        "duplicate modes, and whole training steps (hf-default, fair vanilla, headless, sparse "
        "embeddings, bf16), with ratios measured in the same run against the project's goals (docs/PERFORMANCE.md) and "
        "an fp32 matmul roofline measured in the same run.",
    )
    p.add_argument("--quick", action="store_true", help="smaller shapes: a few minutes")
    p.add_argument(
        "--json", action="store_true", help="rows as JSON: name, value, unit, target, status"
    )
    p.add_argument(
        "--only",
        nargs="+",
        choices=["cwt", "steps", "compile", "corpus"],
        help="run only these parts (not in the default run: compile, eager vs torch.compile "
        "steps; corpus, tokenisation speed, cache size and pretraining memory as the corpus "
        "grows 20x)",
    )
    p.add_argument(
        "--profile", action="store_true", help="print a torch.profiler table of a headless step"
    )
    p.add_argument("--strict", action="store_true", help="exit 1 if any target FAILs")
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="cpu (default): the goals of docs/PERFORMANCE.md, fp32; cuda: the same comparisons on a GPU under "
        "bf16 autocast, with cut-cross-entropy / Liger kernels where installed (INFO rows)",
    )
    p.set_defaults(func=cmd_bench)


def _add_plot(sub: Any) -> None:
    p = sub.add_parser("plot", help="write PNG figures of a suite's leaderboard")
    p.add_argument("suite", help="suite name or YAML path")
    p.add_argument("--out", help="output folder (default: leaderboards/<suite>/_plots)")
    p.add_argument("--leaderboards", default="leaderboards")
    p.set_defaults(func=cmd_plot)


def cmd_report(args: argparse.Namespace) -> int:
    from harness.report.page import write_report

    if args.paper:
        from harness.paper.document import write_reproduction

        # the README's headline follows the project's own page, not a copy written elsewhere
        doc, readme = (
            (Path(args.out), None)
            if args.out
            else (Path("docs/REPRODUCTION.md"), Path("README.md"))
        )
        for path in write_reproduction(Path(args.leaderboards), doc, readme):
            print(path)
        return 0
    if args.suite is None:
        from zoo.errors import UserError

        raise UserError("hlm report: name a suite, or pass --paper")
    from harness.paper.document import report_section

    name = suite_name(args.suite)
    out_path = Path(args.out) if args.out else None
    out = write_report(Path(args.leaderboards) / name, name, out_path, [report_section])
    print(out)
    return 0


def _add_report(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="write one static HTML page of a leaderboard (tables, figures, provenance)",
        description="One self-contained HTML file (no CDN: opens offline): a sortable table per "
        "task with significance marks, every figure of `hlm plot`, and the rows' provenance "
        "(commits, versions, budgets reached, the machine the page was made on).",
    )
    p.add_argument("suite", nargs="?", help="suite name or YAML path")
    p.add_argument(
        "--paper",
        action="store_true",
        help="instead: the paper's figures beside ours, from the paper-* leaderboards, "
        "into docs/REPRODUCTION.md (and the headline sentence of ./README.md)",
    )
    p.add_argument(
        "--out",
        help="the page's path (default: leaderboards/<suite>/report.html; with --paper "
        "docs/REPRODUCTION.md, whose headline sentence is also written into README.md; "
        "with --out, only the page)",
    )
    p.add_argument("--leaderboards", default="leaderboards")
    p.set_defaults(func=cmd_report)


def add_harness_verbs(sub: Any) -> None:
    from harness.report.power import add_power

    _add_validate(sub)
    _add_run(sub)
    _add_leaderboard(sub)
    add_publish(sub)
    _add_bench(sub)
    _add_plot(sub)
    add_evaluate(sub)
    _add_report(sub)
    add_power(sub)
