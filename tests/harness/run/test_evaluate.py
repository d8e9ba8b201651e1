"""`hlm evaluate`: lm-eval's table printed, rows added to a leaderboard next to what is there,
bad arguments named by their flag."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.cli.evaluate import add_arguments as add_evaluate
from harness.cli.evaluate import request
from harness.results.leaderboard import read_leaderboard
from harness.suite import SuiteError
from harness.tasks.lm_eval_folders import SHIPPED


@pytest.mark.slow
def test_evaluate_prints_the_table_and_adds_rows(
    tiny_decoder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], data_root: Path
) -> None:
    lb = tmp_path / "lb"
    common = ["--limit", "3", "--leaderboard", "adhoc", "--leaderboards", str(lb)]
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", *common]) == 0
    out = capsys.readouterr().out
    assert "|hlm_boolq|" in out.replace(" ", "") and "rows added to" in out
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_lambada", *common]) == 0
    df = read_leaderboard(lb / "adhoc")  # both evaluations are current
    assert {"lm_eval/hlm_boolq", "lm_eval/hlm_lambada"} <= set(df["task"])
    # LAMBADA's perplexity comes with its bar: the training text's unigram model on the
    # same targets; BoolQ (multiple choice, no perplexity) with none
    bars = df[df["metric"] == "unigram_ppl"]
    assert list(bars["task"]) == ["lm_eval/hlm_lambada"] and (bars["value"] > 1).all()
    kept = sorted((lb / "adhoc" / "_artifacts").glob("*/lm_eval_results.json"))
    assert len(kept) == 2 and json.loads(kept[0].read_text())["lm_eval_version"]
    dest = tmp_path / "raw"
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--limit", "2",
                "--output_path", str(dest)]) == 0  # fmt: skip
    assert len(list(dest.rglob("results_*.json"))) == 1
    assert not (Path.cwd() / "leaderboards" / "evaluate").exists()  # nothing kept unasked


def test_data_not_there_is_named_before_lm_eval_loads_the_model(
    tiny_decoder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HLM_DATA_ROOT", str(tmp_path))
    monkeypatch.setattr("harness.run.runner.run_cell", _never)
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_pubmedqa"]) == 2
    said = capsys.readouterr().err
    assert "--tasks: pubmedqa/ori_pqal.json, pubmedqa/test_ground_truth.json not found" in said
    assert f"HLM_DATA_ROOT={tmp_path}" in said


def _never(*args: object, **kwargs: object) -> None:
    raise AssertionError("no cell runs where its data is not there")


def test_bad_arguments_are_named_by_flag(
    tiny_decoder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hlm(["evaluate", str(tmp_path / "nope"), "--tasks", "hlm_boolq"]) == 2
    assert "CHECKPOINT: not found" in capsys.readouterr().err
    assert (
        hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--leaderboard", "../x"]) == 2
    )
    assert "--leaderboard: String should match pattern" in capsys.readouterr().err
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--limit", "0"]) == 2
    assert "--limit: a count of examples above 0" in capsys.readouterr().err
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolx", "--limit", "1"]) == 2
    assert "did you mean 'hlm_boolq'" in capsys.readouterr().err
    for inside in (tiny_decoder, tiny_decoder / "results", tiny_decoder / "r" / "out.json"):
        args = ["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--output_path"]
        assert hlm([*args, str(inside)]) == 2  # lm-eval would write among the weights
        assert "lies inside, or holds, the checkpoint" in capsys.readouterr().err
    assert not (tiny_decoder / "results").exists()
    for size in ("auto:0", "auto:99999999999", "0", "70000"):
        args = ["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--batch_size", size]
        assert hlm(args) == 2
        assert "auto or auto:N (numbers up to 65536)" in capsys.readouterr().err


def test_a_decoder_with_a_weight_lm_eval_would_start_at_random_is_refused(
    tiny_decoder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint from elsewhere (no commit marker) holding a layer's weight under another
    name: lm-eval's loader would start that weight at random with a warning (held to errors
    unless -v), and score the model. `hlm evaluate` refuses it, naming the weight."""
    import shutil

    from safetensors.torch import load_file, save_file

    foreign = tmp_path / "foreign"
    shutil.copytree(tiny_decoder, foreign)
    (foreign / "hlm_commit.json").unlink()
    weights = load_file(foreign / "model.safetensors")
    lost = "gpt_neox.layers.0.attention.dense.weight"
    weights["gpt_neox.layers.0.attention.dense_renamed.weight"] = weights.pop(lost)
    save_file(weights, foreign / "model.safetensors", metadata={"format": "pt"})
    assert hlm(["evaluate", str(foreign), "--tasks", "hlm_boolq", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "weights do not fit" in err and f"missing keys: {lost}" in err


def test_a_default_label_names_the_run() -> None:
    from harness.run.evaluate import default_label

    assert default_label("runs/bert-tiny-cwt/final") == "bert-tiny-cwt"
    assert default_label("EleutherAI/pythia-70m") == "pythia-70m"
    assert default_label("/tmp/.hidden dir/final") == "hidden-dir"
    # given by the run's name, labelled by it, not by the cached folder's key
    cached = "runs/pretrain/38cb7e30d4111f72/final"
    assert default_label(cached, "quickstart/pythia-tiny-ce/seed-0") == (
        "quickstart-pythia-tiny-ce-seed-0"
    )
    assert default_label(cached) == "38cb7e30d4111f72"


@pytest.mark.slow
def test_an_lm_eval_command_line_runs_unchanged(
    tiny_decoder: Path, tmp_path: Path, data_root: Path
) -> None:
    """The same arguments to `lm_eval run` and to `hlm evaluate`: the same results file, all
    of it but the timings (layout, config block, seeds, scores), and the same samples files.
    Few-shot with `--seed 3`: lm-eval's four seeds, the few-shot sampler's included."""
    args = [
        "--model", "hf",
        "--model_args", f"pretrained={tiny_decoder},dtype=float32",
        "--tasks", "hlm_lambada",
        "--include_path", str(SHIPPED),
        "--limit", "4",
        "--batch_size", "4",
        "--device", "cpu",
        "--num_fewshot", "2",
        "--seed", "3",
        "--log_samples",
    ]  # fmt: skip
    assert hlm(["evaluate", *args, "--output_path", str(tmp_path / "ours")]) == 0
    env = {**os.environ, "HLM_DATA_ROOT": str(data_root)}
    lm_eval = [sys.executable, "-m", "lm_eval", "run", *args]
    subprocess.run([*lm_eval, "--output_path", str(tmp_path / "theirs")], check=True, env=env)
    ours, theirs = (
        json.loads(next((tmp_path / side).rglob("results_*.json")).read_text())
        for side in ("ours", "theirs")
    )
    timings = ("date", "start_time", "end_time", "total_evaluation_time_seconds")
    for side in (ours, theirs):
        for key in timings:
            side.pop(key, None)
    assert ours == theirs
    assert ours["config"]["fewshot_seed"] == 3 and ours["config"]["numpy_seed"] == 3
    for side in ("ours", "theirs"):
        (samples,) = (tmp_path / side).rglob("samples_hlm_lambada_*.jsonl")
        assert len(samples.read_text().splitlines()) == 4


def test_lm_eval_values_are_read_with_lm_eval_meanings(tiny_decoder: Path, capsys) -> None:
    import argparse

    from harness.run.evaluate import adhoc_suite

    def suite(*argv: str):  # type: ignore[no-untyped-def]
        parser = argparse.ArgumentParser()
        add_evaluate(parser)
        return adhoc_suite(request(parser.parse_args(list(argv))), "evaluate")

    s = suite("--model_args", f"pretrained={tiny_decoder}", "dtype=float32", "-t", "a,b", "c",
              "--limit", "0.5", "--batch_size", "auto:4", "--num_fewshot", "2")  # fmt: skip
    p = s.tasks[0].params  # the task's params, as the suite holds them
    assert (p["tasks"], p["limit"], p["batch_size"], p["num_fewshot"], p["dtype"]) == (
        ["a", "b", "c"], 0.5, "auto:4", 2, "float32"
    )  # fmt: skip
    assert s.models[0].checkpoint == str(tiny_decoder)
    ckpt = str(tiny_decoder)
    for argv, message in (
        ([ckpt, "--model", "vllm"], "--model: hlm evaluate runs lm-eval's hf model"),
        ([ckpt, "--model_args", "trust_remote_code=True"], "--model_args: 'trust_remote_code'"),
        ([ckpt, "--limit", "1.5"], "--limit: a count of examples"),
        ([ckpt, "--batch_size", "big"], "--batch_size: an integer above 0, auto or auto:N"),
        ([ckpt, "--model_args", "pretrained=elsewhere"], "CHECKPOINT: .* differ"),
        ([], "CHECKPOINT: give it"),
    ):
        with pytest.raises(SuiteError, match=message):  # the checkpoint before -t's list
            suite(*argv[:1], "-t", "hlm_boolq", *argv[1:])


def test_a_task_folder_named_on_the_command_line_is_the_users_choice(
    tiny_decoder: Path, tmp_path: Path, monkeypatch
) -> None:
    """`hlm evaluate --include_path` runs the folder it is given, as `lm_eval --include_path`
    does, wherever it lies: no suite file decides it. The trust does not outlive the check."""
    import argparse

    from harness.run.evaluate import adhoc_suite
    from zoo.registry import TRUST_ENV, plugins_trusted

    folder = tmp_path / "elsewhere" / "tasks"
    shutil.copytree(SHIPPED.parents[1] / "suites" / "lm_eval_tasks", folder)
    monkeypatch.chdir(SHIPPED)  # the ad-hoc suite's folder: the task folder is outside it
    monkeypatch.setenv(TRUST_ENV, "0")
    parser = argparse.ArgumentParser()
    add_evaluate(parser)
    args = parser.parse_args(
        [str(tiny_decoder), "-t", "flores_eng_ppl", "--include_path", str(folder)]
    )
    suite = adhoc_suite(request(args), "evaluate")
    assert suite.tasks[0].params["include_path"] == [str(folder)]
    assert os.environ[TRUST_ENV] == "0" and not plugins_trusted()


def test_seed_takes_lm_evals_forms() -> None:
    """`--seed` as lm_eval reads it: one integer for all four seeds, four comma-separated
    (None leaves one unset), three with the few-shot seed at lm-eval's default 1234."""
    import argparse

    from harness.cli.lm_eval_flags import lm_eval_seeds

    parser = argparse.ArgumentParser()
    add_evaluate(parser)
    seeds = [parser.parse_args(["-t", "x", *a]).seed for a in ([], ["--seed", "3"])]
    assert seeds == [[0, 1234, 1234, 1234], [3, 3, 3, 3]]
    assert lm_eval_seeds("0,None,8,52") == [0, None, 8, 52]
    assert lm_eval_seeds("1,2,3") == [1, 2, 3, 1234]
    for bad in ("1,2", "a", "-1", "1,2,3,4,5"):
        with pytest.raises(argparse.ArgumentTypeError):
            lm_eval_seeds(bad)


def test_every_flag_of_lm_eval_run_is_taken_or_refused_with_why(capsys) -> None:
    """lm-eval's dialect, whole: each flag `lm_eval run` has is one `hlm evaluate` takes, or
    one it refuses by name with the reason (never "did you mean" another flag)."""
    import argparse

    from lm_eval._cli.run import Run

    from harness.cli.lm_eval_flags import REFUSED_FLAGS

    theirs = argparse.ArgumentParser()
    run = Run(theirs.add_subparsers())
    flags = {o for a in run._parser._actions for o in a.option_strings if o.startswith("--")}
    ours = argparse.ArgumentParser()
    add_evaluate(ours)
    known = {o for a in ours._actions for o in a.option_strings}
    assert flags - {"--help"} <= known
    for flag in sorted(f"--{name}" for name in REFUSED_FLAGS):
        assert hlm(["evaluate", "ckpt", "-t", "hlm_boolq", flag]) == 2
        said = capsys.readouterr().err
        assert f"{flag}: hlm evaluate does not take it: " in said and "did you mean" not in said
    for key in ("trust_remote_code", "add_bos_token", "parallelize"):
        assert hlm(["evaluate", "ckpt", "-t", "x", "--model_args", f"{key}=1"]) == 2
        assert f"--model_args: '{key}': hlm evaluate does not take it: " in capsys.readouterr().err


def _suite(*argv: str):  # type: ignore[no-untyped-def]
    import argparse

    from harness.run.evaluate import adhoc_suite

    parser = argparse.ArgumentParser()
    add_evaluate(parser)
    return adhoc_suite(request(parser.parse_args(list(argv))), "evaluate")


def test_lm_evals_generation_and_metadata_flags_are_read_as_lm_eval_reads_them(
    tiny_decoder: Path,
) -> None:
    from harness.run.cells import expand

    ckpt = str(tiny_decoder)
    s = _suite(ckpt, "-t", "hlm_boolq", "--gen_kwargs", "temperature=0", "until=['\\n']",
               "--metadata", '{"max_seq_lengths": [64]}', "--apply_chat_template",
               "--fewshot_as_multiturn", "false", "--system_instruction", "Answer.",
               "--model_args", "max_length=64")  # fmt: skip
    p = s.tasks[0].params
    assert p["gen_kwargs"] == {"temperature": 0, "until": ["\n"]}
    assert p["metadata"] == {"max_seq_lengths": [64]} and p["apply_chat_template"] is True
    assert (p["fewshot_as_multiturn"], p["system_instruction"]) == (False, "Answer.")
    assert p["max_length"] == 64 and p["batch_size"] == 1  # lm_eval's default batch size
    plain = expand(_suite(ckpt, "-t", "hlm_boolq"))[0].cell_id
    cached = _suite(ckpt, "-t", "hlm_boolq", "--use_cache", "c.db", "--write_out")
    assert expand(cached)[0].cell_id == plain  # a cache file and printing change no score
    tuned = _suite(ckpt, "-t", "hlm_boolq", "--gen_kwargs", "temperature=0")
    assert expand(tuned)[0].cell_id != plain
    with pytest.raises(SuiteError, match="--predict_only: give --output_path"):
        _suite(ckpt, "-t", "hlm_boolq", "--predict_only")
    with pytest.raises(SuiteError, match="max_length='long' is not an integer"):
        _suite(ckpt, "-t", "hlm_boolq", "--model_args", "max_length=long")


def test_a_revision_names_a_step_of_a_local_run_and_stays_a_hub_ids(
    tiny_decoder: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(tiny_decoder, run / "final")
    shutil.copytree(tiny_decoder, run / "checkpoints" / "step-0000010")
    s = _suite(str(run / "final"), "-t", "hlm_boolq", "--model_args", "revision=step10")
    assert s.models[0].checkpoint == str(run / "checkpoints" / "step-0000010")
    assert "revision" not in s.tasks[0].params  # the step folder is the checkpoint
    with pytest.raises(SuiteError, match="has no revisions"):
        _suite(str(tiny_decoder), "-t", "hlm_boolq", "--model_args", "revision=main")
    hub = _suite("EleutherAI/pythia-70m", "-t", "hlm_boolq", "--model_args", "revision=step1000")
    assert hub.tasks[0].params["revision"] == "step1000"  # lm-eval loads it at that revision


@pytest.mark.slow
def test_the_lm_eval_flags_run_and_a_limit_is_marked_partial(
    tiny_decoder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], data_root: Path
) -> None:
    from harness.publish.hub import rows_for_checkpoint

    lb = tmp_path / "lb"
    argv = ["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--limit", "2",
            "--use_cache", str(tmp_path / "cache"), "--write_out", "--metadata", "note=1",
            "--model_args", "max_length=64", "--leaderboard", "a",
            "--leaderboards", str(lb)]  # fmt: skip
    assert hlm(argv) == 0
    out = capsys.readouterr().out
    assert "partial: --limit 2" in out
    assert list(tmp_path.glob("cache*.db"))  # lm-eval's response cache, as --use_cache asks
    assert hlm(["leaderboard", "a", "--leaderboards", str(lb)]) == 0
    assert "partial (not every example scored): " in capsys.readouterr().out
    rows = rows_for_checkpoint(tiny_decoder, lb, "a")
    assert not rows.empty  # hlm evaluate's rows are this checkpoint's: a card may carry them
    dest = tmp_path / "predicted"
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--limit", "2",
                "--predict_only", "--output_path", str(dest)]) == 0  # fmt: skip
    assert list(dest.rglob("samples_hlm_boolq_*.jsonl"))
