"""What `hlm` prints besides its results: Python logging, third-party chatter, progress bars.

    hlm run suites/x.yaml          # our INFO lines; third-party warnings and bars hidden
    hlm run suites/x.yaml -v       # our DEBUG lines, third-party warnings and INFO
    hlm run suites/x.yaml -q       # warnings and errors only, no progress bar of ours

Every verb takes `-v` (repeatable) and `-q` (`VerbParser`). The project's modules log through
`logging.getLogger(__name__)` (loggers `zoo.*` and `harness.*`); the libraries it drives
(transformers, datasets, lm-eval, huggingface_hub, torch) are held to errors unless `-v`.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from typing import Any

OURS = ("zoo", "harness")
THIRD_PARTY = (
    "transformers",
    "datasets",
    "lm-eval",
    "lm_eval",
    "huggingface_hub",
    "torch",
    "wandb",
)


class VerbParser(argparse.ArgumentParser):
    """An argument parser whose every verb takes -v / -q."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        group = self.add_argument_group("output")
        group.add_argument(
            "-v",
            "--verbose",
            action="count",
            default=0,
            help="more output: our debug lines (-v), third-party logs and warnings too (-vv)",
        )
        group.add_argument(
            "-q", "--quiet", action="store_true", help="warnings and errors only; no progress bar"
        )


def verbosity(args: argparse.Namespace) -> int:
    """-1 quiet, 0 default, 1 and more: verbose."""
    quiet = bool(args.quiet) if "quiet" in vars(args) else False
    return -1 if quiet else int(args.verbose) if "verbose" in vars(args) else 0


def configure(level: int) -> None:
    """Set up logging, warnings and progress bars for one `hlm` invocation at `level`."""
    ours = {-1: logging.WARNING, 0: logging.INFO}.get(level, logging.DEBUG)
    theirs = logging.INFO if level >= 2 else logging.WARNING if level == 1 else logging.ERROR
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for name in OURS:
        logging.getLogger(name).setLevel(ours)
    for name in THIRD_PARTY:
        logging.getLogger(name).setLevel(theirs)
    if level < 1:
        for module in THIRD_PARTY:
            warnings.filterwarnings("ignore", module=module.replace("-", "_"))
        _quiet_libraries()


def _quiet_libraries() -> None:
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    try:
        import datasets

        datasets.disable_progress_bars()
        datasets.logging.set_verbosity_error()
    except ImportError:  # pragma: no cover - datasets is a dependency
        pass
