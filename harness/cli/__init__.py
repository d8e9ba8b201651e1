"""`hlm`: one command-line entry point with verbs, each a module of this package holding its
flags and its command, a thin layer over a library function.

    hlm ls                          objectives, presets, task types, metrics
    hlm pretrain --preset bert-tiny --objective cwt --output-dir runs/x   (zoo.train.pretrain)
    hlm finetune-causal CKPT OUT    (zoo.train.causal_finetune.finetune_causal)
    hlm validate SUITE...           (harness.suite.load_suite)
    hlm run SUITE                   (harness.run.runner.run_suite)
    hlm leaderboard SUITE           (harness.results.leaderboard)
    hlm plot SUITE                  (harness.report.plots)

The verbs are listed in `harness.cli.verbs`; the command line is read by
`harness.cli.parsing`, and a verb ends through `harness.cli.exits`: user errors (unknown
names, missing files, bad YAML, NaN loss) print one line per problem and exit with status 2,
no traceback; a bug prints one line naming the file that holds its traceback and exits with
status 3 (`--debug` shows the traceback).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from harness.cli.exits import dispatch
from harness.cli.parsing import build_parser, parse, verbosity
from harness.logs import configure

__all__ = ["build_parser", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    # Transparent huge pages for torch's large CPU tensors (read at torch's first allocation,
    # so before torch is imported): fresh activations, logits and score matrices are then
    # faulted in 2 MiB at a time instead of 4 KiB (docs/PERFORMANCE.md). Opt out with
    # THP_MEM_ALLOC_ENABLE=0.
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    args = parse(list(sys.argv[1:] if argv is None else argv))
    if isinstance(args, int):
        return args
    configure(verbosity(args))
    return dispatch(args)
