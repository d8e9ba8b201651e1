"""The training a suite's runs had, read from its rows alone (`hlm leaderboard SUITE --hours`).

Each row carries the step, tokens and training wall seconds of the checkpoint it evaluated,
and the machine it was computed on. Per pretraining run (model, sweep point, seed) this
takes the furthest checkpoint its rows evaluated: its tokens, hours and tokens/s, and the
machines the rows name. Unlike `hlm runs`, which reads the checkpoints under `runs/`, it
needs only the committed leaderboard, so a suite's cost is known on any machine. A run
trained past its last evaluated checkpoint counts to that checkpoint; a pretraining that
two suites share counts in each. Untrained twins (no training seconds) are left out.
"""

from __future__ import annotations

import pandas as pd

RUN = ["model", "sweep", "seed"]
COLUMNS = ["model", "sweep", "seed", "step", "M tokens", "hours", "tokens/s", "machines"]


def run_hours(df: pd.DataFrame) -> pd.DataFrame:
    """One line per trained run: the furthest checkpoint its rows evaluated (step, M tokens),
    its training wall hours there, tokens/s over them and the machines its rows record.
    Tokens and seconds both grow along a run, so their maxima are that checkpoint's."""
    seconds = pd.to_numeric(df["train_seconds"], errors="coerce")
    trained = df[seconds > 0].assign(train_seconds=seconds[seconds > 0])
    if trained.empty:
        return pd.DataFrame(columns=COLUMNS)
    runs = trained.groupby(RUN, dropna=False, sort=True).agg(
        step=("step", "max"),
        tokens=("tokens_seen", "max"),
        seconds=("train_seconds", "max"),
        machines=("hardware", _machines),
    )
    runs = runs.reset_index()
    return pd.DataFrame(
        {
            "model": runs["model"],
            "sweep": runs["sweep"].map(lambda s: "" if s in ("{}", None) else s),
            "seed": runs["seed"],
            "step": runs["step"].astype(int),
            "M tokens": (runs["tokens"] / 1e6).round(1),
            "hours": (runs["seconds"] / 3600).round(2),
            "tokens/s": (runs["tokens"] / runs["seconds"]).round(0).astype(int),
            "machines": runs["machines"],
        },
        columns=COLUMNS,
    )


def _machines(hardware: pd.Series) -> str:
    """The machines a run's rows name, each once ('-' where none says)."""
    named = sorted({str(h) for h in hardware.dropna() if str(h)})
    return "; ".join(named) if named else "-"


def hours_line(runs: pd.DataFrame) -> str:
    """The suite's training hours in one line: summed over its runs, and per machine."""
    if runs.empty:
        return "no trained run: every row is of an untrained model"
    total = runs["hours"].sum()
    per_machine = runs.groupby("machines")["hours"].sum()
    machines = "; ".join(f"{name}: {hours:.2f}" for name, hours in per_machine.items())
    return (
        f"training hours, to each run's furthest evaluated checkpoint: {total:.2f} over "
        f"{len(runs)} runs ({machines}); wall hours of one process, so CPU-hours at its "
        "thread count"
    )
