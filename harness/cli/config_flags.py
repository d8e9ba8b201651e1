"""Flags made from typed settings: one `--flag` per field of a pydantic model, typed from its
annotation, its help from the field's description, checked once by the model itself.

    add_config_flags(group, TrainSettings, skip={"loss"})      # --lr, --steps, ...
    add_field_flag(group, "temperature", field, LOSS_DEST, "loss.")   # --loss.temperature
    loss_option_fields()                                       # every objective's options

`hlm pretrain`'s flags are the run config's sections (`zoo.train.config.SECTIONS`) and
the loss options of every registered objective; `hlm finetune-causal`'s the fine-tuning
settings. A flag left unset is None: the config's own default (the preset's recipe) holds.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Callable
from typing import Any

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


def add_config_flags(
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
            add_field_flag(parser, name, field, dest_prefix, flag_prefix)


def add_field_flag(
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
