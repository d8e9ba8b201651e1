"""How `hlm`'s command line is read: the parser of every verb (the flags of the verb typed only),
one spelling rule, and a clear line for each flag that is not known.

    parse(["leaderboard", "paper-cpu-encoder", "--format", "csv"])   # Namespace, or a status
    build_parser("plot")       # every verb listed, the flags of `plot` only

Every verb takes -v / -q / --debug (`VerbParser`). Dashes and underscores in a flag are one
(`one_spelling`). An unknown flag is named with the flag meant where one is close, or with
our name for another tool's (`FALSE_FRIENDS`, and a verb module's own: `hlm pretrain`'s
names for Hugging Face Trainer's flags).
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Container
from typing import Any

from harness.cli.flags import text
from harness.cli.verbs import VERBS, verb_module


class VerbParser(argparse.ArgumentParser):
    """An argument parser whose every verb takes -v / -q / --debug, and whose flags of no
    other type take a non-empty word (`harness.cli.flags.text`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # no prefix of a flag stands for it: `--out` is not `--output-dir`, whose meaning differs
        super().__init__(*args, **{**kwargs, "allow_abbrev": False})
        self.register("type", None, text)  # a flag of no other type: a word, never empty
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
        group.add_argument(
            "--debug",
            action="store_true",
            help="an internal error shows its traceback here (else it goes to a file, named)",
        )


def verbosity(args: argparse.Namespace) -> int:
    """-1 quiet, 0 default, 1 and more: verbose."""
    quiet = bool(args.quiet) if "quiet" in vars(args) else False
    return -1 if quiet else int(args.verbose) if "verbose" in vars(args) else 0


# flags other tools give a meaning ours name otherwise: the names to use here
FALSE_FRIENDS = {
    "--save-steps": "--save-every N (a checkpoint every N steps, as Hugging Face's --save-steps) "
    "or --save-at-steps N [N ...] (at these steps)",
    "--save_steps": "--save-every N (a checkpoint every N steps, as Hugging Face's --save_steps) "
    "or --save-at-steps N [N ...] (at these steps)",
    "--resume_from_checkpoint": "--resume [PATH]",
    "--dry-run": "--output-dir DIR (hlm publish writes the files it would upload there); "
    "--dry-run is hlm run's plan",
    "--write-to": "--output-dir DIR (the folder the files go to)",
    "--out": "--output-dir DIR (the folder the output goes to)",
}

PLUGIN_LOSS_FLAG = (
    "--plugins FILE (a plugin objective's loss options are flags once its file is named "
    "there; a --config file's plugins are imported only after the flags are read)"
)


def one_spelling(
    parser: argparse.ArgumentParser, argv: list[str], verbs: Container[str]
) -> list[str]:
    """`argv` with each flag the verb knows only in the other spelling respelt: dashes and
    underscores are one (`--vocab_size` is `--vocab-size`, `--output-path` `--output_path`),
    as Hugging Face's and lm-eval's users type them. A flag known as written stays; `verbs`:
    the names `parser`'s sub-parsers answer to."""
    if not argv or argv[0] not in verbs:
        return argv
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    known = sub.choices[argv[0]]._option_string_actions
    out = argv[:1]
    for i, arg in enumerate(argv[1:], start=1):
        if arg == "--":  # what follows is no flag
            return out + argv[i:]
        flag, eq, value = arg.partition("=")
        if flag.startswith("--") and flag not in known:
            body = flag[2:]
            other = "--" + (body.replace("_", "-") if "_" in body else body.replace("-", "_"))
            flag = other if other in known else flag
        out.append(flag + eq + value)
    return out


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """`hlm`'s parser: every verb listed, the flags of `verb` only (of all verbs for None),
    so that a command line imports what its own verb needs and no more."""
    parser = argparse.ArgumentParser(
        prog="hlm",
        description="headless-zoo: pretrain, compare and publish headless language models. "
        "Every verb takes -v (more output) and -q (warnings and errors only).",
    )
    parser.add_argument("--version", action="version", version=f"hlm {installed_version()}")
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB", parser_class=VerbParser)
    for name, help_text in VERBS.items():
        p = sub.add_parser(
            name, help=help_text, description=f"{help_text[:1].upper()}{help_text[1:]}."
        )
        if verb is None or name == verb:
            module = verb_module(name)
            module.add_arguments(p)
            p.set_defaults(run=module.run)
    return parser


def installed_version() -> str:
    """headless-zoo's installed version, as pip lists it."""
    from importlib.metadata import version

    return version("headless-zoo")  # `hlm` itself is an entry point of the installed package


def parse(argv: list[str]) -> argparse.Namespace | int:
    """The parsed command line, or the exit status of a clear error about it. A verb whose
    flags depend on files typed on the line (`hlm pretrain --plugins FILE`) reads them first
    (its module's `preload`)."""
    if argv and not argv[0].startswith("-") and argv[0] not in VERBS:
        from zoo.registry import unknown_name_message

        print(
            f"hlm: error: {unknown_name_message('verb', argv[0], sorted(VERBS))}", file=sys.stderr
        )
        return 2
    if argv:
        preload = getattr(verb_module(argv[0]), "preload", None) if argv[0] in VERBS else None
        if preload is not None:
            preload(argv[1:])
    parser = build_parser(argv[0] if argv else "")
    args, unknown = parser.parse_known_args(one_spelling(parser, argv, VERBS))
    return _unknown_flags(parser, args.verb, unknown) if unknown else args


def _unknown_flags(parser: argparse.ArgumentParser, verb: str, unknown: list[str]) -> int:
    """One line per unknown argument, with the flag meant where one is close; status 2."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    known = sorted(sub.choices[verb]._option_string_actions)
    flags = [a for a in unknown if a.startswith("-")]
    for arg in flags or unknown:  # an unknown flag's value is not named again
        flag = arg.split("=", 1)[0]
        friends = {**FALSE_FRIENDS, **getattr(verb_module(verb), "FALSE_FRIENDS", {})}
        hint = (
            friends[flag]
            if flag in friends
            else ", ".join(difflib.get_close_matches(flag, known, n=2))
            if flag.startswith("-")
            else ""
        )
        if not hint and flag.startswith("--loss."):
            hint = PLUGIN_LOSS_FLAG
        print(
            f"hlm {verb}: error: unrecognized argument {arg!r}"
            + (f"; did you mean {hint}?" if hint else ""),
            file=sys.stderr,
        )
    return 2
