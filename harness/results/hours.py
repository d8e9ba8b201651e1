"""The training a suite's runs had, read from its rows alone (`hlm leaderboard SUITE --hours`).

Each row carries the step, tokens and training wall seconds of the checkpoint it evaluated,
and the machine it was computed on. Per pretraining run (model, sweep point, seed) this
takes the furthest checkpoint its rows evaluated: its tokens, hours and tokens/s, and the
machine its row names. Unlike `hlm runs`, which reads the checkpoints under `runs/`, it
needs only the committed leaderboard, so a suite's cost is known on any machine. A run
trained past its last evaluated checkpoint counts to that checkpoint; a pretraining that
two suites share counts in each. Untrained twins (no training seconds) are left out.
"""

from __future__ import annotations

import pandas as pd

RUN = ["model", "sweep", "seed"]
COLUMNS = ["model", "sweep", "seed", "step", "M tokens", "hours", "tokens/s", "machine"]


def run_hours(df: pd.DataFrame) -> pd.DataFrame:
    """One line per trained run: the furthest checkpoint its rows evaluated (step, M tokens),
    its training wall hours there, tokens/s over them and the machine that trained it. The
    furthest row is read whole (the latest where a run was made again), so a run restarted
    on another machine is never read as one machine's tokens over another's seconds."""
    seconds = pd.to_numeric(df["train_seconds"], errors="coerce")
    trained = df[seconds > 0].assign(train_seconds=seconds[seconds > 0])
    if trained.empty:
        return pd.DataFrame(columns=COLUMNS)
    order = [*RUN, "step", "timestamp"] if "timestamp" in trained else [*RUN, "step"]
    last = trained.sort_values(order, kind="mergesort").groupby(RUN, dropna=False).tail(1)
    runs = last.sort_values(RUN, kind="mergesort").reset_index(drop=True)
    return pd.DataFrame(
        {
            "model": runs["model"],
            "sweep": runs["sweep"].map(lambda s: "" if s in ("{}", None) else s),
            "seed": runs["seed"],
            "step": runs["step"].astype(int),
            "M tokens": (runs["tokens_seen"] / 1e6).round(1),
            "hours": (runs["train_seconds"] / 3600).round(2),
            "tokens/s": (runs["tokens_seen"] / runs["train_seconds"]).round(0).astype(int),
            "machine": runs["hardware"].map(_machine),
        },
        columns=COLUMNS,
    )


def _machine(hardware: object) -> str:
    """The machine a row names ('-' where it names none)."""
    return str(hardware) if isinstance(hardware, str) and hardware else "-"


def hours_line(runs: pd.DataFrame) -> str:
    """The suite's training hours in one line: summed over its runs, and per machine."""
    if runs.empty:
        return "no trained run: every row is of an untrained model"
    total = runs["hours"].sum()
    per_machine = runs.groupby("machine")["hours"].sum()
    machines = "; ".join(f"{name}: {hours:.2f}" for name, hours in per_machine.items())
    return (
        f"training hours, to each run's furthest evaluated checkpoint: {total:.2f} over "
        f"{len(runs)} runs ({machines}); wall hours of one process, so CPU-hours at its "
        "thread count"
    )
