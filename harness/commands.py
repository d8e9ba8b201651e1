"""The commands of `hlm`'s harness verbs (`cmd_run`, `cmd_leaderboard`, ...), thin layers over the
library, each importing what it uses when it runs; their flags are in `harness.parsers`."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.logs import verbosity
from harness.suite import expand_suite_refs, last_suite, resolve_suite_path, suite_name

if TYPE_CHECKING:
    from harness.run.cells import Selection


def trust_plugins(args: argparse.Namespace) -> None:
    """`--trust-plugins`: suites may run code (plugin files, lm-eval task folders) from
    outside their folder."""
    from zoo.registry import TRUST_ENV

    if args.trust_plugins:
        os.environ[TRUST_ENV] = "1"


def cmd_validate(args: argparse.Namespace) -> int:
    from harness.run.cells import expand, moved_shared_data, short_warm_ups
    from harness.suite import SuiteError, load_suite

    trust_plugins(args)
    problems: list[str] = []
    for path in expand_suite_refs(args.suites):
        try:
            suite = load_suite(path, args.max_cells)
            cells = expand(suite)
            sizes = {"model": len(suite.models), "task": len(suite.tasks), "cell": len(cells)}
            said = ", ".join(f"{n} {w}" + "s" * (n != 1) for w, n in sizes.items())
            print(f"{path}: ok ({said})")
            for moved in moved_shared_data(cells):
                print(f"  {moved}")
            for why in short_warm_ups(cells):
                print(f"WARNING {path}: {why}", file=sys.stderr)
        except SuiteError as exc:
            problems += exc.problems
    for p in problems:
        print(p, file=sys.stderr)
    return 2 if problems else 0


def _selection(args: argparse.Namespace) -> Selection:
    from harness.run.cells import Selection

    return Selection(
        model=args.model, task=args.task, seed=args.seed, skip_tasks=tuple(args.skip_task)
    )


def cmd_run(args: argparse.Namespace) -> int:
    from harness.run.runner import plan_suite, run_suite

    trust_plugins(args)
    if args.dry_run:
        plan = plan_suite(
            resolve_suite_path(args.suite),
            Path(args.leaderboards),
            args.force,
            _selection(args),
            args.max_cells,
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
        max_cells=args.max_cells,
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
    from harness.report.tables import WIDTH, render
    from harness.report.view import leaderboard_view
    from harness.results.leaderboard import (
        current_cells,
        known_model,
        no_results,
        read_leaderboard,
    )
    from harness.results.samples import read_samples

    name = suite_name(args.suite)
    directory = Path(args.leaderboards) / name
    df = read_leaderboard(directory)
    if df.empty:
        raise no_results(directory, args.suite)
    if args.at:
        df = _at_budget(df, args.at)
    suite = last_suite(directory)
    baseline = known_model(df, args.baseline) or (suite.baseline if suite is not None else None)
    samples = read_samples(directory, current_cells(directory))
    readable = args.format == "md" and not args.all
    agg, notes = leaderboard_view(df, baseline, samples, args.task, readable)
    width = args.width or min(shutil.get_terminal_size((WIDTH, 24)).columns, WIDTH)
    print(render(agg, args.format, args.sort, width))
    if args.format == "md" and notes:
        print()
        for line in notes:
            print(textwrap.fill(line, width))
    return 0


def _at_budget(df: Any, text: str) -> Any:
    """The rows at budget `text` (tokens=T...), after printing which checkpoint each came from."""
    from tabulate import tabulate

    from harness.results.budgets import at_budget, budget_checkpoints, parse_budget

    measure, value = parse_budget(text)
    table = budget_checkpoints(df, measure, value)
    print(f"each model at {measure} = {value:g}, from the first checkpoint that reached it:")
    print(tabulate(table.to_dict("records"), headers="keys", tablefmt="github") + "\n")
    return at_budget(df, measure, value)


def cmd_plot(args: argparse.Namespace) -> int:
    from harness.report.plots import make_plots
    from harness.results.leaderboard import no_results, read_leaderboard

    name = suite_name(args.suite)
    directory = Path(args.leaderboards) / name
    df = read_leaderboard(directory)
    if df.empty:
        raise no_results(directory, args.suite)
    from zoo.writer import inside

    out = Path(args.out) if args.out else inside(directory, "_plots")
    from harness.results.leaderboard import current_cells
    from harness.results.samples import read_samples

    before = {p.name: p.read_bytes() for p in out.glob("*.png")} if out.is_dir() else {}
    made = make_plots(df, out, read_samples(directory, current_cells(directory)))
    said = {"new": 0, "replaced": 0, "unchanged": 0}
    for f in made:
        was = before.get(Path(f).name)
        state = "new" if was is None else "unchanged" if was == Path(f).read_bytes() else "replaced"
        said[state] += 1
        print(f"{f}" + ("" if state == "unchanged" else f" ({state})"))
    print(f"{len(made)} plots in {out}: " + ", ".join(f"{n} {k}" for k, n in said.items()))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from harness.bench import format_rows, profile_headless_step, run_bench, run_cuda_bench
    from zoo.errors import UserError

    if args.profile:
        print(profile_headless_step())
        return 0
    parts = tuple(args.only) if args.only else ("cwt", "steps")
    if args.device == "cuda" and not args.only and not args.quick:
        parts = ("mfu", *parts)  # the goal's steps first: a short GPU lease measures them
    if "mfu" in parts and args.device != "cuda":
        raise UserError("--only mfu: the step MFU goal is a GPU one; add --device cuda")
    if args.device == "cuda":
        rows = run_cuda_bench(quick=args.quick, parts=parts)
    else:
        rows = run_bench(quick=args.quick, parts=parts)
    print(format_rows(rows, args.json))
    return 1 if any(r.status == "FAIL" for r in rows) and args.strict else 0


PAPER_PAGE = Path("docs/REPRODUCTION.md")


def _paper_report(args: argparse.Namespace) -> int:
    """`hlm report --paper`: the project's page and the README's headline from leaderboards/
    (the page says it is made from there, and links its plots there), or with --out a page
    of any folder written elsewhere."""
    from harness.paper.document import write_reproduction
    from zoo.errors import UserError

    root = Path(args.leaderboards)
    doc = Path(args.out) if args.out else PAPER_PAGE
    if root.resolve() != Path("leaderboards").resolve() and doc.resolve() == PAPER_PAGE.resolve():
        raise UserError(
            f"hlm report --paper: {PAPER_PAGE} and the README's headline are made from "
            f"leaderboards/; for a page of {root}, give --out FILE (another file)"
        )
    readme = None if args.out else Path("README.md")  # the headline follows the project's page
    for path in write_reproduction(root, doc, readme):
        print(f"wrote {path}" + (" (its headline sentence)" if path == readme else ""))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from harness.report.page import write_report
    from zoo.errors import UserError

    if sum((args.paper, args.claims is not None, args.suite is not None)) > 1:
        raise UserError("hlm report: a suite, --paper or --claims FILE, one of them")
    if args.paper:
        return _paper_report(args)
    if args.claims is not None:
        from harness.paper.claims_page import write_claims_page

        out = Path(args.out) if args.out else None
        print(write_claims_page(Path(args.claims), Path(args.leaderboards), out))
        return 0
    if args.suite is None:
        raise UserError("hlm report: name a suite, or pass --paper or --claims FILE")
    from harness.paper.document import report_section

    name = suite_name(args.suite)
    out_path = Path(args.out) if args.out else None
    out = write_report(Path(args.leaderboards) / name, name, out_path, [report_section])
    print(out)
    return 0


def cmd_runs(args: argparse.Namespace) -> int:
    from harness.run.listing import format_runs, list_runs
    from zoo.train.names import runs_dir

    states = list_runs(args.pattern)
    if not states:
        print(f"no named run matches {args.pattern!r} under {runs_dir()}/by-name")
        return 0
    print(format_runs(states))
    return 0
