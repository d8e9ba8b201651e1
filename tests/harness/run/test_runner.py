"""Running suites: rows, idempotence, resume after a kill, concurrent runs, plots."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.dataset as ds
import pytest
from filelock import FileLock

from harness.cli import main as hlm
from harness.results.leaderboard import FINAL, read_leaderboard, write_cell
from harness.results.samples import read_samples
from harness.results.schema import COLUMNS
from harness.run.cells import Selection
from harness.run.runner import expand, plan_suite, run_suite
from harness.suite import load_suite
from tests.conftest import hlm_imports
from tests.harness.conftest import TINY
from zoo.errors import UserError
from zoo.hardware import processor

ROOT = Path(__file__).parents[3]


def test_tiny_suite_end_to_end_rows_and_idempotence(isolated) -> None:
    lb = isolated / "lb"
    before = plan_suite(TINY, root=lb)  # --dry-run: the plan, nothing written
    assert (len(before.todo), len(before.done)) == (8, 0) and not lb.exists()
    assert before.pretraining == dict.fromkeys(before.pretraining, False)
    assert len(before.pretraining) == 4 and "(to train)" in before.table()
    key = sorted(before.pretraining)[0]  # another process training it now: said so
    with FileLock(isolated / "runs" / "pretrain" / f"{key}.lock"):
        table = plan_suite(TINY, root=lb).table()
    assert f"{key} (training now)" in table and table.count("(training now)") == 1  # validation
    assert "1 training now" in table.splitlines()[0]
    s1 = run_suite(TINY, root=lb, progress=False)
    assert (s1.total, s1.skipped, s1.computed, s1.failed) == (8, 0, 8, [])
    df = read_leaderboard(lb / "tiny")
    assert list(df.columns) == COLUMNS and FINAL in COLUMNS  # stored, and read as written
    assert pd.read_parquet(lb / "tiny")[FINAL].sum() == df[FINAL].sum()  # plain readers too
    assert set(df["model"]) == {"bert-tiny-ce", "bert-tiny-cwt"} and set(df["seed"]) == {0, 1}
    val = df[df["task"] == "validation"]
    # along pretraining: steps 3 and 6, with tokens seen; step 6 is the final checkpoint
    assert sorted(val["step"].unique()) == [3, 6]
    assert set(zip(val["step"], val[FINAL], strict=True)) == {(3, False), (6, True)}
    assert set(val[val["step"] == 6]["tokens_seen"]) == {6 * 4 * 32}
    assert set(val[val["model"] == "bert-tiny-cwt"]["metric"]) == {
        "val_loss"
    }  # no head metrics for a headless encoder
    assert set(val[val["model"] == "bert-tiny-ce"]["metric"]) == {
        "val_loss",
        "val_ce",
        "val_ppl",
        "unigram_ppl",
    }
    # a sample per evaluation batch, the same batches for both models: paired
    kept = read_samples(lb / "tiny")
    kept = kept[(kept["task"] == "validation") & (kept["step"] == 6) & (kept["seed"] == 0)]
    keys = kept.groupby(["model", "metric"])["key"].apply(sorted).to_dict()
    assert set(keys) == {
        ("bert-tiny-ce", "val_ce"),
        ("bert-tiny-ce", "val_loss"),
        ("bert-tiny-cwt", "val_loss"),
    }
    assert len(set(map(tuple, keys.values()))) == 1 and keys["bert-tiny-ce", "val_ce"]
    thr = df[df["task"] == "throughput"]
    ratios = thr[thr["metric"] == "speedup_vs_baseline"]
    assert len(ratios) == 4 and (ratios["value"] > 0).all()
    assert (thr[thr["metric"] == "tokens_per_s"]["value"] > 0).all()
    assert (ratios[ratios["model"] == "bert-tiny-ce"]["value"] == 1.0).all()
    assert df["higher_is_better"][df["metric"] == "tokens_per_s"].all()
    assert not df["higher_is_better"][df["metric"] == "val_loss"].any()
    assert (
        df["git_sha"].str.len().max() in (0, 40)
        and df["versions"].map(json.loads).map(lambda v: "torch" in v).all()
    )
    assert set(df["hardware"]) == {f"cpu x1: {processor('cpu')}"}  # where it was trained
    # idempotent: a second run computes nothing, and pretraining was shared between tasks
    after = plan_suite(TINY, root=lb)
    assert (len(after.todo), len(after.done)) == (0, 8) and "tiny: 8 cells, 8 done" in after.table()
    assert all(plan_suite(TINY, root=lb, force=True).pretraining.values())  # cached now
    s2 = run_suite(TINY, root=lb, progress=False)
    assert (s2.skipped, s2.computed) == (8, 0)
    # and `hlm run` with nothing to compute, or `hlm runs` listing the cache, starts without
    # the training code
    for argv in (["run", str(TINY), "--leaderboards", str(lb), "-q"], ["runs"]):
        status, loaded, stderr = hlm_imports(argv)
        assert (status, loaded) == (0, []), stderr[-2000:]
    assert len(list((isolated / "runs" / "pretrain").glob("*/final"))) == 4  # 2 models x 2 seeds
    # readable without project code
    assert len(pd.read_parquet(lb / "tiny")) == len(df)
    assert ds.dataset(lb / "tiny").to_table().num_rows == len(df)
    con = duckdb.connect()
    n = con.execute(f"select count(*) from read_parquet('{lb / 'tiny'}/*.parquet')").fetchone()
    assert n is not None and n[0] == len(df)
    # --force recomputes
    assert run_suite(TINY, root=lb, progress=False, force=True).computed == 8


def test_leaderboard_and_plot_verbs(isolated, capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")  # the table's width: a terminal's, not a test worker's
    lb = isolated / "lb"
    run_suite(TINY, root=lb, progress=False)
    assert (
        hlm(["leaderboard", str(TINY), "--leaderboards", str(lb), "--sort", "validation/val_loss"])
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "| model" in out
        and "bert-tiny-cwt" in out
        and "±" in out
        and "baseline `bert-tiny-ce`" in out
    )
    assert "unigram_ppl" in out and "flops_per_token" not in out  # baselines shown, not INFO
    assert hlm(["leaderboard", "tiny", "--leaderboards", str(lb), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {"model", "metric", "mean", "std", "n", "p_value", "significant"} <= set(rows[0])
    assert all(r["n"] == 2 for r in rows)
    assert hlm(["leaderboard", "tiny", "--leaderboards", str(lb), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("model,sweep,task,metric,mean")
    assert hlm(["plot", str(TINY), "--leaderboards", str(lb)]) == 0
    said = (
        capsys.readouterr().out.splitlines()
    )  # one plot a line (new or replaced said), then a tally
    files = [Path(line.split(" (")[0]) for line in said[:-1]]
    assert said[-1].startswith(f"{len(files)} plots in ") and " new, 0 replaced" in said[-1]
    assert {f.name for f in files} >= {"curves-validation-val_loss.png", "bars-throughput.png"}
    import matplotlib.image as mpimg

    for f in files:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert mpimg.imread(f).shape[0] > 100
    # plots live in _plots/, which parquet readers skip
    assert len(pd.read_parquet(lb / "tiny")) == len(read_leaderboard(lb / "tiny"))


def _hlm_run(lb: Path, env: dict[str, str], extra: list[str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            str(TINY),
            "--leaderboards",
            str(lb),
            "--no-progress",
            *(extra or []),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_kill_then_resume_loses_no_finished_cell(isolated) -> None:
    lb = isolated / "lb"
    env = {**os.environ, "HLM_RUNS_DIR": str(isolated / "runs")}
    proc = _hlm_run(lb, env)
    deadline = time.time() + 240

    def cells() -> list[Path]:  # a cell's own file (not an intermediate checkpoint's) marks it done
        return [p for p in (lb / "tiny").glob("*.parquet") if "." not in p.stem]

    while time.time() < deadline and len(cells()) < 2:
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in (lb / "tiny").glob("*.parquet")}
    n_done = len(cells())
    assert 2 <= n_done < 8
    read_leaderboard(lb / "tiny")  # readable after the kill
    done = _hlm_run(lb, env)
    out, err = done.communicate(timeout=600)
    assert done.returncode == 0, err
    assert f"8 cells: {n_done} already done, {8 - n_done} computed, 0 failed" in out
    for name, mtime in finished.items():  # untouched
        assert (lb / "tiny" / name).stat().st_mtime_ns == mtime
    df = read_leaderboard(lb / "tiny")
    assert df["cell_id"].nunique() == 8
    assert not df.duplicated(["cell_id", "metric", "step"]).any()


@pytest.mark.slow
def test_two_concurrent_runs_lose_no_rows(isolated) -> None:
    lb = isolated / "lb"
    env = {**os.environ, "HLM_RUNS_DIR": str(isolated / "runs")}
    procs = [_hlm_run(lb, env), _hlm_run(lb, env)]
    computed = 0
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        computed += int(re.search(r"(\d+) computed", out).group(1))  # type: ignore[union-attr]
    assert computed == 8  # each cell computed once between them (cell claims)
    assert not [p for p in (lb / "tiny" / "_claims").iterdir() if p.name != ".lock"]
    df = read_leaderboard(lb / "tiny")
    assert df["cell_id"].nunique() == 8
    assert not list((lb / "tiny").glob(".tmp-*"))
    cells = {c.cell_id for c in expand(load_suite(TINY))}
    assert set(df["cell_id"]) == cells


@pytest.mark.slow
def test_quickstart_suite_end_to_end(isolated) -> None:
    lb = isolated / "lb"
    summary = run_suite(ROOT / "suites" / "quickstart.yaml", root=lb, progress=False)
    assert summary.failed == [] and summary.computed == summary.total == 12
    df = read_leaderboard(lb / "quickstart")
    final = df[
        (df["task"] == "validation") & (df["step"] == df.groupby("model")["step"].transform("max"))
    ]
    ppl = final[final["metric"] == "val_ppl"].set_index("model")["value"]
    # decoders learned the synthetic language: far below the uniform perplexity of 1500, and
    # below the training text's unigram model on the same tokens
    unigram = final[final["metric"] == "unigram_ppl"].set_index("model")["value"]
    assert (ppl < 200).all(), ppl
    assert ppl["pythia-tiny-ce"] < unigram["pythia-tiny-ce"] / 2, (ppl, unigram)
    # the three decoders are scored on the same tokens (the fine-tuned one too)
    decoders = ["pythia-tiny-ce", "pythia-tiny-cwt", "pythia-tiny-cwt-ft"]
    assert unigram[decoders].nunique() == 1, unigram
    # causal fine-tuning recovers the headless decoder's LM head (paper section 3.3)
    assert ppl["pythia-tiny-cwt-ft"] < ppl["pythia-tiny-cwt"]
    # how much context the decoders use: one value per decoder, none for the encoders
    gain = final[final["metric"] == "context_gain"].set_index("model")["value"]
    assert sorted(gain.index) == sorted(decoders) and gain.notna().all(), gain
    thr = df[(df["task"] == "throughput") & (df["metric"] == "speedup_vs_baseline")].set_index(
        "model"
    )["value"]
    assert (thr > 0).all()


@pytest.mark.usefixtures("trust_plugins")
def test_editing_a_plugin_rekeys_only_the_models_that_read_it(tmp_path) -> None:
    """The plugin's objective is re-keyed (pretraining and cells); the plain `cwt` model of the
    same suite, which reads nothing of the plugin, keeps its keys."""
    plugin = tmp_path / "obj.py"
    plugin.write_text(
        (ROOT / "examples" / "cosine_cwt.py").read_text().replace("cosine-cwt", "cos2")
    )
    suite_file = tmp_path / "s.yaml"
    suite_file.write_text(
        "name: s\nplugins: [obj.py]\nmodels: [{preset: bert-tiny, objective: cos2},\n"
        "  {preset: bert-tiny, objective: cwt}]\ntasks: [{type: validation}]\n"
    )
    before = {c.label: (c.cell_id, c.pretrain_key) for c in expand(load_suite(suite_file))}
    assert before["bert-tiny-cos2"][0] != before["bert-tiny-cwt"][0]
    plugin.write_text(plugin.read_text() + "\n# a change that alters the loss\n")
    # this process runs the old code: the new one is not taken for it
    with pytest.raises(UserError, match=r"obj.py changed since this process imported it"):
        load_suite(suite_file)
    code = (
        "import sys; from harness.run.cells import expand; from harness.suite import load_suite;"
        "[print(c.label, c.cell_id, c.pretrain_key) for c in expand(load_suite(sys.argv[1]))]"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(suite_file)], capture_output=True, text=True, check=True
    )
    after = {label: (cell, key) for label, cell, key in map(str.split, out.stdout.splitlines())}
    assert after["bert-tiny-cwt"] == before["bert-tiny-cwt"]
    assert after["bert-tiny-cos2"][0] != before["bert-tiny-cos2"][0]
    assert after["bert-tiny-cos2"][1] != before["bert-tiny-cos2"][1]


@pytest.mark.usefixtures("trust_plugins")
def test_editing_a_task_folder_changes_its_cells_and_no_other(tmp_path) -> None:
    """The files of a suite's lm-eval task folder join its cells' ids, as plugins do: an
    edited task is computed anew. The pretraining and the other tasks' cells stay."""
    tasks = tmp_path / "my_tasks"
    shutil.copytree(ROOT / "suites" / "lm_eval_tasks", tasks)
    suite_file = tmp_path / "s.yaml"
    suite_file.write_text(
        "name: s\nmodels: [{preset: pythia-tiny, objective: ce}]\n"
        "tasks: [{type: validation}, {type: lm_eval, params: {tasks: [flores_eng_ppl], "
        "include_path: [my_tasks]}}]\n"
    )

    def ids() -> dict[str, tuple[str, str | None]]:
        return {c.task.type: (c.cell_id, c.pretrain_key) for c in expand(load_suite(suite_file))}

    before = ids()
    cell = next(c for c in expand(load_suite(suite_file)) if c.task.type == "lm_eval")
    assert sorted(cell.config["task_files"]) == [
        "include_path[0]/flores_eng_ppl.yaml",
        "include_path[0]/flores_utils.py",
    ]
    loader = tasks / "flores_utils.py"
    loader.write_text(loader.read_text() + "\n# a change to what the task reads\n")
    after = ids()
    assert after["lm_eval"][0] != before["lm_eval"][0]
    assert after["lm_eval"][1] == before["lm_eval"][1]
    assert after["validation"] == before["validation"]
    validation = next(c for c in expand(load_suite(suite_file)) if c.task.type == "validation")
    assert "task_files" not in validation.config  # a task without such files: its id as before


def test_loss_options_merge_from_recipe_model_and_sweep(tmp_path) -> None:
    suite_file = tmp_path / "s.yaml"
    suite_file.write_text(
        "name: s\nrecipe: {loss: {chunk: 64}}\n"
        "models: [{preset: bert-tiny, objective: cwt, recipe: {loss: {duplicates: mask}}}]\n"
        "sweep: {loss.temperature: [0.5, 2.0]}\ntasks: [{type: validation}]\n"
    )
    cells = expand(load_suite(suite_file))
    got = sorted(
        (c.pretrain.loss.chunk, c.pretrain.loss.duplicates, c.pretrain.loss.temperature)
        for c in cells
        if c.pretrain
    )
    assert got == [(64, "mask", 0.5), (64, "mask", 2.0)]
    assert len({c.pretrain_key for c in cells}) == 2


def test_a_selection_keeps_its_cells_and_a_mistyped_one_gets_close_matches(isolated) -> None:
    from zoo.errors import UserError

    with pytest.raises(UserError, match="unknown model label 'bert-tiny-cw'; did you mean"):
        run_suite(
            TINY, root=isolated / "lb", progress=False, select=Selection(model="bert-tiny-cw")
        )
    with pytest.raises(UserError, match="unknown task label 'throughpt'; did you mean"):
        run_suite(TINY, root=isolated / "lb", progress=False, select=Selection(task="throughpt"))
    with pytest.raises(UserError, match="unknown seed '7'"):
        plan_suite(TINY, root=isolated / "lb", select=Selection(seed=7))
    both = plan_suite(TINY, root=isolated / "lb", select=Selection("bert-tiny-cwt", seed=1)).todo
    assert {(c.label, c.seed) for c in both} == {("bert-tiny-cwt", 1)} and len(both) == 2
    with pytest.raises(UserError, match="unknown task label 'throughpt'; did you mean"):
        plan_suite(TINY, root=isolated / "lb", select=Selection(skip_tasks=("throughpt",)))
    rest = plan_suite(TINY, root=isolated / "lb", select=Selection(skip_tasks=("throughput",)))
    assert {c.task.type for c in rest.todo} == {"validation"} and len(rest.todo) == 4
    with pytest.raises(UserError, match="--task throughput and --skip-task throughput: chosen"):
        plan_suite(
            TINY,
            root=isolated / "lb",
            select=Selection(task="throughput", skip_tasks=("throughput",)),
        )
    # a task some models run (`models:`): skipping it, or choosing it, is no error for another
    speed_of_cwt = isolated / "tiny-speed.yaml"
    speed_of_cwt.write_text(
        TINY.read_text().replace(
            "  - type: throughput\n", "  - type: throughput\n    models: [bert-tiny-cwt]\n"
        )
    )
    ce = Selection("bert-tiny-ce", skip_tasks=("throughput",))
    todo = plan_suite(speed_of_cwt, root=isolated / "lb", select=ce).todo
    assert {(c.label, c.task.type) for c in todo} == {("bert-tiny-ce", "validation")}
    none = Selection("bert-tiny-ce", task="throughput")
    assert plan_suite(speed_of_cwt, root=isolated / "lb", select=none).todo == []
    # a throughput cell builds its model afresh: the plan asks for no pretraining
    speed = plan_suite(TINY, root=isolated / "lb", select=Selection(task="throughput"))
    assert len(speed.todo) == 4 and speed.pretraining == {}
    assert "none (no checkpoint read)" in speed.table() and "to train" not in speed.table()


def test_one_task_is_run_and_forced_again_alone(isolated) -> None:
    """`hlm run --skip-task throughput` (the machine shared), then `--task throughput` (quiet):
    each computes only its cells; forced again, the throughput cells are re-measured while
    every other cell's file stays as it was."""
    lb = isolated / "lb"
    run = ["run", str(TINY), "--leaderboards", str(lb), "-q"]
    assert hlm([*run, "--skip-task", "throughput"]) == 0
    assert set(read_leaderboard(lb / "tiny")["task"]) == {"validation"}
    assert hlm([*run, "--task", "throughput"]) == 0
    assert set(read_leaderboard(lb / "tiny")["task"]) == {"validation", "throughput"}
    files = {p.name: p.stat().st_mtime_ns for p in (lb / "tiny").glob("*.parquet")}
    plan = plan_suite(TINY, root=lb, force=True, select=Selection(task="throughput"))
    assert {c.task.type for c in plan.todo} == {"throughput"} and len(plan.todo) == 4
    again = run_suite(
        TINY, root=lb, progress=False, force=True, select=Selection(task="throughput")
    )
    assert (again.total, again.computed) == (4, 4)
    df = read_leaderboard(lb / "tiny")
    for p in (lb / "tiny").glob("*.parquet"):
        rows = df[df["cell_id"] == p.stem.split(".")[0]]
        assert not rows.empty, p.name
        changed = p.stat().st_mtime_ns != files[p.name]
        assert changed == set(rows["task"]).issubset({"throughput"}), p.name


def test_a_cell_another_run_is_pretraining_waits_for_the_second_pass(isolated, monkeypatch) -> None:
    """Two runs of one suite: the second does the cells it can first, instead of waiting on
    the first's pretraining lock (a throughput cell needs no checkpoint: it never waits)."""
    import fcntl

    import harness.run.runner as runner

    cells = expand(load_suite(TINY))
    # the checkpoint whose cells sort first: without the second pass they would run first
    busy = min((c for c in cells if c.task.type == "validation"), key=lambda c: str(c.pretrain_key))
    waiting = {
        c.cell_id
        for c in cells
        if c.pretrain_key == busy.pretrain_key and c.task.type == "validation"
    }
    lock = Path(busy.pretrain.output_dir).with_suffix(".lock")  # type: ignore[union-attr]
    lock.parent.mkdir(parents=True, exist_ok=True)
    held = lock.open("w")
    fcntl.flock(held, fcntl.LOCK_EX)  # another run is training this checkpoint
    order: list[str] = []

    def record(cell, out, done, redo) -> None:  # type: ignore[no-untyped-def]
        order.append(cell.cell_id)
        if len(order) == len(cells) - len(waiting):  # the other run finishes it meanwhile
            fcntl.flock(held, fcntl.LOCK_UN)

    monkeypatch.setattr(runner, "run_cell", record)
    run_suite(TINY, root=isolated / "lb", progress=False)
    held.close()
    assert sorted(order) == sorted(c.cell_id for c in cells)
    assert set(order[-len(waiting) :]) == waiting


def test_skip_busy_leaves_a_cell_another_run_is_pretraining_to_that_run(
    isolated, monkeypatch, capsys
) -> None:
    """`hlm run --skip-busy` (a second lane): the cells whose pretraining another run holds
    are left to it and counted as its; every other cell is computed."""
    import fcntl

    import harness.run.runner as runner

    cells = expand(load_suite(TINY))
    busy = min((c for c in cells if c.task.type == "validation"), key=lambda c: str(c.pretrain_key))
    lock = Path(busy.pretrain.output_dir).with_suffix(".lock")  # type: ignore[union-attr]
    lock.parent.mkdir(parents=True, exist_ok=True)
    held = lock.open("w")
    fcntl.flock(held, fcntl.LOCK_EX)  # another run is training this checkpoint, throughout
    order: list[str] = []
    monkeypatch.setattr(
        runner, "run_cell", lambda cell, out, done, redo: order.append(cell.cell_id)
    )
    lb = isolated / "lb"
    assert hlm(["run", str(TINY), "--leaderboards", str(lb), "--skip-busy", "-q"]) == 0
    held.close()
    left = {
        c.cell_id
        for c in cells
        if c.pretrain_key == busy.pretrain_key and c.task.type == "validation"
    }
    assert left and sorted(order) == sorted(c.cell_id for c in cells if c.cell_id not in left)
    assert f"{len(left)} by another run" in capsys.readouterr().out


def test_a_suite_that_asks_for_cuda_is_refused_at_once_without_one(isolated, monkeypatch) -> None:
    """`device: cuda` on a machine without a GPU: one error naming the file and the keys
    before any cell runs, not a failure per cell; a cached pretraining needs no GPU."""
    import torch
    import yaml

    from harness.run.preflight import check_cuda
    from zoo.errors import UserError
    from zoo.train.atomic import COMMIT

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    d = yaml.safe_load(TINY.read_text())
    d["recipe"]["device"] = "cuda"
    d["tasks"][1]["params"]["device"] = "cuda"
    path = isolated / "gpu.yaml"
    path.write_text(yaml.safe_dump(d))
    keys = r"recipe.device, tasks\[1\].params.device: 'cuda' asked for, but torch sees no CUDA"
    with pytest.raises(UserError, match=rf"gpu.yaml: {keys}"):
        run_suite(path, root=isolated / "lb", progress=False)
    assert not list((isolated / "lb").rglob("*.parquet")) and not (isolated / "runs").exists()
    plan = plan_suite(path, root=isolated / "lb")
    for key in plan.pretraining:  # every pretraining cached: only the throughput task asks
        (isolated / "runs" / "pretrain" / key / "final").mkdir(parents=True)
        (isolated / "runs" / "pretrain" / key / "final" / COMMIT).write_text("{}")
    validation = [c for c in plan.todo if c.task.type == "validation"]
    check_cuda(plan.suite, validation)  # nothing in them needs a GPU now
    with pytest.raises(UserError, match=r"gpu.yaml: tasks\[1\].params.device: 'cuda'"):
        check_cuda(plan.suite, plan.todo)


def test_recording_an_edited_suite_says_which_rows_it_files_away(tmp_path, caplog) -> None:
    from harness.run.runner import record_suite
    from tests.harness.results.test_leaderboard import row

    suite = load_suite(TINY)
    cells = expand(suite)
    write_cell(tmp_path, cells[0].cell_id, [row("a", "val_loss", 1.0)])
    write_cell(tmp_path, "0123456789abcdef", [row("a", "val_loss", 9.0)])  # the suite's old cell
    record_suite(tmp_path, suite, cells)
    assert "1 result files of cells" in caplog.text and "_superseded" in caplog.text
    assert list(read_leaderboard(tmp_path)["value"]) == [1.0]
    caplog.clear()
    record_suite(tmp_path, suite, cells)  # nothing more to file away: nothing said
    assert "result files" not in caplog.text


def test_a_tasks_metrics_keep_only_those_rows(isolated) -> None:
    """`metrics: [val_ppl]` keeps that metric's rows; a headless encoder, whose validation
    gives no perplexity, fails its cell saying what it gave instead of writing nothing."""
    import yaml

    d = yaml.safe_load(TINY.read_text())
    d["seeds"], d["tasks"] = [0], [{**d["tasks"][0], "metrics": ["val_ppl"]}]
    path = isolated / "some.yaml"
    path.write_text(yaml.safe_dump(d))
    summary = run_suite(path, root=isolated / "lb", progress=False)
    df = read_leaderboard(isolated / "lb" / "tiny")
    assert set(zip(df["model"], df["metric"], strict=True)) == {("bert-tiny-ce", "val_ppl")}
    (failure,) = summary.failed
    reason = "bert-tiny-cwt/validation produced no rows of the task's metrics (val_ppl): it gave"
    assert f"{reason} val_loss" in failure


class _Terminal(io.StringIO):
    """A captured stderr that says it is a terminal, as tqdm asks."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_a_cells_pretraining_bar_sits_under_the_suites_on_a_terminal_only(
    isolated: Path, monkeypatch, caplog, terminal: bool
) -> None:
    """On a terminal, `hlm run` shows its cells' bar and, under it, the pretraining's steps
    (gone once done); where stderr is a log file, no bar at all: a log line per cell instead."""
    from harness.logs import CELL_PROGRESS

    suite = isolated / "s.yaml"
    suite.write_text(
        "name: bars\nmodels: [{preset: bert-tiny, objective: ce}]\n"
        'recipe: {corpus: ["synthetic:100"], vocab_size: 300, steps: 3, batch_size: 2, '
        "seq_len: 32}\ntasks: [{type: validation, params: {batches: 1}}]\n"
    )
    caplog.set_level("INFO", logger="harness.run.runner")
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert run_suite(suite, root=isolated / "lb", progress=True).failed == []
    shown = err.getvalue()
    assert ("bars: cells" in shown) is terminal
    assert ("bert-tiny/ce" in shown) is terminal  # the pretraining's own bar
    assert "\r" not in shown or terminal
    assert CELL_PROGRESS.get() is False  # set for the run only
    said = "cell 1/1 of this run done: bert-tiny-ce / validation (seed 0)"
    assert (said in caplog.text) is not terminal
