"""User-facing errors.

A `UserError` is a problem with what the user asked for (unknown name, missing file, bad value):
the CLI prints its message on one line, without a traceback, and exits with status 2.
Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input; the message names the file / key / value at fault."""


class TrainingDiverged(UserError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""
