"""Figures: one line per model, never merged across models that share an objective."""

from __future__ import annotations

import json

import pandas as pd

from harness.plots import make_plots, sweep_series
from tests.harness.test_leaderboard import row


def _sweep_rows() -> pd.DataFrame:
    rows = []
    for model, values in (("cwt", (9.0, 8.0)), ("cwt+FT", (5.5, 5.0))):
        for batch, value in zip((16, 32), values, strict=True):
            r = row(model, "val_ppl", value, step=100)
            r.update(
                objective="cwt", sweep=json.dumps({"batch_size": batch}), cell_id=f"{model}{batch}"
            )
            rows.append(r)
    return pd.DataFrame(rows)


def test_sweep_lines_are_per_model(tmp_path) -> None:
    series = sweep_series(_sweep_rows(), "batch_size", "val_ppl")
    assert set(series) == {"cwt", "cwt+FT"}  # was one "cwt" line at 7.25 ± 2.47
    assert list(series["cwt"]["mean"]) == [9.0, 8.0] and list(series["cwt+FT"]["mean"]) == [
        5.5,
        5.0,
    ]
    assert (tmp_path / "sweep-batch_size.png") in make_plots(_sweep_rows(), tmp_path)
