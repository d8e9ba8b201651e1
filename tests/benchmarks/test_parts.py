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
