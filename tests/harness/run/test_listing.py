"""Runs by name: `hlm run` links each run it trains as suite/model/seed-N, `hlm runs` lists
them with their state, and a name (with @step-N) stands for the checkpoint folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.run.listing import RunState, list_runs, suite_hours
from harness.run.runner import run_suite
from tests.harness.conftest import TINY
from zoo.errors import UserError
from zoo.train.metadata import read_metadata
from zoo.train.names import link_run, named_runs, resolve_checkpoint, run_name


def test_a_suite_names_its_runs_and_commands_take_the_names(isolated: Path, capsys) -> None:
    run_suite(TINY, root=isolated / "lb", progress=False)
    names = named_runs()
    assert sorted(names) == [f"tiny/bert-tiny-{o}/seed-{s}" for o in ("ce", "cwt") for s in (0, 1)]
    (state,) = list_runs("tiny/bert-tiny-cwt/seed-1")
    assert (state.state, state.step, state.steps, state.checkpoints) == ("done", 6, 6, (3,))
    meta = read_metadata(names["tiny/bert-tiny-cwt/seed-1"] / "final")
    assert state.tokens == meta.tokens_seen and state.hours == meta.wall_seconds / 3600
    assert state.tokens_per_s == pytest.approx(meta.tokens_seen / meta.wall_seconds)
    final = resolve_checkpoint("tiny/bert-tiny-cwt/seed-1")
    assert Path(final) == names["tiny/bert-tiny-cwt/seed-1"] / "final"
    assert resolve_checkpoint("tiny/bert-tiny-cwt/seed-1@step-3").endswith("step-0000003")
    with pytest.raises(
        UserError, match=r"has no checkpoints/step-0000004 \(it has: step-0000003, final\)"
    ):
        resolve_checkpoint("tiny/bert-tiny-cwt/seed-1@step-4")
    assert resolve_checkpoint("EleutherAI/pythia-70m") == "EleutherAI/pythia-70m"  # a Hub id
    assert hlm(["runs", "tiny/*cwt*"]) == 0
    out = capsys.readouterr().out
    assert "tiny/bert-tiny-cwt/seed-0" in out and "tiny/bert-tiny-ce" not in out
    assert "@step-3" in out and "6 / 6" in out
    assert f"| {meta.tokens_seen / 1e6:.1f} " in out and f" {state.hours:.2f} " in out
    assert "training hours by suite: tiny " in out


def test_the_hours_are_summed_by_suite_and_a_shared_run_once_in_all(tmp_path: Path) -> None:
    def state(name: str, folder: str, hours: float | None) -> RunState:
        return RunState(name, tmp_path / folder, "done", 1, 1, (), hours=hours)

    states = [
        state("ladder/ce/seed-0", "a", 2.5),
        state("ladder/twin/seed-0", "b", None),  # an untrained twin trains for no time
        state("verdict/ce/seed-2", "c", 1.25),
        state("spread/ce/seed-0", "a", 2.5),  # the ladder's run, named by a second suite
    ]
    assert suite_hours(states) == (
        "training hours by suite: ladder 2.50; spread 2.50; verdict 1.25 (all 3.75)"
    )


def test_a_stopped_run_counts_the_hours_its_newest_checkpoint_keeps(isolated: Path) -> None:
    run_suite(TINY, root=isolated / "lb", progress=False)
    folder = named_runs()["tiny/bert-tiny-ce/seed-0"]
    kept = read_metadata(folder / "checkpoints" / "step-0000003")
    shutil.rmtree(folder / "final")  # as a kill before the end leaves it
    (state,) = list_runs("tiny/bert-tiny-ce/seed-0")
    assert state.state == "stopped" and state.hours == kept.wall_seconds / 3600 > 0
    (folder / "checkpoints" / "step-0000003" / "hlm_metadata.json").write_text("{")
    assert list_runs("tiny/bert-tiny-ce/seed-0")[0].hours is None  # unreadable: "-", no failure


def test_a_killed_run_is_stopped_at_its_last_complete_line(isolated: Path) -> None:
    folder = isolated / "runs" / "pretrain" / "abc"
    folder.mkdir(parents=True)
    lines = [
        json.dumps({"step": s, "loss": 1.0, "tokens_per_s": 500.0 * s, "tokens_seen": 64 * s})
        for s in (10, 20)
    ]
    validation = json.dumps({"step": 20, "val_loss": 2.0, "tokens_seen": 1280})
    (folder / "metrics.jsonl").write_text(
        "\n".join([*lines, validation]) + '\n{"step": 3'  # killed mid-line
    )
    link_run(run_name("s", "m", 2, {"vocab_size": 8000}), folder)
    (state,) = list_runs()
    assert (state.name, state.state, state.step) == ("s/m/vocab_size=8000/seed-2", "stopped", 20)
    # the rate last logged (a validation line logs none); no hours before the run is done
    assert (state.tokens, state.tokens_per_s, state.hours) == (1280, 10_000.0, None)
    link_run(run_name("s", "m", 2, {"vocab_size": 8000}), folder)  # relinking is a no-op
    assert len(named_runs()) == 1


def test_a_run_a_token_budget_stops_counts_to_where_it_stops(isolated: Path) -> None:
    """A run on a long schedule stopped by `max_tokens` (a verdict at a ladder's checkpoint)
    is listed against the step it stops at, not its schedule's last."""
    folder = isolated / "runs" / "pretrain" / "abc"
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text(json.dumps({"step": 10, "tokens_seen": 40960}) + "\n")
    recipe = "recipe: {steps: 12300, batch_size: 64, seq_len: 128}\n"
    (folder / "resolved.yaml").write_text(recipe)
    link_run(run_name("s", "m", 2, {}), folder)
    assert list_runs()[0].steps == 12300
    (folder / "config.yaml").write_text("max_tokens: 10076160\n")  # 1230 steps of 64 x 128
    assert list_runs()[0].steps == 1230
    (folder / "config.yaml").write_text("max_tokens: 10076161\n")  # a token into step 1231
    assert list_runs()[0].steps == 1231


def test_a_run_name_with_no_run_is_an_error_naming_the_runs_near_it(tmp_path: Path) -> None:
    """`suite/model/seed-N` can be no Hub id: a misspelt one is an error here, with the
    names close to it, not a Hub lookup whose retries take half a minute offline."""
    runs = tmp_path / "runs"
    (runs / "pretrain" / "abc" / "final").mkdir(parents=True)
    link_run("tiny/bert-tiny-cwt/seed-1", runs / "pretrain" / "abc", runs)
    got = resolve_checkpoint("tiny/bert-tiny-cwt/seed-1", runs)
    assert Path(got) == (runs / "pretrain" / "abc" / "final").resolve()
    with pytest.raises(
        UserError,
        match=r"^tiny/bert-tiny-cw/seed-1@step-2: no such folder, nor a run of that name in "
        r".*by-name; did you mean 'tiny/bert-tiny-cwt/seed-1'\? \(`hlm runs` lists them\)",
    ):
        resolve_checkpoint("tiny/bert-tiny-cw/seed-1@step-2", runs)
    assert resolve_checkpoint("someone/model", runs) == "someone/model"  # a Hub id still
