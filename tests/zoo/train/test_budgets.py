"""Compute budgets: a run stops at the first of max steps, tokens, FLOPs and seconds, and its
metadata says which budget stopped it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zoo.errors import UserError
from zoo.train.config import PretrainConfig, load_config
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain
from zoo.train.run import Counters, StopRule

TINY = dict(
    corpus=["synthetic:300"], vocab_size=600, steps=8, batch_size=4, seq_len=32, progress=False
)
TOKENS_PER_STEP = 4 * 32


def test_stop_rule_names_the_first_budget_reached() -> None:
    rule = StopRule(max_steps=10, max_tokens=1000, max_flops=5e9, max_seconds=2.0)
    assert rule.reason(Counters(step=3, tokens_seen=999, flops=1e9, wall_seconds=1.0)) is None
    assert rule.reason(Counters(step=3, tokens_seen=1000)) == "tokens"
    assert rule.reason(Counters(step=3, flops=5e9)) == "flops"
    assert rule.reason(Counters(step=3, wall_seconds=2.5)) == "seconds"
    assert rule.reason(Counters(step=10, tokens_seen=1000)) == "steps"


def _run(tmp_path: Path, name: str, **budget: float) -> Path:
    cfg = PretrainConfig(
        preset="pythia-tiny", objective="cwt", output_dir=str(tmp_path / name), **TINY, **budget
    )
    return pretrain(cfg)


def test_budgets_stop_pretraining_at_the_right_step(tmp_path: Path) -> None:
    full = read_metadata(_run(tmp_path, "steps"))
    assert (full.steps, full.stopped_by, full.tokens_seen) == (8, "steps", 8 * TOKENS_PER_STEP)
    tokens = read_metadata(_run(tmp_path, "tokens", max_tokens=3 * TOKENS_PER_STEP - 1))
    assert (tokens.steps, tokens.stopped_by) == (3, "tokens")
    per_step = full.train_flops / full.steps
    flops = read_metadata(_run(tmp_path, "flops", max_flops=2.5 * per_step))
    assert (flops.steps, flops.stopped_by) == (3, "flops")
    seconds = read_metadata(_run(tmp_path, "seconds", max_seconds=1e-9))
    assert (seconds.steps, seconds.stopped_by) == (1, "seconds")
    assert tokens.validation and seconds.validation  # evaluated where it stopped


@pytest.mark.parametrize("key", ["max_tokens", "max_flops", "max_seconds"])
def test_budgets_are_range_checked(key: str) -> None:
    with pytest.raises(UserError, match=rf"^command line: {key}: Input should be greater than 0"):
        load_config(None, {"preset": "bert-tiny", "output_dir": "x", key: 0})


def test_budget_marks_keep_the_checkpoint_that_first_reached_them(tmp_path: Path) -> None:
    from zoo.train.budgets import BudgetMarks
    from zoo.train.layout import list_checkpoints

    marks = BudgetMarks(tokens=[2 * TOKENS_PER_STEP + 1, 5 * TOKENS_PER_STEP])
    out = tmp_path / "m"
    pretrain(
        PretrainConfig(
            preset="pythia-tiny", objective="cwt", output_dir=str(out), save_at=marks, **TINY
        )
    )
    saved = {p.name: read_metadata(p).reached for p in list_checkpoints(out)}
    # 2 x 128 + 1 tokens is first reached at step 3; 5 x 128 exactly at step 5
    assert saved == {"step-0000003": ["tokens=257"], "step-0000005": ["tokens=640"]}


def test_budget_marks_from_the_flag() -> None:
    """`--save-at tokens=1e6,flops=2e15,tokens=4e6`: marks of one budget gather in order."""
    from zoo.train.budgets import BudgetMarks

    got = BudgetMarks.from_flag("tokens=1e6, flops=2e15,tokens=4e6,")
    assert got == BudgetMarks(tokens=[1_000_000, 4_000_000], flops=[2e15])
    assert BudgetMarks.from_flag("") == BudgetMarks()
    assert BudgetMarks.from_flag("tokens=40.3M,flops=1.5T") == BudgetMarks(
        tokens=[40_300_000], flops=[1.5e12]
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("tokens", "'tokens': expected NAME=NUMBER, NAME one of tokens, flops, seconds"),
        ("steps=3", "'steps=3': expected NAME=NUMBER"),
        ("tokens=abc", "'tokens=abc': 'abc' is not a number"),
        ("tokens=M", "'tokens=M': 'M' is not a number"),
        ("tokens=-5", "tokens[0]: Input should be greater than 0"),
        ("tokens=1.5", "tokens[0]: Input should be a valid integer"),
        ("seconds=1,seconds=nan", "seconds[1]: Input should be a finite number"),
    ],
)
def test_budget_marks_flag_errors_name_the_part(text: str, error: str) -> None:
    from zoo.train.budgets import BudgetMarks

    with pytest.raises(ValueError, match="^" + re.escape(error)):
        BudgetMarks.from_flag(text)


def test_the_save_at_flag_reaches_the_config(capsys) -> None:
    from harness.cli import build_parser
    from harness.cli import main as hlm
    from zoo.train.budgets import BudgetMarks

    args = build_parser().parse_args(["pretrain", "--save-at", "tokens=1e6,seconds=30"])
    assert args.save_at == BudgetMarks(tokens=[1_000_000], seconds=[30.0])
    with pytest.raises(SystemExit) as exit_:  # argparse's own exit for a bad flag value
        hlm(["pretrain", "--save-at", "tokens=abc", "--output-dir", "x"])
    assert exit_.value.code == 2
    assert "argument --save-at: 'tokens=abc': 'abc' is not a number" in capsys.readouterr().err
