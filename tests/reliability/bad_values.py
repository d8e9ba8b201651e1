"""Hypothesis strategies of values that a typed config field must refuse, read off the field.

    bad_value(PretrainConfig, "lr")   # nan, inf, 0, -3.5, "fast", {"junk": 1}, ...

A value is drawn from what the field's declared type and range exclude (its `gt`/`ge`/`lt`/`le`
bounds, finiteness, Literal choices, registry names), or from junk no field takes (a mapping with
an unknown key). Nested models (`loss:`, `save_at:`) get one bad sub-value or an unknown key.
Nothing here asks the validator what is valid, so a check that is missing shows as a failure.
"""

from __future__ import annotations

import math
import string
import types
import typing
from typing import Any

from annotated_types import Ge, Gt, Le, Lt, MinLen
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from zoo.models import PRESETS
from zoo.objectives import OBJECTIVES

JUNK = st.sampled_from([{"junk_key": {"x": 1}}, [[{"x": 1}]]])
NAME = st.text(string.ascii_lowercase + "-_", min_size=1, max_size=12)
REGISTRY_FIELDS = {"preset": PRESETS, "objective": OBJECTIVES}


def _strip_optional(ann: Any) -> Any:
    if typing.get_origin(ann) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        return args[0] if len(args) == 1 else ann
    return ann


def _annotated(ann: Any) -> tuple[Any, list[Any]]:
    """(type, constraints) of `Annotated[T, Field(...)]` or a plain T."""
    if typing.get_origin(ann) is typing.Annotated:
        base, *extra = typing.get_args(ann)
        return base, [m for e in extra for m in getattr(e, "metadata", [e])]
    return ann, []


def _out_of_range(kind: type, metadata: list[Any]) -> list[Any]:
    """Numbers just outside each declared bound, and non-finite ones where finite is asked."""
    out: list[Any] = []
    step = 1 if kind is int else 0.5
    for m in metadata:
        if isinstance(m, Gt):
            out += [m.gt, m.gt - step, -(10**6)]
        elif isinstance(m, Ge):
            out += [m.ge - step, m.ge - 10**6]
        elif isinstance(m, Lt):
            out += [m.lt, m.lt + step]
        elif isinstance(m, Le):
            out += [m.le + step, m.le * 10]
        elif getattr(m, "allow_inf_nan", True) is False:
            out += [math.nan, math.inf, -math.inf]
    return out


def _scalar(kind: Any, metadata: list[Any]) -> st.SearchStrategy[Any]:
    if typing.get_origin(kind) is typing.Literal:
        choices = set(typing.get_args(kind))
        return NAME.filter(lambda v: v not in choices)
    if kind is bool:
        return st.sampled_from(["perhaps", 2, [True]])
    if kind is int:
        return st.sampled_from([1.5, "seven", *_out_of_range(int, metadata)])
    if kind is float:
        return st.sampled_from(["fast", *_out_of_range(float, metadata)])
    return JUNK


def _sequence(kind: Any, metadata: list[Any]) -> st.SearchStrategy[Any]:
    args = typing.get_args(kind)
    if typing.get_origin(kind) is tuple:
        item, item_meta = _annotated(args[0])
        bad = _scalar(item, item_meta)
        return st.one_of(
            st.builds(lambda b: [b, 0.5], bad), st.just([0.5]), st.just([0.5, 0.5, 0.5])
        )
    item, item_meta = _annotated(args[0])
    options = [st.builds(lambda b: [b], _scalar(item, item_meta))] if item is not str else []
    if any(isinstance(m, MinLen) and m.min_length > 0 for m in metadata):
        options.append(st.just([]))
    return st.one_of(*options, JUNK)


def _nested(model: type[BaseModel]) -> st.SearchStrategy[Any]:
    names = [n for n in model.model_fields if bad_value_or_none(model, n) is not None]
    shapes = [st.just({"not_an_option": 1}), st.just("a string")]
    if not names:  # a block with no field of its own to break (a base options model)
        return st.one_of(*shapes)
    one_bad = st.sampled_from(names).flatmap(
        lambda n: st.builds(lambda v: {n: v}, bad_value(model, n))
    )
    return st.one_of(one_bad, *shapes)


def bad_value_or_none(model: type[BaseModel], name: str) -> st.SearchStrategy[Any] | None:
    """A strategy of values `model.name` must refuse; None for free text (paths, ids)."""
    if name in REGISTRY_FIELDS:
        registry = REGISTRY_FIELDS[name]
        return NAME.filter(lambda v: v not in registry)
    field: FieldInfo = model.model_fields[name]
    kind, extra = _annotated(_strip_optional(field.annotation))
    metadata = [*field.metadata, *extra]
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return _nested(kind)
    if typing.get_origin(kind) in (list, tuple):
        return _sequence(kind, metadata)
    if kind is str:
        return None
    return _scalar(kind, metadata)


def bad_value(model: type[BaseModel], name: str) -> st.SearchStrategy[Any]:
    strategy = bad_value_or_none(model, name)
    return JUNK if strategy is None else st.one_of(strategy, JUNK)


def checked_fields(model: type[BaseModel], keys: list[str] | None = None) -> list[str]:
    """The fields of `model` (or `keys` of it) with a range or type to break."""
    return [n for n in keys or list(model.model_fields) if bad_value_or_none(model, n) is not None]
