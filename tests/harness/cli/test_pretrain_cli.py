"""`hlm pretrain --dry-run`: the config as given and the plan it resolves to, nothing run."""

from __future__ import annotations

import yaml

from harness.cli import main as hlm


def test_dry_run_prints_the_config_and_the_plan_and_trains_nothing(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["pretrain", "--preset", "modernbert-tiny", "--objective", "cwt", "--vocab-size"]
    argv += ["8192", "--steps", "100", "--batch-size", "8", "--output-dir", str(out)]
    assert hlm([*argv, "--dry-run"]) == 0
    said = capsys.readouterr().out
    given, plan = said.split("# plan\n")
    config = yaml.safe_load(given)
    assert config["preset"] == "modernbert-tiny" and config["steps"] == 100
    assert "100 steps of 8 x 128 tokens = 0.1M tokens" in plan  # seq_len from the preset
    assert "lr 0.001, triangular schedule, warm-up 1000 steps" in plan
    assert not out.exists()
