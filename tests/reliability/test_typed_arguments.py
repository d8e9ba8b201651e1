"""Every verb's arguments are typed: an empty word, a non-finite or out-of-range number, a
name that names nothing, a path that cannot be what the verb needs, each is one line naming
its flag and status 2, before anything is read or written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.test_bad_input import assert_clean_error, hlm

BOARD = ["--leaderboards", "leaderboards"]


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["leaderboard", "paper-cpu-decoder", "--baseline", "nosuch"], "--baseline: unknown model"),
        (["power", "paper-cpu-decoder", "--baseline", "nosuch"], "--baseline: unknown model"),
        (["leaderboard", "paper-cpu-decoder", "--at", ""], "--at: empty"),
        (["leaderboard", "paper-cpu-decoder", "--at", "tokens=inf"], "finite number > 0"),
        (["leaderboard", "paper-cpu-decoder", "--at", "flops=1e400"], "finite number > 0"),
        (["leaderboard", "paper-cpu-decoder", "--task", ""], "--task: empty"),
        (["power", "paper-cpu-decoder", "--effect", "-1"], "--effect: '-1' is not above 0"),
        (["run", "quickstart", "--leaderboards", "", "--dry-run"], "--leaderboards: empty"),
        (["evaluate", "x", "--tasks", "hlm_lambada", "--leaderboard", ""], "--leaderboard: empty"),
        (["evaluate", "x", "--tasks", "t", "--num_fewshot", "1000000000"], "is above 1000"),
    ],
)
def test_a_bad_flag_value_is_named(argv: list[str], named: str) -> None:
    rc, err = hlm(*argv)
    assert_clean_error(rc, err, named)


def test_a_folder_of_no_suites_is_not_ok(tmp_path: Path) -> None:
    for folder in (tmp_path / "empty", tmp_path / "x.yaml"):
        folder.mkdir()
        rc, err = hlm("validate", str(folder))
        assert_clean_error(rc, err, f"{folder}: a folder that holds no suite")


@pytest.mark.parametrize(
    ("model_args", "named"),
    [
        ("pretrained=a,pretrained=b", "'pretrained' given twice"),
        ("pretrained=", "is not key=value (a value not empty)"),
    ],
)
def test_lm_evals_model_args_are_checked(model_args: str, named: str) -> None:
    rc, err = hlm("evaluate", "--model_args", model_args, "--tasks", "hlm_lambada")
    assert_clean_error(rc, err, named)


def test_an_output_path_that_cannot_hold_results_is_refused(tmp_path: Path) -> None:
    """lm-eval logged a warning, wrote nothing, and `hlm evaluate` said where the results were."""
    taken = tmp_path / "taken"
    taken.write_text("mine")
    for target in (str(taken), os.devnull):
        rc, err = hlm("evaluate", "x", "--tasks", "hlm_lambada", "--output_path", target)
        assert_clean_error(rc, err, "--output_path: ", "is not a folder")
    assert taken.read_text() == "mine"


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--repo", "me/../x"], "--repo: Repo id must be in the form"),
        (["--repo", "me/x", "--revision", "a..b"], "--revision: 'a..b' is not a valid git branch"),
        (["--repo", "me/x", "--endpoint", "ftp://hub"], "--endpoint: 'ftp://hub' is not an http"),
        (["--repo", "me/x", "--license", "apache2"], "did you mean 'apache-2.0'"),
        (["--repo", "me/x", "--repository-url", "here"], "--repository-url: 'here' is not"),
    ],
)
def test_publish_checks_names_as_the_hub_does(tmp_path: Path, flags: list[str], named: str) -> None:
    rc, err = hlm("publish", "model", "runs/x", *flags, "--output-dir", str(tmp_path / "o"))
    assert_clean_error(rc, err, named)
    assert not (tmp_path / "o").exists()


def test_publish_model_names_a_model_of_a_suite(tmp_path: Path) -> None:
    ckpt = tmp_path / "final"
    ckpt.mkdir()
    out = ["--repo", "me/x", "--output-dir", str(tmp_path / "o"), *BOARD]
    rc, err = hlm("publish", "model", str(ckpt), "--model", "pythia-tiny-ce", *out)
    assert_clean_error(rc, err, "--model: names a model of --suite; give --suite too")
    rc, err = hlm("publish", "model", str(ckpt), "--suite", "nosuch", *out)
    assert_clean_error(rc, err, "no results in leaderboards/nosuch")


@pytest.mark.parametrize(
    ("corpus", "named"),
    [
        ("~nosuchuser/x", "no file matches '~nosuchuser/x'"),
        ("synthetic:", "'synthetic:': expected"),
    ],
)
def test_a_corpus_that_names_nothing_is_named(tmp_path: Path, corpus: str, named: str) -> None:
    out = str(tmp_path / "r")
    rc, err = hlm("pretrain", "--preset", "bert-tiny", "--corpus", corpus, "--output-dir", out)
    assert_clean_error(rc, err, named)
    assert not Path(out).exists()


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ('version: "3"', "version: Input should be a valid integer"),
        ("version: 1.5", "version: Input should be a valid integer"),
        ('seeds: ["1"]', "seeds[0]: Input should be a valid integer"),
        ("seeds: [true]", "seeds: True is a yes/no"),
        ("tasks: [{type: validation, every: 1000000000000}]", "every: Input should be less"),
        ("tasks: [{type: validation, params: {batches: 1000000000}}]", "batches: Input should"),
        ("tasks: [{type: validation, name: a/b}]", "tasks[0].name: String should match"),
        ("description: !!binary aGVsbG8=", "not a value a config holds"),
    ],
)
def test_a_suites_values_are_typed_and_bounded(tmp_path: Path, line: str, named: str) -> None:
    suite = tmp_path / "s.yaml"
    body = {
        "models": "models: [{preset: bert-tiny, objective: cwt}]",
        "tasks": "tasks: [{type: validation}]",
    }
    key = line.split(":")[0]
    body[key] = line
    suite.write_text("name: s\n" + "\n".join(body.values()) + "\n")
    rc, err = hlm("validate", str(suite))
    assert_clean_error(rc, err, named)


def test_a_sweep_is_counted_before_it_expands(tmp_path: Path) -> None:
    """A 10^6-point sweep ran for minutes before; it is refused at once, and --max-cells
    raises the bound."""
    suite = tmp_path / "s.yaml"
    values = ", ".join(str(i) for i in range(1, 1001))
    suite.write_text(
        "name: s\nmodels: [{preset: bert-tiny, objective: cwt}]\ntasks: [{type: validation}]\n"
        f"sweep: {{batch_size: [{values}], warmup_steps: [{values}]}}\n"
    )
    for verb in (["validate", str(suite)], ["run", str(suite), "--dry-run"]):
        rc, err = hlm(*verb)
        assert_clean_error(rc, err, "up to 1000000 cells", "--max-cells 1000000")
    small = tmp_path / "t.yaml"
    small.write_text(suite.read_text().replace(f"warmup_steps: [{values}]", "warmup_steps: [1]"))
    rc, err = hlm("validate", str(small), "--max-cells", "10")
    assert_clean_error(rc, err, "up to 1000 cells")
    assert hlm("validate", str(small), "--max-cells", "1000")[0] == 0
