"""`hlm run --dry-run` says why each cell is to compute (`harness.run.why`)."""

from __future__ import annotations

import json
from pathlib import Path

from harness.results.leaderboard import write_cell
from harness.run.cells import expand
from harness.run.why import changed, reasons
from harness.suite import load_suite
from tests.harness.results.test_leaderboard import row

SUITE = "name: w\nmodels: [{preset: bert-tiny, objective: cwt}]\ntasks: [{type: validation}]\n"


def _cells(tmp_path: Path, text: str) -> list:
    path = tmp_path / "s.yaml"
    path.write_text(text)
    return expand(load_suite(path))


def test_each_cell_to_compute_says_why(tmp_path) -> None:
    board = tmp_path / "board"
    (first,) = _cells(tmp_path, SUITE + "recipe: {lr: 0.001}\n")
    config = {**first.config, "pretrain": first.pretrain.key_fields()}
    write_cell(board, first.cell_id, [{**row("m", "val_loss", 2.0), "config": json.dumps(config)}])
    two = "objective: cwt}, {preset: bert-tiny, objective: ce}]"
    edited = SUITE.replace("objective: cwt}]", two)
    edited += "recipe: {lr: 0.002}\n"
    cwt, ce = _cells(tmp_path, edited)
    why = reasons([cwt, ce], board, force=False)
    assert why[cwt.cell_id] == "key changed: the pretraining's settings (lr)"
    assert why[ce.cell_id].startswith("new: no row of this model")
    assert set(reasons([cwt], board, force=True).values()) == {"--force"}
    (board / f"{cwt.cell_id}.parquet").write_bytes(b"not parquet")
    assert reasons([cwt], board, force=False)[cwt.cell_id].startswith(
        "its result file does not read"
    )


def test_changed_names_files_and_dotted_settings() -> None:
    before = {"plugins": {"a.py": "1", "b.py": "2"}, "task": {"params": {"k": 1}}, "seed": 0}
    now = {"plugins": {"a.py": "1", "b.py": "3"}, "task": {"params": {"k": 2}}, "seed": 0}
    assert changed(before, now) == "plugins (b.py edited, added or removed), task.params.k"
    assert changed({"seed": 0, "objective_source": "x"}, {"seed": 0}) == (
        "a setting this version keys differently"
    )
