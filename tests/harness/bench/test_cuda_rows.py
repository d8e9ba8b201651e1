"""The CUDA benchmark's derived rows, on any machine: the step timings are stubbed, the
arithmetic that turns them into the MFU and speed-up rows is what is checked."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.bench import cuda


def test_the_larger_step_reports_the_faster_headless_steps_mfu(monkeypatch) -> None:
    best = {"vanilla": 0.030, "headless": 0.020, "headless-compiled": 0.010}  # seconds a step
    steppers = {k: SimpleNamespace(flops=2.0e12) for k in best}
    asked = {}

    def fake_step_rows(tag, preset, vocab, batch, seq, configs):
        asked.update(tag=tag, preset=preset, batch=batch, variants=sorted(configs))
        return [], best, steppers

    monkeypatch.setattr(cuda, "_step_rows", fake_step_rows)
    rows = {r.name: r.value for r in cuda.larger_step("bert-base", bf16_peak=800e12)}
    assert asked == {
        "tag": "cuda bert-base V=50k b=256 s=128 bf16",
        "preset": "bert-base",
        "batch": 256,
        "variants": ["headless", "headless-compiled", "vanilla"],
    }
    tag = "cuda bert-base V=50k b=256 s=128 bf16"
    # the compiled step is the faster: 2e12 FLOP in 10 ms = 200 TFLOP/s of 800
    assert rows[f"{tag}: headless MFU (bf16 roofline)"] == pytest.approx(0.25)
    assert rows[f"{tag}: headless speed-up over vanilla (eager)"] == pytest.approx(3.0)
