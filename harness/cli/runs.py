"""`hlm runs [PATTERN]`: the runs `hlm run` trained, by name, each with its state.

hlm runs
hlm runs 'paper-cpu-decoder/*'
"""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "The runs `hlm run` trained, by name (suite/model/seed-N, linked in "
        "$HLM_RUNS_DIR/by-name/), each with its state (done, training, stopped, damaged), the "
        "step reached, the tokens seen, tokens/s (a finished run's mean over its training "
        "time; else the last logged rate), its training hours (a stopped run's to its newest "
        "checkpoint, the steps a resume keeps) and its checkpoints; a last line sums the "
        "hours by suite. Every command that takes a checkpoint takes such "
        "a name, with @step-N for a checkpoint along the run: `hlm evaluate "
        "paper-cpu-decoder/pythia-tiny-ce/seed-0 --tasks hlm_lambada`."
    )
    p.add_argument("pattern", nargs="?", default="*", help="a glob over names (default: all)")


def run(args: argparse.Namespace) -> int:
    from harness.run.listing import format_runs, list_runs
    from zoo.train.names import runs_dir

    states = list_runs(args.pattern)
    if not states:
        print(f"no named run matches {args.pattern!r} under {runs_dir()}/by-name")
        return 0
    print(format_runs(states))
    return 0
