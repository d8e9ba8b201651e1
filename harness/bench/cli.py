"""How long `hlm --help` and each `hlm VERB --help` take, each in a fresh interpreter.

    rows = cli_rows(quick=True)

A verb's flags are built from argparse alone (`harness.parsers`); a verb whose flags come
from the run config (`pretrain`, `finetune-causal`) imports the objectives and the presets,
and with them torch. The best of a few fresh processes, so that a cold disk cache does not
decide the figure; the target is the 2 s a user waits for help without noticing.
"""

from __future__ import annotations

import subprocess
import sys
import time

from harness.bench.timing import Row, check
from harness.parsers import VERBS

TARGET_S = 2.0


def help_seconds(argv: list[str], repeats: int) -> float:
    """The best wall time of `hlm ARGV --help` over `repeats` fresh processes."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "harness.cli", *argv, "--help"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        best = min(best, time.perf_counter() - start)
    return best


def cli_rows(quick: bool) -> list[Row]:
    """One row per verb (and one for `hlm --help`), judged against TARGET_S."""
    repeats = 2 if quick else 3
    rows = [check("hlm --help", help_seconds([], repeats), "s", "<=", TARGET_S)]
    for verb in VERBS:
        rows.append(check(f"hlm {verb} --help", help_seconds([verb], repeats), "s", "<=", TARGET_S))
    return rows
