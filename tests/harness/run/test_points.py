"""Downstream along pretraining: every task type evaluates the checkpoints it asks for
(`every:` steps, `at:` budget fractions), each once; fine-tuned decoders at each of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from safetensors.torch import load_file

from harness.results.leaderboard import read_leaderboard
from harness.run.cells import expand
from harness.run.points import Point, prepare
from harness.run.runner import run_suite
from harness.suite import SuiteError, load_suite
from zoo.train.names import named_runs, resolve_checkpoint
from zoo.train.pretrain import pretrain

SUITE = """
name: along
models:
  - {preset: bert-tiny, objective: cwt}
  - {preset: pythia-tiny, objective: cwt, finetune_causal: true, finetune: {steps: 2}}
recipe: {corpus: ["synthetic:200"], vocab_size: 400, steps: 6, batch_size: 4, seq_len: 32}
tasks:
  - type: synthetic
    models: [bert-tiny-cwt]
    every: 3
    params: {epochs: 1, batch_size: 16, max_examples: 32, max_eval_examples: 32, lr: 1.0e-4}
  - type: validation
    models: [pythia-tiny-cwt-ft]
    at: [0.5]
    params: {batches: 1}
"""


def test_every_task_type_evaluates_along_pretraining(isolated: Path) -> None:
    suite = isolated / "along.yaml"
    suite.write_text(SUITE)
    lb = isolated / "lb"
    assert run_suite(suite, root=lb, progress=False).failed == []
    df = read_leaderboard(lb / "along")
    syn = df[df["task"].str.startswith("synthetic")]
    assert sorted(syn["step"].unique()) == [3, 6]  # glue-like tasks read intermediate checkpoints
    val = df[df["task"] == "validation"]
    # the fine-tuned decoder at half its budget and at the end; tokens count the fine-tuning
    per_step, ft_tokens = 4 * 32, 2 * 1 * 32  # fine-tuning batch: a quarter of 4
    assert sorted(val["tokens_seen"].unique()) == [
        3 * per_step + ft_tokens,
        6 * per_step + ft_tokens,
    ]
    runs = isolated / "runs" / "pretrain"
    assert len(list(runs.glob("*/finetune-causal-*-step-0000003/final"))) == 1
    # the fine-tuned decoder's name is its final fine-tuning's; its headless run has its own
    names = named_runs()
    assert names["along/pythia-tiny-cwt-ft/seed-0"].name.startswith("finetune-causal-")
    base = names["along/pythia-tiny-cwt-ft/pretraining/seed-0"]
    assert names["along/pythia-tiny-cwt-ft/seed-0"].parent == base
    assert resolve_checkpoint("along/pythia-tiny-cwt-ft/pretraining/seed-0@step-3") == str(
        base / "checkpoints" / "step-0000003"
    )
    # the fine-tuning of an earlier checkpoint never takes the model's name
    (isolated / "runs" / "by-name" / "along" / "pythia-tiny-cwt-ft" / "seed-0").unlink()
    cell = next(c for c in expand(load_suite(suite)) if c.label == "pythia-tiny-cwt-ft")
    prepare(cell, Point("x", base / "checkpoints" / "step-0000003"))
    assert "along/pythia-tiny-cwt-ft/seed-0" not in named_runs()
    prepare(cell, Point("x", base / "final"))
    assert "-step-" not in named_runs()["along/pythia-tiny-cwt-ft/seed-0"].name
    # each point is evaluated once: a re-run computes nothing, a lost final file only itself
    files = sorted(p for p in (lb / "along").glob("*.parquet"))
    mtimes = {p: p.stat().st_mtime_ns for p in files}
    assert run_suite(suite, root=lb, progress=False).computed == 0
    final = next(p for p in files if "." not in p.stem and p.stem in set(syn["cell_id"]))
    final.unlink()
    assert run_suite(suite, root=lb, progress=False).computed == 1
    assert all(p.stat().st_mtime_ns == mtimes[p] for p in files if p != final)


@pytest.mark.parametrize("key", ["every: 2", "at: [0.5]"])
def test_a_task_that_reads_no_checkpoint_refuses_every_and_at(tmp_path: Path, key: str) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        "name: s\nmodels: [{preset: bert-tiny, objective: cwt}]\n"
        f"tasks: [{{type: throughput, {key}}}]\n"
    )
    with pytest.raises(
        SuiteError, match=rf"tasks\[0\]\.{key.split(':')[0]}: 'throughput' reads no checkpoint"
    ):
        load_suite(f)


def test_at_fractions_are_checked(tmp_path: Path) -> None:
    f = tmp_path / "s.yaml"
    f.write_text(
        "name: s\nmodels: [{preset: bert-tiny, objective: cwt}]\ntasks: "
        "[{type: validation, at: [0, 1.5]}]\n"
    )
    with pytest.raises(SuiteError) as info:
        load_suite(f)
    assert "tasks[0].at[0]: Input should be greater than 0" in str(info.value)
    assert "tasks[0].at[1]: Input should be less than or equal to 1" in str(info.value)


def test_leaderboard_at_a_matched_budget(isolated: Path, capsys) -> None:
    from harness.cli import main as hlm

    suite = isolated / "budget.yaml"
    suite.write_text(
        "name: budget\nbaseline: bert-tiny-ce\n"
        "models: [{preset: bert-tiny, objective: ce}, "
        "{preset: bert-tiny, objective: cwt, recipe: {batch_size: 8}}]\n"
        "recipe: {"
        "corpus: ['synthetic:200'], vocab_size: 400, steps: 6, batch_size: 4, seq_len: 32}\n"
        "compare_at: {tokens: [512]}\n"
        "tasks: [{type: validation, params: {batches: 1}}]\n"
    )
    lb = isolated / "lb"
    assert run_suite(suite, root=lb, progress=False).failed == []
    df = read_leaderboard(lb / "budget")
    # 512 tokens: step 4 of the batch-4 model, step 2 of the batch-8 one, each evaluated there
    assert set(df[df["tokens_seen"] == 512]["step"]) == {4, 2}
    assert hlm(["leaderboard", str(suite), "--leaderboards", str(lb), "--at", "tokens=512"]) == 0
    out = capsys.readouterr().out
    assert "each model at tokens = 512, from the first checkpoint that reached it" in out
    from harness.results.budgets import budget_checkpoints

    picked = budget_checkpoints(df, "tokens", 512).set_index("model")
    assert picked.loc["bert-tiny-cwt", "step"] == 2 and picked.loc["bert-tiny-ce", "step"] == 4
    assert budget_checkpoints(df, "tokens", 10**9)["reached"].tolist() == ["no", "no"]
    assert hlm(["leaderboard", str(suite), "--leaderboards", str(lb), "--at", "token=512"]) == 2
    assert "did you mean 'tokens'" in capsys.readouterr().err


UNION = """
name: union
models: [{preset: bert-tiny, objective: cwt}]
recipe: {corpus: ["synthetic:200"], vocab_size: 400, steps: 12, batch_size: 4, seq_len: 32}
tasks:
  - {type: validation, name: a, every: 4, params: {batches: 1}}
  - {type: validation, name: b, every: 6, params: {batches: 1}}
  - {type: validation, name: c, at: [0.25], params: {batches: 1}}
  - {type: validation, name: d, params: {batches: 1}}
"""


def test_each_task_gets_its_own_points_and_no_other(isolated: Path) -> None:
    """Points are the union of each task's schedule, per task: `every: 4` and `every: 6` are
    4, 8 and 6 (not multiples of the smaller period only), and one task's `at:` does not
    leak into the others."""
    (isolated / "u.yaml").write_text(UNION)
    assert run_suite(isolated / "u.yaml", root=isolated / "lb", progress=False).failed == []
    df = read_leaderboard(isolated / "lb" / "union")
    steps = {t: sorted(g["step"].unique()) for t, g in df.groupby("task")}
    assert steps == {"a": [4, 8, 12], "b": [6, 12], "c": [3, 12], "d": [12]}
    assert len(list((isolated / "runs" / "pretrain").iterdir())) == 2  # one run (+ its lock)


def test_a_run_stopped_by_its_token_budget_is_evaluated_up_to_where_it_stopped(
    isolated: Path,
) -> None:
    """A recipe that keeps a long schedule (the learning rate of a 12-step run) but stops at
    `max_tokens` (as a verdict run stops at the ladder's operating point): every `every`
    point before the stop, and the final checkpoint where it stopped, none past it."""
    (isolated / "s.yaml").write_text(
        UNION.replace("name: union", "name: stop").replace(
            "steps: 12,",
            "steps: 12, max_tokens: 896,",  # 7 steps of 4 x 32 tokens
        )
    )
    assert run_suite(isolated / "s.yaml", root=isolated / "lb", progress=False).failed == []
    df = read_leaderboard(isolated / "lb" / "stop")
    steps = {t: sorted(g["step"].unique()) for t, g in df.groupby("task")}
    assert steps == {"a": [4, 7], "b": [6, 7], "c": [3, 7], "d": [7]}
    assert df["tokens_seen"].max() == 896


ONE = """
name: grow
models: [{preset: bert-tiny, objective: cwt}]
recipe: {corpus: ["synthetic:200"], vocab_size: 400, steps: 6, batch_size: 4, seq_len: 32}
tasks: [{type: validation, params: {batches: 1}}]
"""


def test_a_new_evaluation_point_resumes_the_cached_run_instead_of_pretraining_again(
    isolated: Path,
) -> None:
    suite = isolated / "g.yaml"
    suite.write_text(ONE)
    assert run_suite(suite, root=isolated / "lb", progress=False).failed == []
    (run,) = [p for p in (isolated / "runs" / "pretrain").iterdir() if p.is_dir()]
    final = run / "final" / "model.safetensors"
    made = final.stat().st_mtime_ns
    metrics = (run / "metrics.jsonl").read_text()
    suite.write_text(ONE.replace("params: {batches: 1}}", "every: 2, params: {batches: 1}}"))
    assert run_suite(suite, root=isolated / "lb", progress=False).failed == []
    assert [p for p in (isolated / "runs" / "pretrain").iterdir() if p.is_dir()] == [run]
    assert final.stat().st_mtime_ns == made  # the pretraining is the same, untouched
    assert (run / "metrics.jsonl").read_text() == metrics
    df = read_leaderboard(isolated / "lb" / "grow")
    assert sorted(df["step"].unique()) == [2, 4, 6]
    # the remade step-4 checkpoint is the one an uninterrupted run saving there writes
    (cell,) = expand(load_suite(suite))
    assert cell.pretrain is not None
    other = cell.pretrain.model_copy(update={"output_dir": str(isolated / "other")})
    pretrain(other)
    for step in (2, 4):
        name = f"checkpoints/step-{step:07d}/model.safetensors"
        remade, straight = load_file(run / name), load_file(isolated / "other" / name)
        assert all(remade[k].equal(straight[k]) for k in straight)


def test_a_cached_run_whose_training_text_changed_is_refused(isolated: Path) -> None:
    """A new task on a cached run whose corpus file was edited since fails its cell, naming
    the text, instead of evaluating a run of another text as this one."""
    from tests.zoo.data.test_cache import _write_docs
    from zoo.data.synthetic import synthetic_corpus

    docs = synthetic_corpus(200)
    corpus = _write_docs(isolated / "text.txt", docs)
    suite = isolated / "g.yaml"
    suite.write_text(ONE.replace('"synthetic:200"', str(corpus)))
    assert run_suite(suite, root=isolated / "lb", progress=False).failed == []
    _write_docs(corpus, [*docs[:-1], "a sentence that was not there"])
    suite.write_text(suite.read_text().replace("{batches: 1}", "{batches: 2}"))  # a new cell
    summary = run_suite(suite, root=isolated / "lb", progress=False)
    assert len(summary.failed) == 1 and "has changed since" in str(summary.failed[0])


def test_a_fix_to_what_a_fine_tuning_saves_makes_its_cells_anew(isolated: Path) -> None:
    """Only the fine-tuned model's cells carry the fine-tuning's version in their ids: rows a
    fixed fine-tuning would not reproduce are computed again, the others keep their ids."""
    from zoo.train.finetune_settings import FINETUNE_VERSION

    suite = isolated / "along.yaml"
    suite.write_text(SUITE)
    cells = expand(load_suite(suite))
    versions = {c.label: c.config.get("finetune_version") for c in cells}
    assert versions == {"bert-tiny-cwt": None, "pythia-tiny-cwt-ft": FINETUNE_VERSION}
