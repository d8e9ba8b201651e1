"""Matched budgets (`hlm leaderboard --at tokens=2e6`): each model's rows at the first
checkpoint whose steps, tokens, FLOPs or seconds reached a value, evaluated there."""

from __future__ import annotations

import math

import pandas as pd

from harness.results.leaderboard import FINAL, GROUP
from zoo.errors import UserError
from zoo.registry import check_name
from zoo.train.budgets import parse_amount

MEASURES = {
    "steps": "step",
    "tokens": "tokens_seen",
    "flops": "train_flops",
    "seconds": "train_seconds",
}


def parse_budget(text: str) -> tuple[str, float]:
    """`tokens=2e6` or `tokens=40.3M` -> ("tokens", 2e6); a bad name or value is a
    close-match error."""
    name, _, value = text.partition("=")
    check_name("budget", name, list(MEASURES))
    try:
        number = parse_amount(value)
    except ValueError:
        example = "e.g. tokens=2e6 or tokens=40.3M"
        raise UserError(f"--at {text}: expected NAME=NUMBER, {example}") from None
    if not (number > 0 and math.isfinite(number)):
        raise UserError(f"--at {text}: the budget must be a finite number > 0")
    return name, number


def at_budget(df: pd.DataFrame, measure: str, value: float) -> pd.DataFrame:
    """Per model / sweep point / seed / task / metric, the row of the first checkpoint whose
    `measure` (steps, tokens, flops, seconds) reached `value`: evaluated there, not
    interpolated. Models that never reached it have no row. The rows come from whichever
    checkpoint the budget picks, final or not, so they no longer carry `final_checkpoint`.
    An untrained control (a model whose every row is at step 0, as an untrained twin's) is
    the same at every budget: its rows are kept."""
    column = MEASURES[measure]
    reached = (df[column] >= value) | df["model"].isin(untrained(df))
    d = df[reached].sort_values([column, "timestamp"], kind="mergesort")
    picked = d.groupby(GROUP, dropna=False).head(1)
    return picked.drop(columns=FINAL, errors="ignore")


def untrained(df: pd.DataFrame) -> set[str]:
    """The models whose every row is at step 0: untrained controls, trained by no budget."""
    steps = df.groupby("model")["step"].max()
    return {str(m) for m in steps[steps == 0].index}


def budget_checkpoints(df: pd.DataFrame, measure: str, value: float) -> pd.DataFrame:
    """Which checkpoint each model's row at the budget comes from (step and all measures);
    `reached`: yes, no (a model that never reached it: no row), or an untrained control's
    step-0 rows, which stand at every budget."""
    cols = ["model", "sweep", "seed", "step", "tokens_seen", "train_flops", "train_seconds"]
    picked = at_budget(df, measure, value)[cols].drop_duplicates()
    controls = picked["model"].isin(untrained(df))
    picked = picked.assign(reached=controls.map({True: "untrained: at every budget", False: "yes"}))
    missing = set(zip(df["model"], df["sweep"], strict=True)) - set(
        zip(picked["model"], picked["sweep"], strict=True)
    )
    gone = pd.DataFrame(
        [{"model": m, "sweep": s} for m, s in sorted(missing)], columns=["model", "sweep"]
    )
    return pd.concat([picked, gone.assign(reached="no")], ignore_index=True)
