"""lm-eval's environment: its bars hidden unless asked for, its commit this checkout's."""

from __future__ import annotations

import sys

import pytest

from harness.results.provenance import git_sha
from harness.tasks.lm_eval_env import lm_eval_bars, project_git


def test_lm_eval_bars_are_hidden_unless_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    """Inside a suite's cell bar, none of lm-eval's own (its modules', and the one it draws
    while bootstrapping a perplexity's stderr); its other messages are passed on."""
    import lm_eval.api.task
    from tqdm import tqdm as imported_late  # as lm_eval.api.metrics imports it

    def draw() -> None:
        for bar in (lm_eval.api.task.tqdm(range(3), disable=False), imported_late(range(2))):
            list(bar)
        print("WARNING: a message of lm-eval's", file=sys.stderr)

    with lm_eval_bars(shown=False):
        draw()
    err = capsys.readouterr().err
    assert err == "WARNING: a message of lm-eval's\n"
    with lm_eval_bars(shown=True):
        draw()
    err = capsys.readouterr().err
    assert "3/3" in err and "2/2" in err and "a message" in err


def test_lm_eval_records_the_commit_of_this_checkout() -> None:
    """No patching of lm-eval: `GIT_DIR` makes its own `git describe` name this project."""
    from lm_eval.loggers.utils import get_git_commit_hash

    with project_git():
        described = get_git_commit_hash()
    assert described is not None and git_sha().startswith(described.split("-")[-1].lstrip("g"))
