"""User-facing errors.

A `UserError` is a problem with what the user asked for (unknown name, missing file, bad value):
the CLI prints its message on one line, without a traceback, and exits with status 2.
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails


class UserError(Exception):
    """A mistake in the user's input; the message names the file / key / value at fault."""


class TrainingDiverged(UserError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


def key_path(parts: tuple[object, ...] | list[object]) -> str:
    """A pydantic error location as a key path: ('models', 0, 'recipe', 'lr') ->
    'models[0].recipe.lr'; '<root>' when empty."""
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<root>"


def validation_problems(exc: ValidationError, source: str, prefix: str = "") -> list[str]:
    """One `SOURCE: prefix.key.path: message` line per pydantic error: the one formatter of
    every validation error a user sees (configs, suites, flags, metadata)."""
    problems = []
    for err in exc.errors():
        loc = key_path(tuple(err["loc"]))
        if prefix:
            loc = prefix if loc == "<root>" else prefix + (loc if loc[0] == "[" else f".{loc}")
        problems.append(f"{source}: {loc}: {error_message(err)}")
    return problems


def error_message(err: ErrorDetails) -> str:
    """One pydantic error's message as a user reads it: no "Value error, " prefix, and an
    unknown key called so."""
    if err["type"] == "extra_forbidden":
        return "unknown key"
    return str(err["msg"]).removeprefix("Value error, ")


def format_validation_error(exc: ValidationError, source: str) -> str:
    """`validation_problems` as one message, a line per problem."""
    return "\n".join(validation_problems(exc, source))
