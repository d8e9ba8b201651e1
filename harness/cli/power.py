"""`hlm power SUITE`: how much a leaderboard's seeds could see (`harness.report.power`).

hlm power paper-cpu-encoder                    # against the suite's baseline
hlm power paper-cpu-encoder --effect 0.01      # power and seeds for a Δ of 0.01
hlm power paper-cpu-encoder --claims 41        # each test one of 41 corrected together
hlm power cpu-ladder --at tokens=40.3M --task probe/sst2/mean --effect 0.02   # at a checkpoint
"""

from __future__ import annotations

import argparse

from harness.cli.flags import add_leaderboards, int_at_least, positive

MAX_CLAIMS = 100_000  # tests corrected together: past any paper's family by orders


def add_arguments(p: argparse.ArgumentParser) -> None:
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
        "--at",
        metavar="BUDGET",
        help="at a matched budget, as `hlm leaderboard --at`: steps=N, tokens=T, flops=F or "
        "seconds=S; each model's rows from its first checkpoint that reached it (an untrained "
        "twin's at every budget). Default: the final checkpoints",
    )
    p.add_argument(
        "--metric",
        help="only this metric (--effect is in one metric's unit: val_ce, not val_ppl)",
    )
    p.add_argument(
        "--claims",
        type=int_at_least(1, MAX_CLAIMS),
        default=1,
        help="the tests corrected together for many claims: power at α = 0.05/CLAIMS, "
        "Bonferroni's level, as `hlm report --paper` and `--claims` correct a family (and a "
        f"lower bound on Holm's, which leaderboards use; default 1: a test alone; at most "
        f"{MAX_CLAIMS})",
    )
    add_leaderboards(p)


def run(args: argparse.Namespace) -> int:
    from harness.cli.leaderboard import at_budget_rows, read_rows
    from harness.report.power import power_table, printable, selected
    from harness.results.leaderboard import aggregate, current_cells, known_model
    from harness.results.samples import read_samples
    from harness.results.significance import compare_to_baseline, family_size
    from harness.suite import last_suite
    from zoo.errors import UserError

    directory, df = read_rows(args.leaderboards, args.suite)
    if args.at:
        df = at_budget_rows(df, args.at)  # says which checkpoint each model's rows are from
    suite = last_suite(directory)
    baseline = known_model(df, args.baseline) or (suite.baseline if suite is not None else None)
    if baseline is None:
        raise UserError(
            f"hlm power {args.suite}: the suite names no baseline; pass --baseline MODEL"
        )
    samples = read_samples(directory, current_cells(directory))
    family = family_size(compare_to_baseline(aggregate(df), baseline, samples))  # as marked
    table = power_table(selected(df, args.task, args.metric), baseline, args.effect, args.claims)
    print(
        printable(table).to_string(index=False, float_format=lambda x: f"{x:.4g}", na_rep="-")
        if not table.empty
        else "no comparison with the baseline"
    )
    metrics = sorted(set(table["metric"])) if not table.empty else []
    if args.effect is not None and len(metrics) > 1:
        print(
            f"\n--effect {args.effect:g} is taken in the unit of each of the {len(metrics)} "
            f"metrics shown ({', '.join(metrics)}); --metric sizes for one"
        )
    print(_footer(baseline, family, args.effect, args.claims))
    return 0


def _footer(baseline: str, family: int, effect: float | None, claims: int) -> str:
    from harness.report.power import level
    from harness.results.stats import POWER

    return (
        f"\nbaseline {baseline}; detectable: the |Δ| these seeds find with {POWER:.0%} power "
        f"(two-sided t-test, α = {level(claims)}; the leaderboard's marks correct over "
        f"its {family} comparisons); power / seeds_needed: for the effect "
        "column, at the seed-level spread observed"
        + (
            "."
            if effect is not None
            else " (none without --effect: the power at the observed Δ is a function of p "
            "alone and says nothing the test has not)."
        )
    )
