"""The value types of `hlm`'s flags and the flags several verbs share, from argparse alone.

    p.add_argument("--width", type=int_at_least(1))   # "0 is below 1": status 2, no traceback
    p.add_argument("--effect", type=positive)         # "'-1' is not above 0"
    p.add_argument("--task")                          # `text`: "empty; give a value"
    add_leaderboards(p)                               # --leaderboards ROOT
    add_output_dir(p, "the page and its figures/")    # --output-dir DIR

A flag's value is checked here once, as argparse parses it, so a bad value is a usage error
that names the flag, never an error deep inside the command.

One name per idea: where a verb writes its output is `--output-dir DIR` (`hlm evaluate`
also takes lm-eval's `--output_path`, with lm-eval's meaning); the leaderboards a verb reads
and adds to live under `--leaderboards ROOT`; flags are spelt with dashes, and the
underscore spelling is the same flag (`harness.cli.parsing.one_spelling`); no prefix of a
flag stands for it (`--out` is not `--output-dir`).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable


def text(value: str) -> str:
    """Every flag's value unless it says otherwise (`harness.logs.VerbParser` makes it the
    default type): a word, never empty (`--task ''` matched every task; `--leaderboards ''`
    wrote into the working folder), never holding NUL."""
    if not value.strip():
        raise argparse.ArgumentTypeError("empty; give a value")
    if "\0" in value:
        raise argparse.ArgumentTypeError(f"{value!r} holds a NUL character")
    return value


def positive(value: str) -> float:
    """A size flag's value: a finite number above 0."""
    number = finite(value)
    if not number > 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not above 0")
    return number


def int_at_least(low: int, most: int | None = None) -> Callable[[str], int]:
    """A count flag's type: a whole number of at least `low` (and at most `most`)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"{value} is above {most}")
        return value

    return parse


def finite(text: str) -> float:
    """A size flag's value: a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def add_leaderboards(p: argparse.ArgumentParser) -> None:
    """--leaderboards: the root folder of the leaderboards a verb reads or writes."""
    from zoo.train.names import HOME_ENV, hlm_home

    p.add_argument(
        "--leaderboards",
        default=str(hlm_home() / "leaderboards"),
        help=f"leaderboard root folder (default: leaderboards/ under ${HOME_ENV}, else the "
        "current project: the working folder or the nearest above it holding leaderboards/ "
        "or suites/)",
    )


def add_output_dir(p: argparse.ArgumentParser, what: str, default: str | None = None) -> None:
    """--output-dir: the folder a verb writes `what` into."""
    p.add_argument(
        "--output-dir",
        metavar="DIR",
        help=f"the folder to write {what} into" + (f" (default: {default})" if default else ""),
    )


def add_max_cells(p: argparse.ArgumentParser) -> None:
    """--max-cells: the most cells a suite may expand to, counted before anything expands."""
    p.add_argument(
        "--max-cells",
        type=int_at_least(1),
        default=10_000,
        help="refuse a suite of more cells than this (sweep points x models x seeds x tasks, "
        "counted before expanding; default: 10000)",
    )


def add_trust(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--trust-plugins: the one way code that a file names runs (`zoo.registry.may_run_code`):
    a suite's or a run config's plugin files, lm-eval task folders (`include_path`), whose
    YAMLs run code (`!function`). Installed `hlm.plugins` packages need no flag."""
    p.add_argument(
        "--trust-plugins",
        action="store_true",
        help="let the files this command reads (a suite, a --config, a leaderboard's "
        "_suite.yaml) import the plugin files and lm-eval task folders they name: their code "
        "runs in this process. Without it they are refused, wherever they lie",
    )


_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")


def language_code(text: str) -> str:
    """A card's language: an ISO 639 code, with BCP 47 subtags (`en`, `fr`, `zh-Hans`)."""
    if not _LANGUAGE.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a language code (en, fr, zh-Hans)")
    return text


def hub_repo_id(text: str) -> str:
    """A Hub repository id (OWNER/NAME or NAME), checked by huggingface_hub's own validator."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(text)
    except HFValidationError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(". Use")[0]) from None
    return text
