"""How a verb ends: its exit status and the one line that says why.

    0    done
    2    bad input (a user error, a path the system refuses): one line per problem
    3    a bug of ours: one line, naming the file its traceback went to (`--debug` shows it)
    130  interrupted (Ctrl-C); 141 the reader of stdout left; a training signal's own status

`dispatch` runs a parsed command line's verb; every exception ends here, as one of these.
"""

from __future__ import annotations

import argparse
import os
import sys

from zoo.errors import UserError
from zoo.registry import load_installed_plugins
from zoo.text import terminal
from zoo.train.interrupt import TrainingInterrupted

# what pathlib (< 3.13) raises as RuntimeError for a path the user gave
PATH_ERRORS = {
    "Symlink": "a path given leads into a link loop",
    "Could": "a path given starts with ~NAME, and there is no user NAME",
}


def dispatch(args: argparse.Namespace) -> int:
    """Run the verb; bad input ends it with status 2 and one line (`_run_verb`), a bug with
    status 3 and one line naming the file its traceback went to (`_internal_error`)."""
    try:
        return _run_verb(args)
    except Exception as exc:
        if isinstance(exc, RuntimeError) and str(exc).startswith(tuple(PATH_ERRORS)):
            print(
                f"hlm {args.verb}: error: {PATH_ERRORS[str(exc).split()[0]]}: {exc}",
                file=sys.stderr,
            )
            return 2
        return _internal_error(args, exc)


def _run_verb(args: argparse.Namespace) -> int:
    """Run the verb (the installed `hlm.plugins` imported first); a user error, a signal or a
    closed pipe ends it with its own status."""
    try:
        load_installed_plugins()
        return int(args.run(args))
    except UserError as exc:
        for line in str(exc).splitlines():  # a name's escape codes shown, never sent raw
            print(f"hlm {args.verb}: error: {terminal(line)}", file=sys.stderr)
        return 2
    except TrainingInterrupted as exc:  # a signal, answered with a checkpoint
        print(f"hlm {args.verb}: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"hlm {args.verb}: interrupted; finished work is kept", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `hlm leaderboard | head`: the reader left, as with any tool
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a path the system refuses: read-only, too long, not a folder
        if exc.filename is None:
            raise  # not about a path the user gave: a bug, shown as one
        print(f"hlm {args.verb}: error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return 2


INTERNAL_ERROR = 3  # a bug of ours, not bad input (2)


def _internal_error(args: argparse.Namespace, exc: BaseException) -> int:
    """One line for a bug (the verb, the cause, where its traceback went); the traceback
    itself with --debug."""
    import tempfile
    import traceback

    if "debug" in vars(args) and args.debug:
        traceback.print_exception(exc)
        return INTERNAL_ERROR
    fd, path = tempfile.mkstemp(prefix=f"hlm-{args.verb}-", suffix=".traceback.txt")
    with os.fdopen(fd, "w") as f:
        traceback.print_exception(exc, file=f)
    cause = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    print(
        f"hlm {args.verb}: internal error: {type(exc).__name__}: {cause} (a bug: its traceback "
        f"is in {path}; --debug shows it here)",
        file=sys.stderr,
    )
    return INTERNAL_ERROR
