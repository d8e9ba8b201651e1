"""Leaderboard rows of a computed cell: two task entries of one suite that report the same
sub-task are refused before the second writes a row, since every reader would take the two
for one value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.results.leaderboard import read_leaderboard
from harness.run.runner import run_suite

# one bert-tiny, two `synthetic` entries with other fine-tuning params: both report
# synthetic/agreement, whatever each entry is named
TWICE = """\
name: twice
baseline: bert-tiny-ce
models:
  - {preset: bert-tiny, objective: ce}
recipe: {corpus: ["synthetic:200"], vocab_size: 400, steps: 4, batch_size: 4, seq_len: 32}
seeds: [0]
tasks:
  - type: synthetic
    params: {epochs: 1, batch_size: 16, lr: 1.0e-4, max_examples: 32, max_eval_examples: 16}
  - type: synthetic
    name: synthetic-lr3e-4
    params: {epochs: 1, batch_size: 16, lr: 3.0e-4, max_examples: 32, max_eval_examples: 16}
"""
# the same two entries, each on a model of its own
APART = """\
name: apart
baseline: bert-tiny-ce
models:
  - {preset: bert-tiny, objective: ce}
  - {preset: bert-tiny, objective: cwt}
recipe: {corpus: ["synthetic:200"], vocab_size: 400, steps: 4, batch_size: 4, seq_len: 32}
seeds: [0]
tasks:
  - type: synthetic
    models: [bert-tiny-ce]
    params: {epochs: 1, batch_size: 16, lr: 1.0e-4, max_examples: 32, max_eval_examples: 16}
  - type: synthetic
    name: synthetic-lr3e-4
    models: [bert-tiny-cwt]
    params: {epochs: 1, batch_size: 16, lr: 3.0e-4, max_examples: 32, max_eval_examples: 16}
"""


def test_a_second_entry_reporting_the_same_sub_task_writes_nothing(isolated: Path) -> None:
    suite = isolated / "twice.yaml"
    suite.write_text(TWICE)
    lb = isolated / "lb"
    summary = run_suite(suite, root=lb, progress=False)
    assert summary.computed == 1 and len(summary.failed) == 1, summary
    failed = summary.failed[0]
    assert "task entries 'synthetic' and 'synthetic-lr3e-4'" in failed, failed
    assert "both write synthetic/agreement" in failed and "none of its rows was written" in failed
    df = read_leaderboard(lb / "twice")  # the first entry's rows, whole and alone
    assert df["cell_id"].nunique() == 1
    assert "synthetic/agreement" in set(df["task"])
    # through the CLI: a non-zero exit that names the two entries
    assert hlm(["run", str(suite), "--leaderboards", str(lb), "-q"]) != 0


def test_entries_reporting_different_sub_tasks_both_write(isolated: Path) -> None:
    """The guard compares row keys, not task types: the same two entries, each on a model of
    its own, write their rows side by side."""
    suite = isolated / "apart.yaml"
    suite.write_text(APART)
    summary = run_suite(suite, root=isolated / "lb", progress=False)
    assert summary.failed == [] and summary.computed == 2
    df = read_leaderboard(isolated / "lb" / "apart")
    assert set(df["model"]) == {"bert-tiny-ce", "bert-tiny-cwt"}


# the experiment TWICE meant to run: one entry, its fine-tuning lr swept
SWEPT = """\
name: swept
baseline: bert-tiny-ce
models:
  - {preset: bert-tiny, objective: ce}
recipe: {corpus: ["synthetic:200"], vocab_size: 400, steps: 4, batch_size: 4, seq_len: 32}
seeds: [0]
sweep: {tasks.synthetic.lr: [1.0e-4, 3.0e-4]}
tasks:
  - type: synthetic
    params: {epochs: 1, batch_size: 16, max_examples: 32, max_eval_examples: 16}
"""


def test_a_swept_task_parameter_writes_a_row_per_point(isolated: Path) -> None:
    """What the guard's message offers: the two lrs as sweep points of one entry fine-tune
    the same pretrained model and write their rows side by side, each under its point."""
    suite = isolated / "swept.yaml"
    suite.write_text(SWEPT)
    summary = run_suite(suite, root=isolated / "lb", progress=False)
    assert summary.failed == [] and summary.computed == 2, summary
    df = read_leaderboard(isolated / "lb" / "swept")
    acc = df[df["task"] == "synthetic/agreement"]
    points = {json.loads(s)["tasks.synthetic.lr"] for s in acc["sweep"]}
    assert points == {1.0e-4, 3.0e-4}
    assert {json.loads(c)["task"]["params"]["lr"] for c in acc["config"]} == points
    pretrained = {json.loads(c)["pretrain_key"] for c in df["config"]}
    assert len(pretrained) == 1, pretrained  # one pretraining run serves both points


@pytest.mark.parametrize("include_stale", [False, True])
def test_a_board_already_mixed_is_refused_on_reading(tmp_path: Path, include_stale: bool) -> None:
    """Rows of two cells under one key (copied in by hand, or written before the guard):
    reading the board says so, naming the folder and both entries; reading superseded rows
    too (where an old cell's rows stand beside its successor's) does not."""
    from harness.results.leaderboard import write_cell
    from tests.harness.results.test_leaderboard import row

    for cell, name in (("c1", None), ("c2", "glue-lr3e-4")):
        r = row("m", "accuracy", 0.5, task="glue/sst2")
        r.update(cell_id=cell, config=json.dumps({"task": {"type": "glue", "name": name}}))
        write_cell(tmp_path, cell, [r])
    if include_stale:
        assert len(read_leaderboard(tmp_path, include_stale=True)) == 2
        return
    from zoo.errors import UserError

    with pytest.raises(UserError, match=rf"{tmp_path}: task entries 'glue' and 'glue-lr3e-4'"):
        read_leaderboard(tmp_path)


def test_a_checkpoint_not_pretrained_here_records_no_objective_of_ours(
    isolated: Path, tiny_encoder: Path
) -> None:
    """A checkpoint without hlm's metadata (a published model) is evaluated as a classical
    LM, but its rows say `external`, so nothing that selects models by objective counts it
    as a `ce` model we pretrained; the same weights with their metadata keep theirs."""
    import shutil

    from harness.run.rows import EXTERNAL

    elsewhere = isolated / "published"
    shutil.copytree(tiny_encoder, elsewhere)
    for ours in ("hlm_metadata.json", "hlm_commit.json"):  # a plain Hugging Face folder
        (elsewhere / ours).unlink()
    suite = isolated / "ext.yaml"
    suite.write_text(
        "name: ext\nmodels:\n"
        f"  - {{checkpoint: {elsewhere}, name: published}}\n"
        f"  - {{checkpoint: {tiny_encoder}, name: ours}}\n"
        "seeds: [0]\ntasks:\n  - type: glue\n"
        "    params: {tasks: [sst2], source: local, epochs: 1, batch_size: 16,"
        " max_examples: 32, max_eval_examples: 16}\n"
    )
    summary = run_suite(suite, root=isolated / "lb", progress=False)
    assert summary.failed == [], summary
    df = read_leaderboard(isolated / "lb" / "ext")
    objective = df.groupby("model")["objective"].unique().to_dict()
    assert list(objective["published"]) == [EXTERNAL] and list(objective["ours"]) == ["cwt"]


def test_the_committed_published_encoder_rows_are_external() -> None:
    """check-known-encoder's all-MiniLM-L6-v2 rows: no objective of ours."""
    from harness.run.rows import EXTERNAL

    root = Path(__file__).resolve().parents[3] / "leaderboards" / "check-known-encoder"
    assert set(read_leaderboard(root)["objective"]) == {EXTERNAL}
