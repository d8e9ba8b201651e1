"""Leaderboard schema, atomic writes, aggregation, significance and sort direction."""

from __future__ import annotations

import json
import math
import threading
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from harness.report.tables import pivot
from harness.results.leaderboard import aggregate, final_rows, read_leaderboard, write_cell
from harness.results.schema import COLUMNS
from harness.results.significance import compare_to_baseline


def row(
    model: str, metric: str, value: float, seed: int = 0, step: int = 10, task: str = "validation"
) -> dict:
    r = {c: None for c in COLUMNS}
    r.update(
        suite="t",
        suite_version=1,
        cell_id=f"{model}-{seed}-{metric}",
        model=model,
        preset="bert-tiny",
        objective="ce",
        scale="tiny",
        vocab_size=100,
        batch_size=4,
        seed=seed,
        task=task,
        metric=metric,
        value=value,
        step=step,
        sweep="{}",
        config="{}",
        git_sha="",
        versions="{}",
        timestamp=datetime.now(UTC),
    )
    return r


def record_baseline(board: Path, baseline: str, models: tuple[str, ...]) -> None:
    """A `_suite.yaml` in leaderboard folder `board`, as `hlm run` writes one, naming
    `baseline` among `models` (bert-tiny, ce) of a glue task: what the marks are made against."""
    import yaml

    suite = {
        "name": board.name,
        "baseline": baseline,
        "models": [{"name": m, "preset": "bert-tiny", "objective": "ce"} for m in models],
        "tasks": [{"type": "glue"}],
    }
    (board / "_suite.yaml").write_text(yaml.safe_dump(suite))


def test_the_mark_never_compares_a_loss_across_objectives(tmp_path) -> None:
    """A CWT loss over in-batch negatives is not a CE loss over the vocabulary: no mark,
    however much lower it is; the same metric within one objective is compared."""
    rows = []
    for seed in range(3):
        rows.append(row("ce", "val_loss", 5.05 + 0.01 * seed, seed))
        cwt = row("cwt", "val_loss", 2.70 + 0.01 * seed, seed)
        cwt["objective"] = "cwt"
        rows.append(cwt)
        rows.append(row("ce-long", "val_loss", 4.0 + 0.02 * seed**2, seed))
    for i, r in enumerate(rows):
        write_cell(tmp_path, f"c{i}", [r])
    cmp = compare_to_baseline(aggregate(read_leaderboard(tmp_path)), "ce").set_index("model")
    assert not cmp.loc["cwt", "significant"] and math.isnan(cmp.loc["cwt", "p_value"])
    assert cmp.loc["cwt", "test"] == "not comparable across objectives"
    assert cmp.loc["ce-long", "significant"] and cmp.loc["ce-long", "test"].startswith("paired")


def test_aggregate_latest_step_and_significance(tmp_path) -> None:
    rows = []
    for seed, (v_base, v_new) in enumerate([(3.0, 2.0), (3.15, 2.1), (2.92, 1.9)]):
        rows += [row("base", "val_loss", v_base, seed), row("new", "val_loss", v_new, seed)]
        rows += [row("new", "val_loss", 9.0, seed, step=5)]  # an earlier step is not the result
    for i, r in enumerate(rows):
        r["cell_id"] = f"c{i}"
        write_cell(tmp_path, r["cell_id"], [r])
    agg = aggregate(read_leaderboard(tmp_path))
    new = agg[agg["model"] == "new"].iloc[0]
    assert new["mean"] == pytest.approx(2.0) and new["n"] == 3 and new["std"] == pytest.approx(0.1)
    assert new["by_seed"] == {0: pytest.approx(2.0), 1: pytest.approx(2.1), 2: pytest.approx(1.9)}
    cmp = compare_to_baseline(agg, "base")
    new = cmp[cmp["model"] == "new"].iloc[0]
    assert bool(new["significant"])  # lower val_loss is better
    assert new["test"] == "paired t-test over 3 seeds" and new["low"] <= -1.0 <= new["high"]
    table = pivot(cmp)
    assert list(table.index) == ["new", "base"]  # sorted by val_loss, ascending
    assert table.loc["new", "validation/val_loss"].endswith("†")


def test_the_marks_are_symmetric_and_no_mark_is_no_verdict(tmp_path) -> None:
    """† for a model better than the baseline, ‡ for one worse, at the same adjusted level;
    a model within the seeds' noise gets neither (inconclusive, not 'equal')."""
    rows = []
    for seed, noise in enumerate([0.0, 0.1, -0.05]):
        rows.append(row("base", "val_loss", 3.0 + noise, seed))
        rows.append(row("better", "val_loss", 2.0 + noise + 0.01 * seed, seed))
        rows.append(row("worse", "val_loss", 4.0 + noise - 0.01 * seed, seed))
        rows.append(row("noisy", "val_loss", 3.0 + noise + (0.5, -0.4, 0.1)[seed], seed))
    for i, r in enumerate(rows):
        write_cell(tmp_path, f"c{i}", [r])
    cmp = compare_to_baseline(aggregate(read_leaderboard(tmp_path)), "base").set_index("model")
    marks = {m: (bool(cmp.loc[m, "significant"]), bool(cmp.loc[m, "worse"])) for m in cmp.index}
    assert marks == {
        "base": (False, False),
        "better": (True, False),
        "worse": (False, True),
        "noisy": (False, False),
    }
    cells = pivot(cmp.reset_index())["validation/val_loss"]
    assert cells["better"].endswith(" †") and cells["worse"].endswith(" ‡")
    assert not cells["noisy"].endswith(("†", "‡")) and not cells["base"].endswith(("†", "‡"))


def test_pivot_sorts_higher_is_better_descending(tmp_path) -> None:
    rows = [
        row("slow", "tokens_per_s", 10.0, task="throughput"),
        row("fast", "tokens_per_s", 30.0, task="throughput"),
    ]
    rows[1]["cell_id"] = "other"
    for r in rows:
        write_cell(tmp_path, r["cell_id"], [r])
    assert list(pivot(aggregate(read_leaderboard(tmp_path))).index) == ["fast", "slow"]


def test_write_cell_rejects_incomplete_rows_and_is_atomic(tmp_path) -> None:
    bad = row("m", "val_loss", 1.0)
    del bad["git_sha"]
    with pytest.raises(ValueError, match="git_sha"):
        write_cell(tmp_path, "x", [bad])
    assert list(tmp_path.iterdir()) == []

    def writer(i: int) -> None:
        for j in range(10):
            r = row(f"m{i}", "val_loss", float(j))
            write_cell(tmp_path, f"cell-{i}-{j}", [r])

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    df = read_leaderboard(tmp_path)
    assert len(df) == 40 and not any(p.name.startswith(".tmp") for p in tmp_path.iterdir())
    assert json.loads(df["config"].iloc[0]) == {}


def test_stale_cells_stay_on_disk_but_are_not_shown(tmp_path) -> None:
    from harness.results.leaderboard import SUPERSEDED, stale_cells, write_current_cells

    write_cell(tmp_path, "old", [row("a", "val_loss", 9.0)])
    write_cell(tmp_path, "new", [row("a", "val_loss", 1.0)])
    assert sorted(read_leaderboard(tmp_path)["value"]) == [1.0, 9.0]  # no run recorded yet
    # the suite was edited: cell "old" is gone from it, and the file moved is said
    assert write_current_cells(tmp_path, ["new"]) == [tmp_path / SUPERSEDED / "old.parquet"]
    assert write_current_cells(tmp_path, ["new"]) == []
    assert list(read_leaderboard(tmp_path)["value"]) == [1.0]
    assert stale_cells(tmp_path) == set() and (tmp_path / SUPERSEDED / "old.parquet").is_file()
    assert sorted(read_leaderboard(tmp_path, include_stale=True)["value"]) == [1.0, 9.0]


def test_final_rows_prefer_the_newest_row_of_a_step() -> None:

    from harness.results.leaderboard import final_rows

    old, new = row("a", "val_loss", 9.0), row("a", "val_loss", 1.0)
    old["timestamp"] = datetime(2020, 1, 1, tzinfo=UTC)
    for order in ([new, old], [old, new]):
        df = pd.DataFrame(order)
        assert list(final_rows(df)["value"]) == [1.0]


def test_a_task_cut_off_before_its_final_checkpoint_has_no_final_row(tmp_path) -> None:
    """Rows of a checkpoint along pretraining (`<cell>.step-N.parquet`) never stand in for the
    final one: a cell cut off after step 5 of 10 shows nothing in the aggregate, and
    `unfinished` says which steps it has."""
    from harness.results.leaderboard import FINAL, unfinished

    write_cell(tmp_path, "a", [row("a", "val_ppl", 50.0, step=10)])
    write_cell(tmp_path, "a.step-0000005", [row("a", "val_ppl", 80.0, step=5)])
    write_cell(tmp_path, "b.step-0000005", [row("b", "val_ppl", 70.0, step=5)])
    df = read_leaderboard(tmp_path)
    assert sorted(zip(df["model"], df[FINAL], strict=True)) == [
        ("a", False),
        ("a", True),
        ("b", False),
    ]
    assert list(final_rows(df)["value"]) == [50.0]
    assert list(aggregate(df)["model"]) == ["a"]
    assert unfinished(df) == {("b", "{}", 0, "validation", "val_ppl"): [5]}
    assert FINAL in read_leaderboard(tmp_path / "none").columns  # an empty folder's frame too


def test_a_file_written_before_a_column_existed_still_reads(tmp_path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from harness.results.schema import SCHEMA

    r = row("a", "val_loss", 2.0)
    old = pa.schema([f for f in SCHEMA if f.name != "negatives"])
    pq.write_table(
        pa.Table.from_pylist([{c: r[c] for c in old.names}], schema=old), tmp_path / "c.parquet"
    )
    df = read_leaderboard(tmp_path)
    assert list(df["value"]) == [2.0] and df["negatives"].isna().all()


def test_a_matched_budget_reads_the_checkpoint_it_picks_along_pretraining(tmp_path) -> None:
    from harness.results.budgets import at_budget

    write_cell(tmp_path, "a", [{**row("a", "val_ppl", 50.0, step=10), "tokens_seen": 1000}])
    write_cell(
        tmp_path, "a.step-0000005", [{**row("a", "val_ppl", 80.0, step=5), "tokens_seen": 500}]
    )
    df = read_leaderboard(tmp_path)
    assert list(aggregate(at_budget(df, "tokens", 500))["mean"]) == [80.0]
    assert list(aggregate(df)["mean"]) == [50.0]


def test_an_untrained_control_stands_at_every_budget(tmp_path) -> None:
    """The twin never trains: its step-0 rows are kept at any budget (and said unreached),
    so a comparison with it at 40M tokens is not lost; a run short of the budget is."""
    from harness.results.budgets import at_budget, budget_checkpoints

    write_cell(tmp_path, "t", [{**row("twin", "accuracy", 0.6, step=0), "tokens_seen": 0}])
    write_cell(tmp_path, "a", [{**row("a", "accuracy", 0.7, step=10), "tokens_seen": 1000}])
    write_cell(tmp_path, "s", [{**row("short", "accuracy", 0.8, step=2), "tokens_seen": 200}])
    df = read_leaderboard(tmp_path)
    assert sorted(at_budget(df, "tokens", 500)["model"]) == ["a", "twin"]
    seen = budget_checkpoints(df, "tokens", 500).set_index("model")["reached"].to_dict()
    assert seen == {"a": "yes", "twin": "untrained: at every budget", "short": "no"}


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("tokens=2e6x", r"--at tokens=2e6x: expected NAME=NUMBER, e.g. tokens=2e6"),
        ("tokens=0", r"--at tokens=0: the budget must be a finite number > 0"),
        ("seconds=nan", r"--at seconds=nan: the budget must be a finite number > 0"),
        ("tokenz=5", r"unknown budget 'tokenz'; did you mean 'tokens'"),
    ],
)
def test_a_bad_budget_is_refused_by_what_is_wrong(text: str, error: str) -> None:
    from harness.results.budgets import parse_budget
    from zoo.errors import UserError

    assert parse_budget("flops=1.5e15") == ("flops", 1.5e15)
    assert parse_budget("tokens=40.3M") == ("tokens", 40.3e6)  # as the tables print it
    with pytest.raises(UserError, match=error):
        parse_budget(text)
