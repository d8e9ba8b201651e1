"""The base of every block of settings a person writes (run configs and their sections, loss
options, causal fine-tuning settings, suite entries, task parameters), read from YAML or flags.

`Settings` refuses unknown keys, is frozen once validated, and checks every number once for
all its fields, so that no YAML slip silently changes a run:

- a yes/no is no number, alone or in a list: `steps: yes` is YAML's True, which pydantic
  would read as 1, `lr: yes` a learning rate of 1.0 and `seeds: [yes, no]` seeds 1 and 0;
- a float is finite: `lr: .inf` or `.nan` is refused by key, as a value out of range is;
- a list of text takes one text: `corpus: FILE` in YAML is `--corpus FILE` on the command line
  (`[FILE]`). A list of numbers does not: `seeds: 3` may mean three seeds or seed 3.

A field that does take a yes/no (`bf16: true`) is left alone, as is one that takes anything
(`params: {...}`, checked by its own model).
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator


def not_a_bool(value: Any) -> Any:
    """`value`, unless it is a yes/no (YAML's true / false) where a number is meant."""
    if isinstance(value, bool):
        raise ValueError(f"{value} is a yes/no, not a number")
    return value


def is_number(annotation: Any) -> bool:
    """Whether a field of this type holds a number and no yes/no: int, float, or a union of
    them with None or text (`int | None`, `int | str`), not one that names bool."""
    if annotation in (int, float):
        return True
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return is_number(args[0])
    if origin in (typing.Union, types.UnionType):
        return bool not in args and any(is_number(a) for a in args)
    return False


def holds_numbers(annotation: Any) -> bool:
    """Whether a field of this type is a list or tuple of numbers (`seeds: list[int]`,
    `betas: tuple[float, float] | None`), whose items a yes/no must not stand for."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return holds_numbers(args[0])
    if origin in (typing.Union, types.UnionType):
        return any(holds_numbers(a) for a in args)
    return origin in (list, tuple) and any(is_number(a) for a in args)


def listed(value: Any) -> Any:
    """One text as a list of one, where a list of text is read (`corpus: FILE`); any other
    value as it is. Also for the raw YAML read before validation (`include:`, a config's
    `plugins:`)."""
    return [value] if isinstance(value, str) else value


def holds_texts(annotation: Any) -> bool:
    """Whether a field of this type is a list of text (`corpus: list[str]`, or optional), for
    which one text stands as a list of one; not where a text is itself a value (`str | list`)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return holds_texts(args[0])
    if origin in (typing.Union, types.UnionType):
        return str not in args and any(holds_texts(a) for a in args)
    return origin is list and args == (str,)


class Settings(BaseModel):
    """Settings read from YAML or flags: see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_yes_no_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        if info.field_name is None:
            return value
        annotation = cls.model_fields[info.field_name].annotation
        if is_number(annotation):
            return not_a_bool(value)
        if holds_texts(annotation):
            return listed(value)
        if holds_numbers(annotation) and isinstance(value, list | tuple):
            for item in value:
                not_a_bool(item)
        return value
