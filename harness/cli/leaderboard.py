"""`hlm leaderboard SUITE`: a suite's leaderboard, seeds aggregated, models x metrics, with
significance marks against the baseline (`harness.report.view.leaderboard_view`).

    hlm leaderboard paper-cpu-encoder
    hlm leaderboard paper-cpu-encoder --format csv > rows.csv     # the long table
    hlm leaderboard paper-cpu-decoder --at tokens=5e6             # at a matched budget
    hlm leaderboard cpu-ladder --separation   # where each model separates from its twin
    hlm leaderboard cpu-ladder --hours        # each run's tokens, hours and tokens/s, from the rows
    hlm leaderboard --migrate                 # every folder under leaderboards/, to schema 2
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.flags import add_leaderboards, int_at_least
from zoo.errors import UserError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "suite",
        nargs="?",
        help="suite name or YAML path (with --migrate: default every folder under --leaderboards)",
    )
    p.add_argument(
        "--separation",
        action="store_true",
        help="instead: where each model's gap to its untrained twin first clears the "
        "instrument's gate margin along pretraining (tokens, CPU-hours, seed interval)",
    )
    p.add_argument(
        "--hours",
        action="store_true",
        help="instead: each pretraining run's furthest evaluated checkpoint (tokens, training "
        "hours, tokens/s, machine) and the suite's hours summed, read from the rows alone "
        "(no runs/ folder needed, unlike `hlm runs`)",
    )
    p.add_argument(
        "--migrate",
        action="store_true",
        help="rewrite the folder's result files of an older schema in today's, checking "
        "that every value reads back equal (nothing else is printed)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="with --migrate: say which files would be rewritten, write nothing",
    )
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
        help="compare at a matched budget: steps=N, tokens=T, flops=F or seconds=S (T as 2e6 "
        "or 40.3M); each model's rows come from its first checkpoint that reached it (see "
        "the suite's compare_at)",
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


def run(args: argparse.Namespace) -> int:
    import shutil
    import textwrap

    from harness.report.tables import WIDTH, render
    from harness.report.view import leaderboard_view
    from harness.results.leaderboard import current_cells, known_model
    from harness.results.samples import read_samples
    from harness.suite import last_suite

    if args.migrate:
        return _migrate(args)
    if args.dry_run:
        raise UserError("--dry-run: only with --migrate")
    if args.suite is None:
        raise UserError("give a suite (name or YAML path), or --migrate")
    directory, df = read_rows(args.leaderboards, args.suite)
    if args.separation:
        return _separation(df)
    if args.hours:
        return _hours(df)
    if args.at:
        df = at_budget_rows(df, args.at)
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


def _separation(df: Any) -> int:
    """`--separation`: the table of `harness.report.separation`."""
    from tabulate import tabulate

    from harness.report.separation import SEPARATION_NOTE, point_lines, separation_table

    table = separation_table(df)
    if table.empty:
        raise UserError("no untrained twin (a model of the same preset at step 0) with rows")
    print(tabulate(table.to_dict("records"), headers="keys", tablefmt="github"))
    print("\n" + SEPARATION_NOTE + "\n")
    head, *standing = point_lines(df)
    print("\n".join([head, *(f"  {line}" for line in standing)]))
    return 0


def _hours(df: Any) -> int:
    """`--hours`: the table and line of `harness.results.hours`."""
    from tabulate import tabulate

    from harness.results.hours import hours_line, run_hours

    runs = run_hours(df)
    if not runs.empty:
        print(tabulate(runs.to_dict("records"), headers="keys", tablefmt="github"))
    print(hours_line(runs))
    return 0


def _migrate(args: argparse.Namespace) -> int:
    """`--migrate`: every folder named (or under --leaderboards) in today's schema."""
    from harness.results.leaderboard import result_files
    from harness.results.migrate import migrate_folder
    from harness.suite import suite_name

    root = Path(args.leaderboards)
    if args.suite is not None:
        folders = [root / suite_name(args.suite)]
        if not folders[0].is_dir():
            raise UserError(f"{folders[0]}: no such leaderboard folder")
    else:
        folders = sorted(d for d in root.glob("*") if d.is_dir() and result_files(d))
        if not folders:
            raise UserError(f"{root}: no leaderboard folders with result files")
    for folder in folders:
        done = migrate_folder(folder, dry_run=args.dry_run)
        print(("would rewrite: " if args.dry_run else "") + done.summary())
    return 0


def read_rows(leaderboards: str, suite: str) -> tuple[Path, Any]:
    """The folder of `suite`'s leaderboard under `leaderboards` and its rows; no rows is an
    error that says how to make them."""
    from harness.results.leaderboard import no_results, read_leaderboard
    from harness.suite import suite_name

    directory = Path(leaderboards) / suite_name(suite)
    df = read_leaderboard(directory)
    if df.empty:
        raise no_results(directory, suite)
    return directory, df


def at_budget_rows(df: Any, text: str) -> Any:
    """The rows at budget `text` (tokens=T...), after printing which checkpoint each came from."""
    from tabulate import tabulate

    from harness.results.budgets import at_budget, budget_checkpoints, parse_budget

    measure, value = parse_budget(text)
    table = budget_checkpoints(df, measure, value)
    print(f"each model at {measure} = {value:g}, from the first checkpoint that reached it:")
    print(tabulate(table.to_dict("records"), headers="keys", tablefmt="github") + "\n")
    return at_budget(df, measure, value)
