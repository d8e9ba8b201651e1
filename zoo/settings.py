"""The base of every block of settings a person writes (run configs and their sections, loss
options, causal fine-tuning settings, suite entries, task parameters), read from YAML or flags.

`Settings` refuses unknown keys, is frozen once validated, and checks every number once for
all its fields, so that no YAML slip silently changes a run:

- a yes/no is no number: `steps: yes` is YAML's True, which pydantic would read as 1, and
  `lr: yes` as a learning rate of 1.0;
- a float is finite: `lr: .inf` or `.nan` is refused by key, as a value out of range is.

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


class Settings(BaseModel):
    """Settings read from YAML or flags: see the module docstring."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_yes_no_for_a_number(cls, value: Any, info: ValidationInfo) -> Any:
        name = info.field_name
        if name is not None and is_number(cls.model_fields[name].annotation):
            return not_a_bool(value)
        return value
