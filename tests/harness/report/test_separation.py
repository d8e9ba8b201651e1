"""Where pretraining shows (`harness.report.separation`): the gap to the untrained twin per
seed, its interval over seeds, and the first checkpoint where every seed clears the gate's
margin."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.report.separation import INSTRUMENTS, gaps, operating_point, separation_table, twins
from tests.harness.results.test_leaderboard import row

PROBE = INSTRUMENTS[0]  # the SST-2 probe: margin 0.02


def _rows(gains: dict[int, tuple[float, ...]]) -> pd.DataFrame:
    """A twin at 0.60 (seeds 0, 1, 2: 0.59, 0.61, 0.60) and a model whose seeds gain
    `gains[step]` over the twin's mean."""
    rows = []
    for seed, twin in ((0, 0.59), (1, 0.61), (2, 0.60)):
        r = row("m-untrained", "accuracy", twin, seed=seed, step=0, task=PROBE.task)
        rows.append({**r, "preset": "modernbert-tiny", "tokens_seen": 0, "train_seconds": 0.0})
        for step, per_seed in gains.items():
            r = row(
                "m-ce", "accuracy", 0.60 + per_seed[seed], seed=seed, step=step, task=PROBE.task
            )
            r.update(
                preset="modernbert-tiny", tokens_seen=step * 1_000_000, train_seconds=step * 3.6
            )
            r["cell_id"] = f"m-ce-{seed}-{step}"
            rows.append(r)
    return pd.DataFrame(rows)


def test_each_seed_is_compared_with_the_twins_mean_as_a_gate_compares() -> None:
    """Not with the twin of the same seed: a strong twin seed (0.636 against 0.591 in the
    ladder) would make its seed's gap small, whatever pretraining did."""
    df = _rows({10: (0.03, 0.03, 0.03)})
    g = gaps(df, PROBE).set_index("step")
    assert g.loc[10, "least"] == pytest.approx(0.03) == g.loc[10, "gap"]  # twins' mean 0.60


def test_the_gap_is_per_seed_and_separates_where_every_seed_clears_the_margin() -> None:
    df = _rows(
        {
            10: (0.01, 0.03, 0.015),
            20: (0.05, 0.06, 0.055),
            30: (0.055, 0.065, 0.06),
            40: (0.01, 0.1, 0.055),
        }
    )
    assert twins(df) == {"m-ce": "m-untrained"}
    g = gaps(df, PROBE).set_index("step")
    assert g.loc[20, "gap"] == pytest.approx(0.055) and g.loc[20, "seeds"] == 3
    assert g.loc[20, "low"] > 0.02  # three close seeds: a narrow interval above the margin
    assert g.loc[40, "least"] == pytest.approx(0.01)  # the same mean gap, one seed below
    (probe,) = separation_table(df).to_dict("records")
    assert probe["stays"] == "no"  # step 40's seed 0 falls below the margin
    assert probe["separates at (M tokens)"] == "20.0"
    assert probe["CPU-hours then"] == "0.02"
    assert probe["each seed (M tokens)"] == "0: 20.0, 1: 10.0, 2: 20.0"


def test_two_seeds_that_each_clear_separate_though_their_interval_does_not() -> None:
    """Two seeds' t interval is about 9 standard deviations each way: the rule to plan by is
    that every seed clears, and the interval stays in the table for the test to come."""
    df = _rows({10: (0.03, 0.05, 0.0), 20: (0.01, 0.05, 0.0)})
    two = df[df["seed"] < 2]
    g = gaps(two, PROBE).set_index("step")
    assert g.loc[10, "seeds"] == 2 and g.loc[10, "low"] < 0.02 < g.loc[10, "least"]
    (probe,) = separation_table(two).to_dict("records")
    assert probe["separates at (M tokens)"] == "10.0" and probe["stays"] == "no"
    assert probe["each seed (M tokens)"] == "0: 10.0, 1: 10.0"
    assert probe["last gap [95 % CI]"].startswith("+0.030 [")


def test_a_checkpoint_a_running_seed_has_not_reached_clears_nothing_yet() -> None:
    """Seed 1 still running (rows to step 10 only): steps 20 and 30, where seed 0 alone
    clears, do not separate the model; with seed 1's rows there, they do."""
    full = _rows({10: (0.01, 0.05, 0.0), 20: (0.05, 0.05, 0.0), 30: (0.05, 0.05, 0.0)})
    full = full[full["seed"] < 2]
    running = full[(full["seed"] == 0) | (full["step"] <= 10)]
    (probe,) = separation_table(running).to_dict("records")
    assert (
        probe["separates at (M tokens)"] == ""
        and probe["each seed (M tokens)"] == "0: 20.0, 1: 10.0"
    )
    (done,) = separation_table(full).to_dict("records")
    assert done["separates at (M tokens)"] == "20.0" and done["stays"] == "yes"


def test_a_seed_ahead_neither_breaks_nor_makes_staying_clear() -> None:
    """Both seeds clear at step 10; seed 0 alone has reached 20 (seed 1 still running). A
    clear step 20 is not yet known, so the model stays separated from 10; a step 20 where
    seed 0 falls under the margin fails every-seed already, whatever seed 1 will do."""
    ahead = _rows({10: (0.05, 0.05, 0.0), 20: (0.05, 0.05, 0.0)})
    ahead = ahead[(ahead["seed"] == 0) | ((ahead["seed"] == 1) & (ahead["step"] <= 10))]
    (probe,) = separation_table(ahead).to_dict("records")
    assert probe["separates at (M tokens)"] == "10.0" and probe["stays"] == "yes"
    dips = ahead.copy()
    dips.loc[(dips["step"] == 20) & (dips["model"] == "m-ce"), "value"] = 0.61
    (fell,) = separation_table(dips).to_dict("records")
    assert fell["separates at (M tokens)"] == "10.0" and fell["stays"] == "no"


def test_one_seed_is_said_and_a_comparison_never_separates() -> None:
    df = _rows({10: (0.05, 0.05, 0.05)})
    one = df[df["seed"] == 0]
    (probe,) = separation_table(one).to_dict("records")
    assert probe["last gap [95 % CI]"] == "+0.060 (one seed)"  # 0.65 over the twin's 0.59
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
    out = capsys.readouterr().out
    assert "| m-ce " in out
    assert "no operating point yet" in out and "m-ce at 10.0M tokens" in out  # one gate of two
    lone = tmp_path / "lb2" / "t"
    write_cell(lone, "c0", [row("m", "accuracy", 0.5)])
    assert hlm(["leaderboard", "t", "--separation", "--leaderboards", str(tmp_path / "lb2")]) == 2
    assert "no untrained twin" in capsys.readouterr().err


def _two_instruments(probe: dict[int, float], blimp: dict[int, float], model: str) -> list[dict]:
    """One seed of `model` (and its twin) on the SST-2 probe and BLiMP: gaps by step."""
    rows = []
    for inst, by_step in ((INSTRUMENTS[0], probe), (INSTRUMENTS[3], blimp)):
        r = row(f"{model}-untrained", inst.metric, 0.5, step=0, task=inst.task)
        rows.append({**r, "preset": model, "tokens_seen": 0, "train_seconds": 0.0})
        for step, gain in by_step.items():
            r = row(f"{model}-ce", inst.metric, 0.5 + gain, step=step, task=inst.task)
            r.update(preset=model, tokens_seen=step * 1_000_000, train_seconds=step * 360.0)
            r["cell_id"] = f"{model}-{inst.task}-{step}"
            rows.append(r)
    return rows


def test_the_operating_point_is_where_two_gates_clear_for_good_at_the_least_cpu_time() -> None:
    """BLiMP clears at 10M, falls back at 20M and clears again from 30M: the point is 30M,
    where the second instrument clears for good (the probe cleared from 20M). A larger model
    that needs more CPU-hours is not the point; a model with one gate is not either."""
    small = _two_instruments(
        {10: 0.01, 20: 0.05, 30: 0.05, 40: 0.06}, {10: 0.03, 20: 0.0, 30: 0.03, 40: 0.03}, "s"
    )
    large = [
        {**r, "train_seconds": r["train_seconds"] * 10}
        for r in _two_instruments({10: 0.05, 20: 0.05}, {10: 0.05, 20: 0.05}, "l")
    ]
    one = _two_instruments({10: 0.05, 20: 0.05}, {10: 0.0, 20: 0.0}, "o")
    point, standing = operating_point(pd.DataFrame(small + large + one))
    assert point is not None and point.model == "s-ce"
    assert point.tokens == 30e6 and point.cpu_hours == pytest.approx(3.0)
    assert point.instruments == ("SST-2 probe", "BLiMP") and point.seeds == 1
    lone = {p.model: p for p in standing}["o-ce"]
    assert lone.instruments == ("SST-2 probe",)  # how far off: one gate of two
    none_yet, _ = operating_point(pd.DataFrame(one))
    assert none_yet is None


@pytest.fixture
def drawn(monkeypatch) -> list[tuple[float, str | None]]:
    """Every vertical line the figures draw (x, label), as drawn."""
    from matplotlib import pyplot as plt

    lines: list[tuple[float, str | None]] = []
    keep = plt.Axes.axvline
    monkeypatch.setattr(
        plt.Axes,
        "axvline",
        lambda ax, x, **kw: lines.append((x, kw.get("label"))) or keep(ax, x, **kw),
    )
    return lines


def test_the_figure_marks_the_operating_point(tmp_path, drawn) -> None:
    """A panel per instrument with rows, the operating point dotted on each (and none
    drawn where there is no point)."""
    from harness.report.separation import plot_separation

    rows = _two_instruments({10: 0.05, 20: 0.05}, {10: 0.03, 20: 0.03}, "s")
    (png,) = plot_separation(pd.DataFrame(rows), tmp_path)
    assert png.name == "separation.png" and png.stat().st_size > 0
    assert drawn == [(10.0, "operating point (s-ce)")] * 2  # the probe and BLiMP panels
    drawn.clear()
    plot_separation(pd.DataFrame(_two_instruments({10: 0.05}, {10: 0.0}, "o")), tmp_path / "o")
    assert drawn == []


def test_hlm_plot_draws_the_probe_panel_of_a_crowded_probe_family(tmp_path, drawn) -> None:
    """The probe family has many sub-tasks (features, data sets, diagnostics), so its other
    figures draw it whole; the separation figure still reads `probe/sst2/mean` and marks
    the operating point that needs it on both panels."""
    from harness.report.plots import MAX_SUBTASKS, make_plots

    rows = _two_instruments({10: 0.05, 20: 0.05}, {10: 0.03, 20: 0.03}, "s")
    crowd = [{**rows[0], "task": f"probe/other-{i}", "cell_id": f"c{i}"}
             for i in range(MAX_SUBTASKS + 1)]  # fmt: skip
    made = make_plots(pd.DataFrame(rows + crowd), tmp_path)
    assert any(p.name == "separation.png" for p in made)
    assert drawn.count((10.0, "operating point (s-ce)")) == 2


def test_the_figure_draws_each_seed_and_a_mean_only_where_every_seed_is(
    tmp_path, monkeypatch
) -> None:
    """Seed 1 still running: both seeds thin, and the bold mean stops at its last step."""
    from matplotlib import pyplot as plt

    from harness.report.separation import plot_separation

    lines = []
    keep = plt.Axes.plot
    monkeypatch.setattr(
        plt.Axes,
        "plot",
        lambda ax, x, y, **kw: lines.append((list(x), kw.get("label"))) or keep(ax, x, y, **kw),
    )
    full = _rows({10: (0.01, 0.05, 0.0), 20: (0.05, 0.05, 0.0)})
    running = full[(full["seed"] == 0) | ((full["seed"] == 1) & (full["step"] <= 10))]
    plot_separation(running, tmp_path)
    assert lines == [([10.0, 20.0], None), ([10.0], None), ([10.0], "m-ce (2 seeds)")]


def test_a_model_pretrained_under_bf16_is_labelled_so() -> None:
    df = _rows({10: (0.03, 0.03, 0.03)})
    trained = df["model"] == "m-ce"
    df.loc[trained, "config"] = json.dumps({"pretrain": {"bf16": True, "steps": 10}})
    (probe,) = separation_table(df).to_dict("records")
    assert probe["model"] == "m-ce (bf16)"
    df.loc[trained, "config"] = json.dumps({"pretrain": {"bf16": False, "steps": 10}})
    assert separation_table(df)["model"].tolist() == ["m-ce"]
