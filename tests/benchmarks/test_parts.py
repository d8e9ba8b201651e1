"""The repository's own benchmark parts: the machine's rows, the loss kernels' rows."""

from __future__ import annotations

import torch

from benchmarks import losses
from benchmarks.machine import copy_bandwidth, machine_rows


def test_machine_rows_open_the_table() -> None:
    rows = machine_rows()
    assert rows[0].name.startswith("machine: ") and f"torch {torch.__version__}" in rows[0].name
    assert rows[0].value >= 1 and rows[0].status == "INFO"
    assert rows[1].unit == "GB/s" and rows[1].value > 0.1  # any machine copies faster
    assert copy_bandwidth(mib=4, reps=1) > 0


def test_the_score_dtype_rows_time_the_chunked_loss_under_bf16_autocast(monkeypatch) -> None:
    seen = []

    def spy(h: torch.Tensor, e: torch.Tensor, **kw: object) -> torch.Tensor:
        seen.append((torch.is_autocast_enabled("cpu"), kw["score_dtype"], kw["impl"]))
        return (h[:4] * e[:4]).sum()

    monkeypatch.setattr(losses, "cwt_loss", spy)
    rows = losses._score_dtype_rows(quick=True)
    assert set(seen) == {(True, "autocast", "chunked"), (True, "fp32", "chunked")}
    bf16, fp32, ratio = rows
    assert "bf16 products" in bf16.name and "fp32 products" in fp32.name
    assert ratio.value == fp32.value / bf16.value and ratio.status == "INFO"
    losses.loss_step(8, 4, "plain")()  # without a score_dtype: no autocast
    assert seen[-1] == (False, "autocast", "plain")


def test_the_bf16_part_times_each_ladder_model_in_both_precisions_side_by_side(
    monkeypatch,
) -> None:
    """Each model's ce and cwt steps, fp32 and bf16, in one round-robin; tokens/s and bf16's
    speed over fp32 come from the same best times."""
    from types import SimpleNamespace

    from benchmarks import bf16

    rounds = []

    def fake_timed(st: dict, peak: object, reps: int) -> SimpleNamespace:
        rounds.append({name: (s.spec.name, s.cfg.objective, s.cfg.bf16) for name, s in st.items()})
        return SimpleNamespace(
            best={"ce fp32": 2.0, "cwt fp32": 1.0, "ce bf16": 4.0, "cwt bf16": 0.5}
        )

    monkeypatch.setattr(bf16, "timed", fake_timed)
    rows = bf16.bf16_model_rows("modernbert-tiny", batch=2, reps=1, peak=None)
    assert rounds == [
        {
            "ce fp32": ("modernbert-tiny", "ce", False),
            "cwt fp32": ("modernbert-tiny", "cwt", False),
            "ce bf16": ("modernbert-tiny", "ce", True),
            "cwt bf16": ("modernbert-tiny", "cwt", True),
        }
    ]
    values = {r.name.split(" s=128 ")[1]: r.value for r in rows}
    assert values == {
        "ce fp32: tokens/s": 2 * 128 / 2.0,
        "ce bf16: tokens/s": 2 * 128 / 4.0,
        "ce: bf16 autocast speed-up over fp32": 0.5,  # slower: emulated bf16
        "cwt fp32: tokens/s": 2 * 128 / 1.0,
        "cwt bf16: tokens/s": 2 * 128 / 0.5,
        "cwt: bf16 autocast speed-up over fp32": 2.0,
    }
    assert {r.status for r in rows} == {"INFO"}
