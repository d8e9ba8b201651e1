"""`hlm evaluate`: lm-eval's table printed, rows added to a leaderboard next to what is there,
bad arguments named by their flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as hlm
from harness.results.leaderboard import read_leaderboard


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
    kept = sorted((lb / "adhoc" / "_artifacts").glob("*/lm_eval_results.json"))
    assert len(kept) == 2 and json.loads(kept[0].read_text())["lm_eval_version"]
    dest = tmp_path / "raw"
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolq", "--limit", "2",
                "--output", str(dest)]) == 0  # fmt: skip
    assert (dest / "lm_eval_results.json").is_file()
    assert not (Path.cwd() / "leaderboards" / "evaluate").exists()  # nothing kept unasked


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
    assert "--limit: Input should be greater than 0" in capsys.readouterr().err
    assert hlm(["evaluate", str(tiny_decoder), "--tasks", "hlm_boolx", "--limit", "1"]) == 2
    assert "did you mean 'hlm_boolq'" in capsys.readouterr().err


def test_a_default_label_names_the_run() -> None:
    from harness.run.evaluate import default_label

    assert default_label("runs/bert-tiny-cwt/final") == "bert-tiny-cwt"
    assert default_label("EleutherAI/pythia-70m") == "pythia-70m"
    assert default_label("/tmp/.hidden dir/final") == "hidden-dir"
