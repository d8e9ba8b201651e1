"""`hlm`: one command-line entry point with verbs, each a thin layer over a library function.

    hlm ls                          objectives, presets, task types, metrics
    hlm pretrain --preset bert-tiny --objective cwt --output-dir runs/x   (zoo.train.pretrain)
    hlm finetune-causal CKPT OUT    (zoo.train.causal_finetune.finetune_causal)
    hlm validate SUITE...           (harness.suite.load_suite)
    hlm run SUITE                   (harness.run.runner.run_suite)
    hlm leaderboard SUITE           (harness.results.leaderboard)
    hlm plot SUITE                  (harness.report.plots)

User errors (unknown names, missing files, bad YAML, NaN loss) print one line per problem and
exit with status 2; no traceback. A bug prints one line naming the file that holds its
traceback and exits with status 3 (`--debug` shows the traceback; `harness.exits`).
"""

from __future__ import annotations

import argparse
import os
import sys
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from harness.exits import dispatch
from harness.flags import (
    FALSE_FRIENDS,
    PLUGIN_LOSS_FLAG,
    TRAINER_NAMES,
    add_leaderboards,
    add_trust,
    one_spelling,
)
from harness.logs import VerbParser, configure, verbosity
from harness.parsers import VERBS, add_verbs
from zoo.errors import UserError
from zoo.registry import load_installed_plugins, plugins_trusted
from zoo.train.roles import flag_of

LOSS_DEST = "loss__"  # argparse dest prefix of the --loss.NAME flags


def _flag_type(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """`parse` for argparse: its ValueError becomes the flag's error message."""

    def parse_flag(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse_flag


def _add_config_flags(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    model: Any,
    skip: set[str],
    dest_prefix: str = "",
    flag_prefix: str = "",
) -> None:
    """One --flag per field of a pydantic model, typed from its annotation, help from its
    description; a default is shown only where the field has one (None means "unset")."""
    for name, field in model.model_fields.items():
        if name not in skip:
            _add_field_flag(parser, name, field, dest_prefix, flag_prefix)


def _add_field_flag(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    name: str,
    field: Any,
    dest_prefix: str,
    flag_prefix: str,
) -> None:
    flag = "--" + flag_prefix + flag_of(name, field).removeprefix("--")
    ann = field.annotation
    args = typing.get_args(ann)
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        ann = next(a for a in args if a is not type(None))
        args = typing.get_args(ann)
    origin = typing.get_origin(ann)
    default = None if field.is_required() else field.get_default(call_default_factory=True)
    default_txt = "" if default is None else f" (default: {default})"
    help_txt = ((field.description or name.replace("_", " ")) + default_txt).replace("%", "%%")
    kw: dict[str, Any] = {"default": None, "help": help_txt, "dest": dest_prefix + name}
    if ann is bool:
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, **kw)
    elif origin is typing.Literal:
        parser.add_argument(flag, choices=list(args), **kw)
    elif origin is list:
        parser.add_argument(flag, nargs="+", metavar=name.upper(), **kw)
    elif hasattr(ann, "from_flag"):  # a nested model with its own flag syntax
        parser.add_argument(flag, type=_flag_type(ann.from_flag), metavar=name.upper(), **kw)
    elif origin is tuple:
        # any count, so that a wrong one is refused by the config's check, naming the flag
        parser.add_argument(flag, nargs="+", type=args[0], metavar=name.upper(), **kw)
    else:
        parser.add_argument(flag, type=ann, metavar=name.upper(), **kw)


def loss_option_fields() -> dict[str, Any]:
    """Every loss option of every registered objective (plugins' own included), each once:
    the `--loss.NAME` flags. A value is validated against the chosen objective's options."""
    from zoo.objectives import OBJECTIVES

    fields: dict[str, Any] = {}
    for _, objective in OBJECTIVES.items():
        for name, field in objective.options.model_fields.items():
            fields.setdefault(name, field)
    return fields


def preload_plugins(argv: Sequence[str]) -> None:
    """`hlm pretrain --plugins FILE...` imports the files typed there before its flags are
    made, so that a plugin objective's options are flags too (`--loss.temperature`). A
    `--config` file's own `plugins:` are imported only after the config validates, and only
    with --trust-plugins (`zoo.train.config.load_config`); nothing is imported for other
    verbs."""
    if not argv or argv[0] != "pretrain":
        return
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--plugins", nargs="+", default=[])
    known, _ = pre.parse_known_args(list(argv[1:]))
    from zoo.registry import load_plugin

    try:
        load_installed_plugins()
        for plugin in known.plugins:  # typed by the user: their choice
            load_plugin(plugin, trusted=True)
    except UserError as exc:  # as argparse ends on a bad flag: one line, status 2
        print(f"hlm pretrain: error: --plugins: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def cmd_ls(args: argparse.Namespace) -> int:
    from zoo.models import PRESETS
    from zoo.objectives import OBJECTIVES
    from zoo.registry import defined_in, load_plugin

    for plugin in args.plugins or []:  # typed by the user: their choice
        load_plugin(plugin, trusted=True)
    print("objectives:")
    width = max(len(name) for name, _ in OBJECTIVES.items())
    for name, obj in OBJECTIVES.items():
        tag = "headless" if obj.headless else "vocab head"
        reads = ", ".join(sorted(obj.options_read))
        source = defined_in(obj.loss)
        where = "" if source.startswith("hlm ") else f"; from {source}"
        print(f"  {name:{width}s}  {'[' + tag + ']':12s} {obj.description} (loss: {reads}{where})")
    print("presets:")
    for name, builder in PRESETS.items():
        spec = builder()
        print(
            f"  {name:24s} {spec.kind:8s} L{spec.num_layers} H{spec.hidden_size} A{spec.num_heads} "
            f"V{spec.vocab_size} (family {spec.family})"
        )
    from zoo.objectives.kernels import KERNELS

    print("loss kernels (loss.ce_impl / loss.cwt_impl, beside plain):")
    for name, kernel in KERNELS.items():
        where = f"CUDA, pip install {kernel.vendor.package}" if kernel.vendor else "any device"
        print(f"  {name:10s} [{where}] {kernel.description}")
    from harness.tasks import TASKS  # a task file that fails to import is an error, not a gap

    print("task types:")
    for name, task in TASKS.items():
        print(f"  {name:14s} {task.description}")
    return 0


def cmd_pretrain(args: argparse.Namespace) -> int:
    from zoo.train.config import PretrainConfig, load_config
    from zoo.train.pretrain import pretrain

    overrides: dict[str, Any] = {
        k: getattr(args, k) for k in PretrainConfig.model_fields if k != "loss" and hasattr(args, k)
    }
    overrides["loss"] = {
        k: getattr(args, LOSS_DEST + k)
        for k in loss_option_fields()
        if getattr(args, LOSS_DEST + k) is not None
    }
    if verbosity(args) < 0:
        overrides["progress"] = False
    cfg = load_config(args.config, overrides, trust_plugins=args.trust_plugins or plugins_trusted())
    final = pretrain(cfg, resume=args.resume)
    if os.environ.get("RANK", "0") == "0":  # under torchrun, once
        print(f"checkpoint: {final}")
    return 0


def cmd_finetune_causal(args: argparse.Namespace) -> int:
    from zoo.errors import format_validation_error
    from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
    from zoo.train.names import resolve_checkpoint

    values = {k: getattr(args, k) for k in CausalFinetuneConfig.model_fields}
    if verbosity(args) < 0:
        values["progress"] = False
    try:
        settings = CausalFinetuneConfig.model_validate(
            {k: v for k, v in values.items() if v is not None}
        )
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, "command line")) from None
    final = finetune_causal(resolve_checkpoint(args.checkpoint), args.output_dir, settings)
    print(f"checkpoint: {final}")
    return 0


def add_ls(p: argparse.ArgumentParser) -> None:
    p.add_argument("--plugins", nargs="+", help="Python files that register objectives / tasks")
    p.set_defaults(func=cmd_ls)


def add_pretrain(p: argparse.ArgumentParser) -> None:
    from zoo.train.config import SECTIONS

    p.description = (
        "Pretrain a preset with an objective. Unset numbers take the preset's paper recipe "
        "(Appendix D). Flags override the YAML config given with --config."
    )
    p.add_argument("--config", help="YAML file with any of the flags below as keys")
    add_trust(p)
    p.add_argument(
        "--resume",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH",
        help="continue from the newest verified checkpoint in --output-dir, or from the "
        "checkpoint PATH of that run (as Hugging Face's resume_from_checkpoint)",
    )
    for section in SECTIONS:
        group = p.add_argument_group(section.__name__.removesuffix("Settings").lower())
        _add_config_flags(group, section, skip={"loss", "pretrain_key"})
    group = p.add_argument_group(
        "loss options",
        "of every objective, plugins' included (--plugins first); checked "
        "against the chosen objective's own options",
    )
    for name, field in loss_option_fields().items():
        _add_field_flag(group, name, field, LOSS_DEST, "loss.")
    p.set_defaults(func=cmd_pretrain)


def add_finetune_causal(p: argparse.ArgumentParser) -> None:
    from zoo.train.finetune_settings import CausalFinetuneConfig

    p.description = (
        "Give a headless decoder an LM head initialised from its input embeddings (an NCE "
        "model's: from its target-embedding matrix) and train it with causal cross-entropy "
        "(paper section 3.3). Output loads with AutoModelForCausalLM."
    )
    p.add_argument(
        "checkpoint",
        help="a headless decoder: its checkpoint folder, or its run's name (`hlm runs`)",
    )
    p.add_argument("output_dir", help="where to write the fine-tuned run")
    _add_config_flags(p, CausalFinetuneConfig, skip=set())
    p.set_defaults(func=cmd_finetune_causal)


def add_publish(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Upload to the Hugging Face Hub with a generated card. The token comes from HF_TOKEN "
        "or the login cache and is never written anywhere. --write-to DIR writes exactly the "
        "files that would be uploaded. HF_ENDPOINT (or --endpoint) selects another Hub."
    )
    what = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    pm = what.add_parser("model", help="a checkpoint folder (e.g. runs/pretrain/<key>/final)")
    pm.description = "A checkpoint as a model repo: its files, and a card with its rows' scores."
    pm.add_argument("checkpoint", help="a checkpoint folder, or a run's name (`hlm runs`)")
    pm.add_argument(
        "--suite",
        help="take the leaderboard rows of --model in this suite (default: rows whose "
        "pretraining key matches the checkpoint folder)",
    )
    pm.add_argument("--model", help="model label in --suite")
    pm.add_argument("--revision", help="branch to upload to (created if missing)")
    pm.add_argument("--license", default="apache-2.0")
    pm.add_argument(
        "--language",
        default="en",
        help="card metadata (default: en; omitted for a checkpoint trained on the synthetic "
        "corpus only)",
    )
    pm.add_argument(
        "--base-model", help="Hub id the checkpoint was fine-tuned from (card metadata)"
    )
    pm.add_argument("--repository-url", help="a code repository to link from the card")
    pl = what.add_parser("leaderboard", help="a suite's Parquet leaderboard, as a dataset repo")
    pl.description = "A suite's leaderboard as a dataset repo: its Parquet rows and a card."
    pl.add_argument("suite", help="suite name or YAML path")
    pl.add_argument("--license", default="cc-by-4.0")
    for q in (pm, pl):
        q.add_argument("--repo", required=True, help="OWNER/NAME on the Hub")
        q.add_argument("--private", action="store_true", help="create the repo private")
        q.add_argument(
            "--write-to",
            metavar="DIR",
            dest="dry_run",
            help="write the files to DIR instead of uploading (a review before a publish)",
        )
        q.add_argument("--endpoint", help="Hub URL (default: $HF_ENDPOINT or huggingface.co)")
        add_leaderboards(q)
    p.set_defaults(func="harness.publish.hub:cmd_publish")


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
    add_verbs(sub, verb)
    return parser


def installed_version() -> str:
    """headless-zoo's installed version, as pip lists it."""
    from importlib.metadata import version

    return version("headless-zoo")  # `hlm` itself is an entry point of the installed package


def main(argv: Sequence[str] | None = None) -> int:
    # Transparent huge pages for torch's large CPU tensors (read at torch's first allocation,
    # so before torch is imported): fresh activations, logits and score matrices are then
    # faulted in 2 MiB at a time instead of 4 KiB (docs/PERFORMANCE.md). Opt out with
    # THP_MEM_ALLOC_ENABLE=0.
    os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parse(argv)
    if isinstance(args, int):
        return args
    configure(verbosity(args))
    return dispatch(args)


def _parse(argv: list[str]) -> argparse.Namespace | int:
    """The parsed command line, or the exit status of a clear error about it."""
    if argv and not argv[0].startswith("-") and argv[0] not in VERBS:
        from zoo.registry import unknown_name_message

        print(
            f"hlm: error: {unknown_name_message('verb', argv[0], sorted(VERBS))}", file=sys.stderr
        )
        return 2
    preload_plugins(argv)
    parser = build_parser(argv[0] if argv else "")
    args, unknown = parser.parse_known_args(one_spelling(parser, argv, VERBS))
    return _unknown_flags(parser, args.verb, unknown) if unknown else args


def _unknown_flags(parser: argparse.ArgumentParser, verb: str, unknown: list[str]) -> int:
    """One line per unknown argument, with the flag meant where one is close; status 2."""
    import difflib

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    known = sorted(sub.choices[verb]._option_string_actions)
    flags = [a for a in unknown if a.startswith("-")]
    for arg in flags or unknown:  # an unknown flag's value is not named again
        flag = arg.split("=", 1)[0]
        friends = {**FALSE_FRIENDS, **(TRAINER_NAMES if verb == "pretrain" else {})}
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


if __name__ == "__main__":
    sys.exit(main())
