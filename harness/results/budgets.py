"""Matched budgets (`hlm leaderboard --at tokens=2e6`): each model's rows at the first
checkpoint whose steps, tokens, FLOPs or seconds reached a value, evaluated there."""

from __future__ import annotations

import math

import pandas as pd

from harness.results.leaderboard import FINAL, GROUP
from zoo.errors import UserError
from zoo.registry import check_name

MEASURES = {
    "steps": "step",
    "tokens": "tokens_seen",
    "flops": "train_flops",
    "seconds": "train_seconds",
}


def parse_budget(text: str) -> tuple[str, float]:
    """`tokens=2e6` -> ("tokens", 2e6); a bad name or value is a close-match error."""
    name, _, value = text.partition("=")
    check_name("budget", name, list(MEASURES))
    try:
        number = float(value)
    except ValueError:
        raise UserError(f"--at {text}: expected NAME=NUMBER, e.g. tokens=2e6") from None
    if not (number > 0 and math.isfinite(number)):
        raise UserError(f"--at {text}: the budget must be a finite number > 0")
    return name, number


def at_budget(df: pd.DataFrame, measure: str, value: float) -> pd.DataFrame:
    """Per model / sweep point / seed / task / metric, the row of the first checkpoint whose
    `measure` (steps, tokens, flops, seconds) reached `value`: evaluated there, not
    interpolated. Models that never reached it have no row. The rows come from whichever
    checkpoint the budget picks, final or not, so they no longer carry `final_checkpoint`."""
    column = MEASURES[measure]
    d = df[df[column] >= value].sort_values([column, "timestamp"], kind="mergesort")
    picked = d.groupby(GROUP, dropna=False).head(1)
    return picked.drop(columns=FINAL, errors="ignore")


def budget_checkpoints(df: pd.DataFrame, measure: str, value: float) -> pd.DataFrame:
    """Which checkpoint each model's row at the budget comes from (step and all measures);
    `reached: False` for a model that never reached it."""
    cols = ["model", "sweep", "seed", "step", "tokens_seen", "train_flops", "train_seconds"]
    picked = at_budget(df, measure, value)[cols].drop_duplicates()
    missing = set(zip(df["model"], df["sweep"], strict=True)) - set(
        zip(picked["model"], picked["sweep"], strict=True)
    )
    gone = pd.DataFrame(
        [{"model": m, "sweep": s} for m, s in sorted(missing)], columns=["model", "sweep"]
    )
    return pd.concat([picked.assign(reached=True), gone.assign(reached=False)], ignore_index=True)
