"""What `hlm` prints besides its results: Python logging, third-party chatter, progress bars.

    hlm run suites/x.yaml          # our INFO lines; third-party warnings and bars hidden
    hlm run suites/x.yaml -v       # our DEBUG lines, third-party warnings and INFO
    hlm run suites/x.yaml -q       # warnings and errors only, no progress bar of ours

Every verb takes `-v` (repeatable) and `-q` (`harness.cli.parsing.VerbParser`). The
project's modules log through `logging.getLogger(__name__)` (loggers `zoo.*` and `harness.*`);
the libraries it drives (transformers, datasets, lm-eval, huggingface_hub, torch) are held to
errors unless `-v`.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import warnings

from tqdm import tqdm

from zoo.errors import ZooWarning

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


# whether a cell's own work (pretraining steps, fine-tuning steps, lm-eval's requests) shows a
# bar under the suite's: `harness.run.runner.run_suite(progress=...)` sets it for the run
CELL_PROGRESS: contextvars.ContextVar[bool] = contextvars.ContextVar("cell_progress", default=False)


def cell_bar(total: int, desc: str, unit: str) -> tqdm:
    """A bar for a cell's own work, under `hlm run`'s: shown while the run shows its bar and
    stderr is a terminal (disable None: a log file gets the log lines alone), gone once done
    (leave None: only a bar at position 0 stays)."""
    shown = CELL_PROGRESS.get()
    return tqdm(total=total, desc=desc, unit=unit, disable=None if shown else True, leave=None)


def cell_bars_on_terminal() -> bool:
    """Whether a library's own bars may show inside a cell: the run shows bars and stderr is a
    terminal (a library that draws its bars unasked would write them into a log file)."""
    return CELL_PROGRESS.get() and sys.stderr.isatty()


def not_rank_zero() -> bool:
    """Whether this process is a torchrun worker other than rank 0 (`RANK` set, not 0)."""
    return "RANK" in os.environ and os.environ["RANK"] != "0"


def configure(level: int) -> None:
    """Set up logging, warnings and progress bars for one `hlm` invocation at `level`. Under
    torchrun only rank 0 says what it does: the other ranks keep their warnings and errors."""
    ours = {-1: logging.WARNING, 0: logging.INFO}.get(level, logging.DEBUG)
    if not_rank_zero():
        ours = max(ours, logging.WARNING)
    theirs = _library_level(level)
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for name in OURS:
        logging.getLogger(name).setLevel(ours)
    for name in THIRD_PARTY:
        logging.getLogger(name).setLevel(theirs)
    if level < 1:
        for module in THIRD_PARTY:
            warnings.filterwarnings("ignore", module=module.replace("-", "_"))
    os.environ.update(library_environment(level))
    _tell_imported_libraries(theirs, bars=level >= 1)
    warnings.formatwarning = _one_line_for_ours


_python_format = warnings.formatwarning


def _one_line_for_ours(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """A `ZooWarning` as `WARNING <message>`, the way a `UserError` prints (no source line:
    it is about the user's files, not the code); any other warning as Python shows it."""
    if issubclass(category, ZooWarning):
        return f"WARNING {message}\n"
    return _python_format(message, category, filename, lineno, line)


def _library_level(level: int) -> int:
    return logging.INFO if level >= 2 else logging.WARNING if level == 1 else logging.ERROR


def library_environment(level: int) -> dict[str, str]:
    """What transformers, datasets and huggingface_hub read from the environment when first
    imported: their log level (huggingface_hub sets its own on import, over `configure`'s)
    and, below -v, no progress bars. Set in the environment rather than on the libraries, so
    that a verb that never uses them does not import them (importing transformers alone takes
    seconds); a child process (torchrun's workers) inherits them."""
    name = logging.getLevelName(_library_level(level)).lower()
    env = {"TRANSFORMERS_VERBOSITY": name, "DATASETS_VERBOSITY": name, "HF_HUB_VERBOSITY": name}
    if level < 1:
        env |= {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    return env


def _tell_imported_libraries(level: int, bars: bool) -> None:
    """The same settings, for a library imported before `configure` (`main` called from Python):
    it read the environment already."""
    if "transformers" in sys.modules:
        import transformers

        transformers.utils.logging.set_verbosity(level)
        if not bars:
            transformers.utils.logging.disable_progress_bar()
    if "datasets" in sys.modules:
        import datasets

        datasets.logging.set_verbosity(level)
        if not bars:
            datasets.disable_progress_bars()
    if "huggingface_hub" in sys.modules and not bars:
        import huggingface_hub.utils

        huggingface_hub.utils.disable_progress_bars()
