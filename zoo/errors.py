"""User-facing errors.

A `UserError` is a problem with what the user asked for (unknown name, missing file, bad value):
the CLI prints its message on one line, without a traceback, and exits with status 2.
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails


class UserError(Exception):
    """A mistake in the user's input; the message names the file / key / value at fault."""


class ZooWarning(UserWarning):
    """Something in the user's files or settings that a command works around (a damaged file
    skipped, a smaller vocabulary): `hlm` prints it on one line, as it prints a `UserError`,
    without the source line Python's warnings show."""


class TrainingDiverged(UserError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


def key_path(parts: tuple[object, ...] | list[object]) -> str:
    """A pydantic error location as a key path: ('models', 0, 'recipe', 'lr') ->
    'models[0].recipe.lr'; '<root>' when empty."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<root>"


def validation_problems(
    exc: ValidationError, source: str, prefix: str = "", model: Any = None
) -> list[str]:
    """One `SOURCE: prefix.key.path: message` line per pydantic error: the one formatter of
    every validation error a user sees (configs, suites, flags, metadata). With the `model`
    class that was validated, an unknown key names the key meant (`unknown key; did you mean
    'objective'?`)."""
    problems = []
    for err in exc.errors():
        loc = key_path(tuple(err["loc"]))
        if prefix:
            loc = prefix if loc == "<root>" else prefix + (loc if loc[0] == "[" else f".{loc}")
        problems.append(f"{source}: {loc}: {error_message(err, model)}")
    return problems


def error_message(err: ErrorDetails, model: Any = None) -> str:
    """One pydantic error's message as a user reads it: no "Value error, " prefix, and an
    unknown key called so (with the key meant, given the `model` class validated)."""
    if err["type"] == "extra_forbidden":
        hint = "" if model is None else unknown_key_hint(model, tuple(err["loc"]))
        return "unknown key" + hint
    return str(err["msg"]).removeprefix("Value error, ")


def format_validation_error(exc: ValidationError, source: str, model: Any = None) -> str:
    """`validation_problems` as one message, a line per problem."""
    return "\n".join(validation_problems(exc, source, model=model))


def close_names(name: str, known: list[str]) -> list[str]:
    """The (at most 3) names of `known` close to `name`, closest first."""
    return difflib.get_close_matches(name, known, n=3, cutoff=0.5)


def did_you_mean(name: str, known: list[str]) -> str:
    """`; did you mean 'x', 'y'?` for the names of `known` close to `name`, else ""."""
    close = close_names(name, known)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def unknown_key_hint(model: Any, loc: tuple[Any, ...]) -> str:
    """For the unknown key at `loc` in a mapping validated as `model`: the known keys close
    to it (`; did you mean 'objective'?`), else a section one level down that has it
    (`; did you mean 'recipe.loss'?`: `loss` under a model entry), else the keys there are
    when they are few. "" where the place cannot be resolved."""
    key, places = str(loc[-1]), _models_at(model, loc[:-1])
    known = sorted({k for m in places for k in m.model_fields})
    if not known:
        return ""
    hint = did_you_mean(key, known)
    if hint:
        return hint
    deeper = sorted(
        f"{name}.{key}"
        for m in places
        for name, field in m.model_fields.items()
        if any(key in sub.model_fields for sub in _models_in([field.annotation]))
    )
    if deeper:
        return f"; did you mean {', '.join(repr(d) for d in deeper)}?"
    return f" (the keys here: {', '.join(known)})" if len(known) <= 16 else ""


def _models_at(model: Any, loc: tuple[Any, ...]) -> list[Any]:
    """The pydantic model classes a value at `loc` (a pydantic error location) inside `model`
    may be validated as. A text part that leads nowhere (a union member's tag) is passed by."""
    places = [model]
    for part in loc:
        inner = [t for a in places for m in _members(a) for t in _step(m, part)]
        if inner or isinstance(part, int):
            places = inner
    return _models_in(places)


def _step(member: Any, part: Any) -> list[Any]:
    """The types under key or index `part` of a value of type `member` (no union)."""
    origin, args = typing.get_origin(member), typing.get_args(member)
    if isinstance(part, int):
        return [args[0]] if origin in (list, tuple) and args else []
    if origin is dict and len(args) == 2:
        return [args[1]]
    fields = _models_in([member])
    return [m.model_fields[part].annotation for m in fields if part in m.model_fields]


def _members(annotation: Any) -> list[Any]:
    """The types a value of this type may be: through Annotated and unions."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _members(args[0])
    if origin in (typing.Union, types.UnionType):
        return [m for a in args for m in _members(a)]
    return [annotation]


def _models_in(annotations: list[Any]) -> list[Any]:
    """The pydantic model classes among the types `annotations` may be."""
    from pydantic import BaseModel

    return [
        m
        for a in annotations
        for m in _members(a)
        if isinstance(m, type) and issubclass(m, BaseModel)
    ]
