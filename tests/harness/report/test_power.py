"""`hlm power SUITE`: the seeds' power, per comparison with the baseline."""

from __future__ import annotations

import math

import pytest

from harness.cli import main as hlm
from harness.report.power import power_table
from harness.results.leaderboard import read_leaderboard, write_cell
from harness.results.stats import detectable_effect, seeds_needed
from tests.harness.results.test_leaderboard import row


def _board(tmp_path):
    rows = []
    for seed, (base, new) in enumerate([(0.70, 0.72), (0.71, 0.74), (0.69, 0.70)]):
        rows += [row("base", "accuracy", base, seed, task="glue/sst2")]
        rows += [row("new", "accuracy", new, seed, task="glue/sst2")]
        rows += [row("new", "val_loss", 1.0 + seed, seed)]  # no baseline row: not compared
    board = tmp_path / "board"
    for i, r in enumerate(rows):
        write_cell(board, f"c{i}", [r])
    return board


def test_the_table_follows_the_seed_level_spread(tmp_path) -> None:
    table = power_table(read_leaderboard(_board(tmp_path)), "base", effect=0.01)
    assert len(table) == 1
    r = table.iloc[0]
    diffs = [0.02, 0.03, 0.01]
    sd = (sum((d - 0.02) ** 2 for d in diffs) / 2) ** 0.5
    assert r["seeds"] == 3 and r["delta"] == pytest.approx(0.02)
    assert r["sd"] == pytest.approx(sd)
    assert r["detectable"] == pytest.approx(detectable_effect(sd, 3, paired=True))
    assert r["seeds_needed"] == seeds_needed(0.01, sd, paired=True)
    # ten claims corrected together: each test held to 0.05 / 10 (Bonferroni's level)
    held = power_table(read_leaderboard(_board(tmp_path)), "base", effect=0.01, claims=10)
    h = held.iloc[0]
    assert h["detectable"] == pytest.approx(detectable_effect(sd, 3, paired=True, alpha=0.005))
    assert h["detectable"] > r["detectable"] and h["power"] < r["power"]
    assert h["seeds_needed"] == seeds_needed(0.01, sd, paired=True, alpha=0.005)


def test_without_an_effect_no_power_is_given_at_the_observed_one(tmp_path) -> None:
    """The power at the observed Δ is a function of p alone (post hoc power): the table
    gives the detectable Δ, and power only for an effect asked."""
    table = power_table(read_leaderboard(_board(tmp_path)), "base")
    r = table.iloc[0]
    assert r["detectable"] > 0 and r["delta"] == pytest.approx(0.02)
    assert math.isnan(r["effect"]) and math.isnan(r["power"]) and r["seeds_needed"] is None


def test_the_verb_prints_it_and_refuses_without_a_baseline(tmp_path, capsys) -> None:
    board = _board(tmp_path)
    args = ["power", "board", "--leaderboards", str(tmp_path)]
    assert hlm([*args, "--baseline", "base", "--effect", "0.01"]) == 0
    out = capsys.readouterr().out
    assert "glue/sst2" in out and "seeds_needed" in out and "baseline base" in out
    assert "α = 0.05, no correction" in out
    assert hlm([*args, "--baseline", "base", "--claims", "10"]) == 0
    out = capsys.readouterr().out
    assert "α = 0.05/10 = 0.005" in out and "none without --effect" in out
    line = next(x for x in out.splitlines() if "glue/sst2" in x)
    assert line.split()[-3:] == ["-", "-", "-"]  # effect, power, seeds_needed
    with pytest.raises(SystemExit) as stop:  # argparse's own error for a flag's value
        hlm([*args, "--baseline", "base", "--claims", "0"])
    assert stop.value.code == 2 and "--claims: 0 is below 1" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        hlm([*args, "--baseline", "base", "--effect", "nan"])
    assert stop.value.code == 2 and "'nan' is not a finite number" in capsys.readouterr().err
    assert hlm(args) == 2  # the suite names no baseline: a clear error, not a traceback
    assert "pass --baseline MODEL" in capsys.readouterr().err
    assert hlm([*args, "--baseline", "nobody"]) == 2
    assert "--baseline: unknown model 'nobody' (known: base, new)" in capsys.readouterr().err
    assert hlm([*args, "--baseline", "base", "--metric", "accuracy"]) == 0
    assert "glue/sst2" in capsys.readouterr().out
    assert hlm([*args, "--baseline", "base", "--metric", "val_loss"]) == 2  # only new's rows
    assert "no rows of the baseline 'base'" in capsys.readouterr().err
    assert hlm([*args, "--baseline", "base", "--metric", "acuracy"]) == 2
    assert "unknown metric 'acuracy'; did you mean 'accuracy'" in capsys.readouterr().err
    assert board.is_dir()


def test_one_effect_over_several_metrics_says_it_is_taken_in_each_ones_unit(
    tmp_path, capsys
) -> None:
    board = _board(tmp_path)
    write_cell(board, "b-loss", [row("base", "val_loss", 2.0)])
    args = ["power", "board", "--leaderboards", str(tmp_path), "--baseline", "base"]
    assert hlm([*args, "--effect", "0.01"]) == 0
    said = "--effect 0.01 is taken in the unit of each of the 2 metrics shown (accuracy, val_loss)"
    assert said in capsys.readouterr().out
    assert hlm([*args, "--effect", "0.01", "--metric", "accuracy"]) == 0
    assert "is taken in the unit" not in capsys.readouterr().out


def test_the_verb_marks_what_it_cannot_size_and_names_a_close_board(tmp_path, capsys) -> None:
    """One seed gives no spread: the sizes print as "-", never as None; a typo in the suite
    name is answered with the boards that hold rows."""
    board = tmp_path / "board"
    write_cell(board, "c0", [row("base", "accuracy", 0.7, 0, task="glue/sst2")])
    write_cell(board, "c1", [row("new", "accuracy", 0.8, 0, task="glue/sst2")])
    args = ["--leaderboards", str(tmp_path), "--baseline", "base"]
    assert hlm(["power", "board", *args]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "glue/sst2" in x)
    assert "None" not in line and line.split()[-1] == "-"
    assert hlm(["power", "bord", *args]) == 2
    assert "no results in" in (err := capsys.readouterr().err) and "did you mean 'board'" in err


def test_a_best_epoch_pick_is_not_sized_and_the_footer_gives_the_family(tmp_path, capsys) -> None:
    """`accuracy@best` is never tested (its epoch is chosen on the set it is scored on), so
    no power is given for it; the footer says over how many comparisons the leaderboard's
    marks are corrected, whatever --task selects."""
    board = _board(tmp_path)
    for seed, (base, new) in enumerate([(0.70, 0.72), (0.71, 0.74), (0.69, 0.70)]):
        for model, value in (("base", base), ("new", new)):
            write_cell(board, f"best-{model}-{seed}", [row(model, "accuracy@best", value, seed)])
            write_cell(board, f"cola-{model}-{seed}", [row(model, "mcc", value, seed, task="c")])
    table = power_table(read_leaderboard(board), "base")
    assert sorted(table["metric"]) == ["accuracy", "mcc"]
    args = ["power", "board", "--leaderboards", str(tmp_path), "--baseline", "base"]
    assert hlm([*args, "--task", "glue/sst2"]) == 0
    out = capsys.readouterr().out
    assert "@best" not in out and "the leaderboard's marks correct over its 2 comparisons" in out


def test_the_verb_labels_a_sweep_point_as_the_leaderboard_does(tmp_path, capsys) -> None:
    """A row is the model and its sweep point ("new vocab_size=8192"), as `hlm leaderboard`
    labels it, the points in the order of their values; a board without a sweep shows no
    empty point."""
    board = tmp_path / "board"
    for seed, (base, new) in enumerate([(0.70, 0.72), (0.71, 0.74), (0.69, 0.70)]):
        for vocab in (32768, 8192):  # written out of order: printed by the point's value
            for model, value in (("base", base), ("new", new + vocab / 1e6)):
                r = row(model, "accuracy", value, seed, task="glue/sst2")
                r.update(sweep=f'{{"vocab_size": {vocab}}}', cell_id=f"{model}-{seed}-{vocab}")
                write_cell(board, f"{model}-{seed}-{vocab}", [r])
    args = ["power", "board", "--leaderboards", str(tmp_path), "--baseline", "base"]
    assert hlm(args) == 0
    out = capsys.readouterr().out
    lines = [x.split() for x in out.splitlines() if "glue/sst2" in x]
    assert [x[:2] for x in lines] == [["new", "vocab_size=8192"], ["new", "vocab_size=32768"]]
    assert "sweep" not in out.splitlines()[0] and "{" not in out
    plain = tmp_path / "plain"
    _board(plain)  # a board without a sweep: the same columns, no "{}" anywhere
    assert hlm(["power", "board", "--leaderboards", str(plain), "--baseline", "base"]) == 0
    out = capsys.readouterr().out
    assert "{}" not in out and out.split()[:2] == ["model", "task"]
    assert next(x for x in out.splitlines() if "glue/sst2" in x).split()[:2] == ["new", "glue/sst2"]


def test_at_a_budget_the_spread_is_a_checkpoints_and_the_twin_stands(tmp_path, capsys) -> None:
    """`--at tokens=T`: each pretrained model's seeds at its first checkpoint reaching T,
    against an untrained twin's step-0 rows; the final checkpoint's gaps would differ."""
    board = tmp_path / "board"
    for seed, (gap_at_40, gap_final) in enumerate([(0.02, 0.05), (0.03, 0.06), (0.01, 0.04)]):
        cells = [
            (f"t{seed}", row("twin", "accuracy", 0.6, seed, step=0, task="glue/sst2"), 0),
            (f"m{seed}.step-0000040", row("m", "accuracy", 0.6 + gap_at_40, seed, step=40), 40),
            (f"m{seed}", row("m", "accuracy", 0.6 + gap_final, seed, step=100), 100),
        ]
        for cell, r, tokens in cells:
            write_cell(board, cell, [{**r, "task": "glue/sst2", "tokens_seen": tokens}])
    args = ["power", "board", "--leaderboards", str(tmp_path), "--baseline", "twin"]
    assert hlm([*args, "--at", "tokens=40"]) == 0
    out = capsys.readouterr().out
    assert "each model at tokens = 40, from the first checkpoint that reached it" in out
    assert "untrained: at every budget" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("m "))
    assert " 0.02 " in f" {line} "  # the mean gap at 40 tokens, not the final 0.05
    assert hlm(args) == 0
    final = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("m "))
    assert " 0.05 " in f" {final} "
