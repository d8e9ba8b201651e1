"""A suite's training hours read from its rows alone (`hlm leaderboard SUITE --hours`)."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.results.hours import hours_line, run_hours


def _row(model: str, seed: int, step: int, seconds: float, hardware: str) -> dict:
    return {
        "model": model,
        "sweep": "{}",
        "seed": seed,
        "step": step,
        "tokens_seen": step * 8192,
        "train_seconds": seconds,
        "hardware": hardware,
        "task": "probe",
        "metric": "accuracy",
        "value": 0.6,
    }


def _rows() -> pd.DataFrame:
    return pd.DataFrame(
        [
            _row("ce", 0, 246, 400.0, "cpu x1: AMD EPYC"),
            _row("ce", 0, 1230, 2000.0, "cpu x1: AMD EPYC"),  # the furthest checkpoint
            _row("ce", 1, 1230, 1000.0, "cpu x1: Intel(R) Xeon(R) Processor"),
            _row("cwt", 0, 1230, 800.0, ""),  # a row that records no machine
            _row("untrained", 0, 0, 0.0, "cpu x1: AMD EPYC"),  # a twin: no training
        ]
    )


def test_each_run_is_read_at_its_furthest_evaluated_checkpoint() -> None:
    """One line per trained run (model, sweep point, seed), at its last checkpoint's step,
    tokens and hours, tokens/s over them; the untrained twin is left out."""
    runs = run_hours(_rows())
    assert list(zip(runs["model"], runs["seed"], strict=True)) == [("ce", 0), ("ce", 1), ("cwt", 0)]
    first = runs.iloc[0]
    assert first["step"] == 1230 and first["M tokens"] == pytest.approx(10.1)
    assert first["hours"] == pytest.approx(2000 / 3600, abs=0.005)
    assert first["tokens/s"] == round(1230 * 8192 / 2000)
    assert runs.iloc[1]["tokens/s"] == round(1230 * 8192 / 1000)
    assert runs.iloc[2]["machine"] == "-" and first["sweep"] == ""


def test_the_line_sums_the_hours_and_splits_them_by_machine() -> None:
    runs = run_hours(_rows())
    line = hours_line(runs)
    total = sum(round(s / 3600, 2) for s in (2000, 1000, 800))
    assert f": {total:.2f} over 3 runs" in line
    assert "cpu x1: AMD EPYC: 0.56" in line and "Intel(R) Xeon(R) Processor: 0.28" in line


def test_a_suite_of_untrained_models_says_so() -> None:
    only_twins = _rows()[lambda d: d["model"] == "untrained"]
    runs = run_hours(only_twins)
    assert runs.empty
    assert hours_line(runs) == "no trained run: every row is of an untrained model"


def test_the_verb_prints_each_run_and_the_suite_hours(tmp_path, capsys) -> None:
    """`hlm leaderboard SUITE --hours` on written result files: the table, then the line."""
    from harness.cli import main as hlm
    from harness.results.leaderboard import write_cell
    from tests.harness.results.test_leaderboard import row

    board = tmp_path / "lb" / "t"
    for i, r in enumerate(_rows().to_dict("records")):
        whole = row(r["model"], "accuracy", 0.6, seed=r["seed"], step=r["step"], task="probe")
        keys = ("tokens_seen", "train_seconds", "hardware")
        write_cell(board, f"c{i}", [{**whole, **{k: r[k] for k in keys}, "cell_id": f"c{i}"}])
    assert hlm(["leaderboard", "t", "--hours", "--leaderboards", str(tmp_path / "lb")]) == 0
    out = capsys.readouterr().out
    assert "| ce " in out and "| untrained " not in out
    assert "over 3 runs" in out.splitlines()[-1]


def test_a_run_made_again_on_another_machine_is_read_at_its_furthest_row_whole() -> None:
    """Seed 0 of ce ran to step 1230 on one machine (2000 s) and again, faster, to step 2460
    on another (1500 s): its line is the second run's row, tokens and seconds together."""
    again = pd.DataFrame([_row("ce", 0, 2460, 1500.0, "cpu x1: Intel(R) Xeon(R) Processor")])
    runs = run_hours(pd.concat([_rows(), again], ignore_index=True))
    first = runs.iloc[0]
    assert first["step"] == 2460 and first["hours"] == pytest.approx(1500 / 3600, abs=0.005)
    assert first["tokens/s"] == round(2460 * 8192 / 1500)
    assert first["machine"] == "cpu x1: Intel(R) Xeon(R) Processor"
