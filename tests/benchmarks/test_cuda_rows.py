"""The CUDA benchmark's derived rows, on any machine: the step timings are stubbed, the
arithmetic that turns them into the MFU and speed-up rows is what is checked."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks import cuda


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
    assert rows[f"{tag}: speed-up of the faster headless step over eager vanilla"] == pytest.approx(
        3.0
    )


def _stub_steps(monkeypatch) -> list[tuple[str, int]]:
    """`_step_rows` stubbed: every variant 10 ms a step at 2 TFLOP; returns the calls made."""
    calls: list[tuple[str, int]] = []

    def fake_step_rows(tag, preset, vocab, batch, seq, configs):
        calls.append((preset, batch))
        st = {k: SimpleNamespace(flops=2.0e12) for k in configs}
        return [cuda.Row(f"{tag}: measured", 1.0, "ms")], {k: 0.010 for k in configs}, st

    monkeypatch.setattr(cuda, "_step_rows", fake_step_rows)
    return calls


def test_the_step_benchmark_derives_its_rows_in_order_and_the_larger_step_is_not_quick(
    monkeypatch,
) -> None:
    calls = _stub_steps(monkeypatch)
    names = [r.name for r in cuda.bench_steps(quick=False, bf16_peak=800e12)]
    # the table, the larger step, then the headless-sparse step at V = 8k and V = 120k
    bert = [batch for preset, batch in calls if preset == "bert-base"]
    assert bert == [64, 256, 256, 64, 64]
    mfu = [n for n in names if n.endswith("MFU (bf16 roofline)")]
    assert mfu == [
        "cuda bert-base V=50k b=64 s=128 bf16: headless MFU (bf16 roofline)",
        "cuda bert-base V=50k b=256 s=128 bf16: headless MFU (bf16 roofline)",
        "cuda bert-base V=50k b=256 s=128 bf16: headless-compiled-cuda-graphs MFU (bf16 roofline)",
        "cuda pythia-70m V=50k b=16 s=512 bf16: headless MFU (bf16 roofline)",
    ]
    assert names[-1] == "cuda bert-base headless-sparse step time V=120k / V=8k"
    quick_calls = _stub_steps(monkeypatch)
    cuda.bench_steps(quick=True, bf16_peak=800e12)
    assert all(batch != 256 for _, batch in quick_calls)


def test_a_cuda_graphs_step_that_fails_to_compile_leaves_the_rows_after_it(monkeypatch) -> None:
    def failing(tag, preset, vocab, batch, seq, configs):
        raise RuntimeError("BackendCompilerFailed: no graph")

    monkeypatch.setattr(cuda, "_step_rows", failing)
    (row,) = cuda.graphed_step("bert-base", bf16_peak=800e12)
    assert row.name == (
        "cuda bert-base V=50k b=256 s=128 bf16 headless-compiled-cuda-graphs: failed (RuntimeError)"
    )


def test_the_mfu_part_runs_the_goals_steps_first_and_once(monkeypatch) -> None:
    calls = _stub_steps(monkeypatch)
    monkeypatch.setattr(cuda.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cuda.torch.cuda, "get_device_name", lambda: "a stubbed GPU")
    monkeypatch.setattr(cuda, "mm_roofline", lambda dtype: 800e12)
    monkeypatch.setattr(cuda, "_externals", lambda: [])
    names = [r.name for r in cuda.run_cuda_bench(parts=("mfu",))]
    assert calls == [("bert-base", 256), ("bert-base", 256)]  # eager and compiled; graphs
    assert names[-1].endswith("headless-compiled-cuda-graphs MFU (bf16 roofline)")
    calls.clear()
    cuda.run_cuda_bench(parts=("steps", "mfu"))
    bert = [batch for preset, batch in calls if preset == "bert-base"]
    assert bert == [256, 256, 64, 64, 64]  # the goal's steps first, not again after the table


def test_a_cuda_graphs_step_reports_no_per_step_peak_memory(monkeypatch) -> None:
    """A replayed CUDA graph allocates nothing (its memory was taken at capture): its
    per-step peak would read as almost zero, so it gets an info row, not a MiB figure."""
    from harness.bench.stepper import variant

    configs = {
        "headless-compiled": variant("cwt", compile=True),
        "headless-compiled-cuda-graphs": variant("cwt", compile=True, cuda_graphs=True),
    }
    made = {
        k: SimpleNamespace(step=lambda: None, flops=2.0e12, variant=v) for k, v in configs.items()
    }
    monkeypatch.setattr(cuda, "steppers", lambda *a, **k: made)
    timing = SimpleNamespace(best=dict.fromkeys(configs, 0.010))
    monkeypatch.setattr(cuda, "interleaved", lambda *a, **k: timing)
    monkeypatch.setattr(cuda, "spread_row", lambda tag, t: cuda.Row(f"{tag}: spread", 1.0, "x"))
    monkeypatch.setattr(cuda, "cuda_peak_mb", lambda fn: 123.0)
    rows, _, _ = cuda._step_rows("t", "bert-base", 50_304, 256, 128, configs)
    memory = {r.name: (r.value, r.unit) for r in rows if "memory" in r.name}
    assert memory == {
        "t headless-compiled: peak memory of a step": (123.0, "MiB"),
        "t headless-compiled-cuda-graphs: peak memory of a step: not measured (CUDA graphs)": (
            0.0,
            "info",
        ),
    }
