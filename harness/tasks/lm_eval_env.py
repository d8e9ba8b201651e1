"""The process environment lm-eval runs in, set for one evaluation and restored after.

- `lm_eval_bars`: lm-eval's progress bars hidden (they would nest inside `hlm run`'s cell
  bar); lm-eval has no switch for them, so its standard error is read while it runs and
  every other line is passed on.
- `project_git`: lm-eval records `git describe` of the working directory; `GIT_DIR` points it
  at this checkout, so it records the commit of the code that ran.
- `data_root_env`: `$HLM_DATA_ROOT` for the shipped tasks' loaders.

No patching: each is a public switch (a stream, an environment variable).
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from harness.results.provenance import git_output
from zoo.data.corpus import DATA_ROOT_ENV
from zoo.env import env_set


@contextmanager
def lm_eval_bars(shown: bool) -> Iterator[None]:
    """lm-eval's progress bars as asked: hidden, they would nest inside `hlm run`'s cell bar.

    lm-eval has no switch for its bars (it passes tqdm's ``disable=`` itself), so its
    standard error is read while it runs and every line but the bars' is passed on after."""
    if shown:
        yield
        return
    caught = io.StringIO()
    try:
        with contextlib.redirect_stderr(caught):
            yield
    finally:
        kept = [line for line in caught.getvalue().split("\n") if line.strip() and "\r" not in line]
        if kept:
            sys.stderr.write("\n".join(kept) + "\n")


def project_git() -> AbstractContextManager[None]:
    """lm-eval records `git describe` of the working directory (and git prints "fatal: not a
    git repository" outside one): within this block, `GIT_DIR` names this project's
    repository where it is a checkout, so lm-eval records the commit of the code that ran.
    An installed copy has none: lm-eval then does as it always does."""
    folder = git_output("rev-parse", "--absolute-git-dir")
    return env_set("GIT_DIR", folder) if folder else contextlib.nullcontext()


def data_root_env(root: Path) -> AbstractContextManager[None]:
    """$HLM_DATA_ROOT set to `root` for the shipped tasks' loaders, restored afterwards."""
    return env_set(DATA_ROOT_ENV, str(root.resolve()))
