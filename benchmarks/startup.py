"""How long `hlm --help` and each `hlm VERB --help` take, each in a fresh interpreter, and the
verbs that only read a suite or a leaderboard.

    rows = cli_rows(quick=True, verbs=["run", "plot"])

A verb's flags are built from argparse alone (`harness.cli.verbs`); a verb whose flags come
from the run config (`pretrain`, `finetune-causal`) imports the objectives and the presets,
which load without torch. The best of a few fresh processes, so that a cold disk cache does
not decide the figure; the target is the 2 s a user waits for help without noticing. The
reading verbs (`hlm validate` of the quickstart suite, `hlm leaderboard` of a committed
leaderboard, where they are found from the working folder) load no model code either; their
rows are INFO, as they include the work itself (reading Parquet files, the statistics).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from harness.bench.timing import Row, check

TARGET_S = 2.0


# reading verbs, each timed where the working folder holds what it reads
READING = (
    (["validate", "suites/quickstart.yaml"], Path("suites/quickstart.yaml")),
    (["leaderboard", "paper-cpu-encoder"], Path("leaderboards/paper-cpu-encoder")),
)


def help_seconds(argv: list[str], repeats: int) -> float:
    """The best wall time of `hlm ARGV --help` over `repeats` fresh processes."""
    return command_seconds([*argv, "--help"], repeats)


def command_seconds(argv: list[str], repeats: int) -> float:
    """The best wall time of `hlm ARGV` over `repeats` fresh processes."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "harness.cli", *argv],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        best = min(best, time.perf_counter() - start)
    return best


def cli_rows(quick: bool, verbs: Sequence[str]) -> list[Row]:
    """One row per verb of `verbs` (and one for `hlm --help`), judged against TARGET_S."""
    repeats = 2 if quick else 3
    rows = [check("hlm --help", help_seconds([], repeats), "s", "<=", TARGET_S)]
    for verb in verbs:
        rows.append(check(f"hlm {verb} --help", help_seconds([verb], repeats), "s", "<=", TARGET_S))
    for argv, needs in READING:
        if needs.exists():
            rows.append(Row(f"hlm {' '.join(argv)}", command_seconds(argv, repeats), "s"))
    return rows
