"""The leaderboard's marks: a test's label counts what it tested in the metric's own unit:
seeds, or the measurements of a cell that pretrains nothing; with one seed per arm, the kept
samples (examples, evaluation batches, measured rounds)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from harness.report.view import footnote
from harness.results.leaderboard import aggregate, read_leaderboard, write_cell
from harness.results.significance import compare_to_baseline
from tests.harness.results.test_leaderboard import row


def _one_seed(tmp_path: Path, metric: str, task: str, values: dict[str, list[float]]) -> str:
    """The test label of `new` against `base`, one seed each, `values` kept per sample."""
    samples = []
    for model, kept in values.items():
        r = row(model, metric, sum(kept) / len(kept), 0, task=task)
        write_cell(tmp_path, f"{model}-{metric}", [r])
        samples += [
            {"model": model, "sweep": "{}", "task": task, "metric": metric, "seed": 0,
             "step": 10, "cell_id": f"{model}-{metric}", "key": f"round-{i:03d}", "value": v}
            for i, v in enumerate(kept)
        ]  # fmt: skip
    agg = aggregate(read_leaderboard(tmp_path))
    cmp = compare_to_baseline(agg, "base", pd.DataFrame(samples)).set_index("model")
    return str(cmp.loc["new", "test"])


def test_a_speed_timed_round_by_round_is_tested_over_measured_rounds(tmp_path: Path) -> None:
    rounds = {"base": [1.0, 1.0, 1.0, 1.0, 1.0], "new": [1.3, 1.2, 1.4, 1.25, 1.35]}
    test = _one_seed(tmp_path / "speed", "speedup_vs_baseline", "throughput", rounds)
    assert "over 5 measured rounds" in test and "(one pretraining seed)" in test
    test = _one_seed(tmp_path / "ms", "step_ms", "throughput", rounds)
    assert "over 5 measured rounds" in test
    scores = {"base": [0.0, 1.0, 1.0, 0.0, 1.0, 0.0], "new": [1.0, 1.0, 1.0, 0.0, 1.0, 1.0]}
    test = _one_seed(tmp_path / "acc", "accuracy", "glue/sst2", scores)
    assert "over 6 examples" in test


def test_a_speed_over_seeds_is_tested_over_measurements_and_the_footnote_says_why(
    tmp_path: Path,
) -> None:
    """A throughput cell pretrains nothing: its seed indexes one measurement, and the label
    and footnote say so; a quality metric's seeds stay pretraining seeds."""
    for seed, (base, new) in enumerate([(100.0, 110.0), (102.0, 115.0), (99.0, 112.0)]):
        for model, value in (("base", base), ("new", new)):
            for metric, task in (("tokens_per_s", "throughput"), ("accuracy", "glue/sst2")):
                r = row(model, metric, value / 1000 if metric == "accuracy" else value, seed)
                r.update(task=task, cell_id=f"{model}-{seed}-{metric}")
                write_cell(tmp_path, f"{model}-{seed}-{metric}", [r])
    agg = compare_to_baseline(aggregate(read_leaderboard(tmp_path)), "base")
    tests = dict(zip(agg["metric"], agg["test"], strict=True))
    assert tests["tokens_per_s"] == "paired t-test over 3 measurements"
    assert tests["accuracy"] == "paired t-test over 3 seeds"
    speed, quality = agg[agg["task"] == "throughput"], agg[agg["task"] == "glue/sst2"]
    assert "its seed's value is one measurement" in footnote(speed, "base", 2)
    assert "measurement" not in footnote(quality, "base", 2)
