"""Where pretraining shows (`harness.report.separation`): the gap to the untrained twin per
seed, its interval over seeds, and the first checkpoint that clears the gate's margin."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.report.separation import INSTRUMENTS, gaps, separation_table, twins
from tests.harness.results.test_leaderboard import row

PROBE = INSTRUMENTS[0]  # the SST-2 probe: margin 0.02


def _rows(gains: dict[int, tuple[float, ...]]) -> pd.DataFrame:
    """A twin at 0.60 (seeds 0, 1, 2: 0.59, 0.61, 0.60) and a model whose seeds gain
    `gains[step]` over their twin's seed."""
    rows = []
    for seed, twin in ((0, 0.59), (1, 0.61), (2, 0.60)):
        r = row("m-untrained", "accuracy", twin, seed=seed, step=0, task=PROBE.task)
        rows.append({**r, "preset": "modernbert-tiny", "tokens_seen": 0, "train_seconds": 0.0})
        for step, per_seed in gains.items():
            r = row(
                "m-ce", "accuracy", twin + per_seed[seed], seed=seed, step=step, task=PROBE.task
            )
            r.update(
                preset="modernbert-tiny", tokens_seen=step * 1_000_000, train_seconds=step * 3.6
            )
            r["cell_id"] = f"m-ce-{seed}-{step}"
            rows.append(r)
    return pd.DataFrame(rows)


def test_the_gap_is_per_seed_and_separates_where_its_interval_clears_the_margin() -> None:
    df = _rows(
        {
            10: (0.01, 0.03, 0.02),
            20: (0.05, 0.06, 0.055),
            30: (0.055, 0.065, 0.06),
            40: (0.01, 0.1, 0.055),
        }
    )
    assert twins(df) == {"m-ce": "m-untrained"}
    g = gaps(df, PROBE).set_index("step")
    assert g.loc[20, "gap"] == pytest.approx(0.055) and g.loc[20, "seeds"] == 3
    assert g.loc[20, "low"] > 0.02  # three close seeds: a narrow interval above the margin
    assert g.loc[40, "low"] < 0.02  # the same mean gap, seeds far apart: not separated
    (probe,) = separation_table(df).to_dict("records")
    assert probe["stays"] == "no"  # step 40's interval reaches below the margin
    assert probe["separates at (M tokens)"] == "20.0"
    assert probe["CPU-hours then"] == "0.02"


def test_one_seed_is_said_and_a_comparison_never_separates() -> None:
    df = _rows({10: (0.05, 0.05, 0.05)})
    one = df[df["seed"] == 0]
    (probe,) = separation_table(one).to_dict("records")
    assert probe["last gap [95 % CI]"] == "+0.050 (one seed)"
    stsb = [i for i in INSTRUMENTS if i.gate is None]
    assert stsb and all(i.margin() is None for i in stsb)
    as_stsb = one.assign(task=stsb[0].task, metric=stsb[0].metric)
    (row_,) = separation_table(as_stsb).to_dict("records")
    assert row_["margin"] == "comparison" and row_["separates at (M tokens)"] == ""


def test_the_verb_prints_the_table_and_says_when_there_is_no_twin(tmp_path, capsys) -> None:
    from harness.cli import main as hlm
    from harness.results.leaderboard import write_cell

    board = tmp_path / "lb" / "t"
    for i, r in enumerate(_rows({10: (0.05, 0.06, 0.055)}).to_dict("records")):
        write_cell(board, f"c{i}", [r])
    assert hlm(["leaderboard", "t", "--separation", "--leaderboards", str(tmp_path / "lb")]) == 0
    assert "| m-ce " in capsys.readouterr().out
    lone = tmp_path / "lb2" / "t"
    write_cell(lone, "c0", [row("m", "accuracy", 0.5)])
    assert hlm(["leaderboard", "t", "--separation", "--leaderboards", str(tmp_path / "lb2")]) == 2
    assert "no untrained twin" in capsys.readouterr().err
