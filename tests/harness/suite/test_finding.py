"""Suites by name from any folder (`harness.suite.finding`), leaderboards and runs under
`hlm_home()`, and corpus paths beside a suite file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.flags import add_leaderboards
from harness.suite import load_suite, resolve_suite_path
from harness.suite.finding import SHIPPED, known_suites
from zoo.train.names import HOME_ENV, hlm_home, runs_dir

TINY = (
    "name: {name}\nmodels: [{{preset: bert-tiny, objective: cwt}}]\n"
    "recipe: {{steps: 4, vocab_size: 256, batch_size: 2, seq_len: 32, corpus: [{corpus}]}}\n"
    "tasks: [{{type: validation}}]\n"
)


def test_a_suite_name_is_found_from_any_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(HOME_ENV, raising=False)
    assert resolve_suite_path("quickstart") == SHIPPED / "quickstart.yaml"
    assert load_suite(resolve_suite_path("quickstart")).name == "quickstart"
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "quickstart.yaml").write_text("name: mine\n")
    assert resolve_suite_path("quickstart") == Path("suites/quickstart.yaml")  # home first
    assert resolve_suite_path("x/quickstart") == Path("x/quickstart")  # a path as given


def test_home_is_hlm_home_else_the_project_above_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.delenv("HLM_RUNS_DIR", raising=False)
    (tmp_path / "leaderboards").mkdir()
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "er")
    assert hlm_home() == tmp_path and runs_dir() == tmp_path / "runs"
    monkeypatch.chdir(tmp_path)
    assert hlm_home() == Path(".")
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    assert runs_dir() == tmp_path / "home" / "runs"
    import argparse

    parser = argparse.ArgumentParser()
    add_leaderboards(parser)
    assert parser.parse_args([]).leaderboards == str(tmp_path / "home" / "leaderboards")


def test_an_installed_package_ships_suites_by_entry_point(tmp_path, monkeypatch) -> None:
    site = tmp_path / "site"
    (site / "my_suites").mkdir(parents=True)
    (site / "my_suites" / "__init__.py").write_text("")
    (site / "my_suites" / "theirs.yaml").write_text("name: theirs\n")
    info = site / "my_suites-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-suites\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hlm.suites]\nmine = my_suites\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    assert resolve_suite_path("theirs") == site / "my_suites" / "theirs.yaml"
    assert known_suites()["theirs"] == site / "my_suites" / "theirs.yaml"


def test_a_corpus_beside_the_suite_file_is_read_from_any_folder(tmp_path, monkeypatch):
    from harness.run.cells import expand

    project = tmp_path / "project"
    (project / "text").mkdir(parents=True)
    (project / "text" / "a.txt").write_text("some words here\n" * 50)
    (project / "s.yaml").write_text(TINY.format(name="s", corpus="text"))
    monkeypatch.chdir(tmp_path)
    (cell,) = expand(load_suite(project / "s.yaml"))
    assert cell.pretrain.corpus == [str(project / "text")]
    (project / "g.yaml").write_text(TINY.format(name="g", corpus="synthetic:50"))
    (cell,) = expand(load_suite(project / "g.yaml"))
    assert cell.pretrain.corpus == ["synthetic:50"]  # other sources as given


def test_hlm_run_by_name_from_another_folder_writes_under_home(tmp_path) -> None:
    home = tmp_path / "home"
    (home / "suites").mkdir(parents=True)
    (home / "suites" / "tiny.yaml").write_text(TINY.format(name="tiny", corpus="synthetic:50"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, HOME_ENV: str(home), "OMP_NUM_THREADS": "1"}
    env.pop("HLM_RUNS_DIR", None)
    hlm = [sys.executable, "-m", "harness.cli"]
    run = subprocess.run(
        [*hlm, "run", "tiny", "--no-progress"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert list((home / "leaderboards" / "tiny").glob("*.parquet"))
    assert (home / "runs" / "pretrain").is_dir() and not list(elsewhere.iterdir())
    board = subprocess.run(
        [*hlm, "leaderboard", "tiny"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert board.returncode == 0 and "bert-tiny-cwt" in board.stdout, board.stderr


@pytest.fixture(autouse=True)
def _project_on_path(monkeypatch) -> None:
    """`python -m harness.cli` from another folder imports this checkout."""
    root = str(Path(__file__).resolve().parents[3])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
