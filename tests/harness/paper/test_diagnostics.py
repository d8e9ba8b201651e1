"""The diagnostics of the reproduction page (`harness.paper.diagnostics`): per sweep point,
the model's gate metrics beside its untrained twin's, and the points where every gate passed."""

from __future__ import annotations

import json

from harness.paper.diagnostics import DIAGNOSTICS, Diagnostic, diagnostic_sections
from harness.results.leaderboard import write_cell
from tests.harness.results.test_leaderboard import row

LR = "tasks.glue.lr"
PROBE = Diagnostic("probe", "Diagnostic: a probe", "Does the lr matter?", "bert-mini-ce", "glue")


def _cell(root, model: str, lr: float | None, sst2: float, pearson: float, tokens: int) -> None:
    """One GLUE cell (SST-2 and STS-B, with the majority rows their gates read) at `lr` (None:
    a suite without a sweep)."""
    values = [
        ("glue/sst2", "accuracy", sst2),
        ("glue/sst2", "majority", 0.5),
        ("glue/stsb", "pearson", pearson),
        ("glue/stsb", "majority", 0.0),
    ]
    cell = f"{model}-{round(lr * 1e5) if lr else 0}"  # no dot: a dot starts a step suffix
    rows = [
        {
            **row(model, metric, value, task=task),
            "suite": "probe",
            "cell_id": cell,
            "preset": "bert-mini",
            "tokens_seen": tokens,
            "sweep": json.dumps({LR: lr} if lr else {}),
            "hardware": "cpu x2: test",
        }
        for task, metric, value in values
    ]
    write_cell(root / "probe", cell, rows)


def test_each_point_sets_the_model_beside_its_twin(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("harness.paper.diagnostics.DIAGNOSTICS", (PROBE,))
    for lr, sst2 in ((3e-4, 0.80), (1e-4, 0.70)):
        _cell(tmp_path, "bert-mini-ce", lr, sst2, pearson=0.40, tokens=1000)
        _cell(tmp_path, "bert-mini-untrained", lr, 0.72, pearson=0.20, tokens=0)
    page = "\n".join(diagnostic_sections(tmp_path))
    assert "## Diagnostic: a probe" in page and "Does the lr matter?" in page
    assert "bert-mini-ce against its untrained twin bert-mini-untrained" in page
    # points in the order of their values; Δ is the model minus the twin
    low = "| lr 0.0001 | glue/sst2 | accuracy | 0.7 | 0.72 | -0.02 | 1 | failed (needs ≥ 0.77) |"
    high = "| lr 0.0003 | glue/sst2 | accuracy | 0.8 | 0.72 | 0.08 | 1 | passed |"
    assert low in page and high in page and page.index(low) < page.index(high)
    assert "| lr 0.0003 | glue/stsb | pearson | 0.4 | 0.2 | 0.2 | 1 | passed |" in page
    assert "bert-mini-ce passes every gate at 1 of 2 points (lr 0.0003)." in page
    assert "run on cpu x2: test" in page


def test_a_suite_without_a_sweep_is_one_point(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("harness.paper.diagnostics.DIAGNOSTICS", (PROBE,))
    _cell(tmp_path, "bert-mini-ce", None, 0.80, pearson=0.15, tokens=1000)
    _cell(tmp_path, "bert-mini-untrained", None, 0.72, pearson=0.20, tokens=0)
    page = "\n".join(diagnostic_sections(tmp_path))
    assert "| - | glue/sst2 | accuracy | 0.8 | 0.72 | 0.08 | 1 | passed |" in page
    assert "| - | glue/stsb | pearson | 0.15 | 0.2 | -0.05 | 1 | failed (needs ≥ 0.3) |" in page
    assert page.endswith("bert-mini-ce fails at least one gate.")


def test_a_diagnostic_without_rows_says_how_to_run_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr("harness.paper.diagnostics.DIAGNOSTICS", (PROBE,))
    page = "\n".join(diagnostic_sections(tmp_path))
    assert "No rows of bert-mini-ce committed yet: run `hlm run probe` and regenerate." in page


def test_every_diagnostic_has_a_shipped_suite_with_its_model() -> None:
    from pathlib import Path

    from harness.suite import load_suite

    root = Path(__file__).resolve().parents[3]
    for diag in DIAGNOSTICS:
        suite = load_suite(root / "suites" / f"{diag.suite}.yaml")
        assert diag.model in [m.label() for m in suite.models], diag.suite
        assert any(t.type == diag.task_type for t in suite.tasks), diag.suite


def test_a_point_is_labelled_by_its_parameter_and_value() -> None:
    from harness.paper.diagnostics import _point_label

    assert _point_label(json.dumps({LR: 3e-05})) == "lr 3e-05"
    assert _point_label(json.dumps({"tasks.glue.loss": "ce"})) == "loss ce"
    assert _point_label("{}") == "-"
