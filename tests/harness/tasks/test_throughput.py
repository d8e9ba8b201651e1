"""The throughput task measures the cell's own step: its objective and loss options."""

from __future__ import annotations

from typing import ClassVar

import pytest
import torch

import harness.tasks.throughput_steps as throughput_steps
from harness.bench.stepper import Stepper, Variant, variant
from harness.tasks import TaskContext
from harness.tasks.throughput import ThroughputParams, run_throughput
from zoo.models import get_spec
from zoo.train.config import PretrainConfig


def test_throughput_uses_the_cells_loss_options(monkeypatch) -> None:
    seen: list[Variant] = []

    class Recording(Stepper):
        def __init__(self, spec, variant, *args, **kwargs):  # type: ignore[no-untyped-def]
            seen.append(variant)
            super().__init__(spec, variant, *args, **kwargs)

    monkeypatch.setattr(throughput_steps, "Stepper", Recording)
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cwt",
        output_dir="",
        vocab_size=300,
        batch_size=2,
        seq_len=16,
        loss={"duplicates": "mask", "chunk": 64},
        prune_last_layer=False,
        sparse_embeddings=True,
    )
    ctx = TaskContext(
        spec=get_spec("bert-tiny", 300),
        objective="cwt",
        pretrain=cfg,
        params=ThroughputParams(steps=1, warmup=0, memory=False),
        seed=0,
    )
    names = {r.metric for r in run_throughput(ctx)}
    assert {"tokens_per_s", "speedup_vs_baseline", "speedup_vs_hf"} <= names
    model, baseline, hf = (v.config for v in seen)
    assert seen[2].hf_default and hf.objective == "ce"  # Hugging Face's, as the paper times it
    assert (model.objective, model.loss.duplicates, model.loss.chunk) == ("cwt", "mask", 64)
    assert (baseline.objective, baseline.loss.chunk) == ("ce", 64)
    # the cell's other settings reach both of its steps; the twin updates its embeddings densely
    assert not model.prune_last_layer and not baseline.prune_last_layer
    assert model.sparse_embeddings and not baseline.sparse_embeddings


def _ctx(**params: object) -> TaskContext:
    cfg = PretrainConfig(
        preset="bert-tiny", objective="cwt", output_dir="", vocab_size=300, batch_size=2, seq_len=16
    )
    return TaskContext(
        spec=get_spec("bert-tiny", 300),
        objective="cwt",
        pretrain=cfg,
        params=ThroughputParams(**{"steps": 1, "warmup": 0, "memory": False, **params}),  # type: ignore[arg-type]
        seed=0,
    )


def test_cuda_only_measures_are_refused_on_the_cpu() -> None:
    import pytest
    import torch

    from zoo.errors import UserError

    with pytest.raises(UserError, match="max_batch finds the largest batch on CUDA only"):
        run_throughput(_ctx(max_batch=True, device="cpu"))
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="'cuda' asked for, but torch sees no CUDA device"):
            run_throughput(_ctx(device="cuda"))


def test_speedups_keep_each_rounds_ratio_as_a_sample(monkeypatch) -> None:
    step_seconds = {"cwt": iter([1.0, 1.0, 2.0]), "ce": iter([3.0, 2.0, 8.0])}

    class Timed:
        flops, n_params = 1e9, 10

        def __init__(self, spec, variant, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.objective = "hf" if variant.hf_default else variant.config.objective

        def step(self) -> float:
            return next(step_seconds[self.objective])

    class Flat:
        def __init__(self) -> None:
            self.samples: list[float] = []

        def sample(self) -> None:
            self.samples.append(1e12)

    monkeypatch.setattr(throughput_steps, "Stepper", Timed)
    monkeypatch.setattr(throughput_steps, "_roofline", lambda cuda: Flat())
    ctx = _ctx(hf_baseline=False, steps=3, device="cpu")
    got = {r.metric: r for r in run_throughput(ctx)}
    speedup = got["speedup_vs_baseline"]
    assert speedup.value == 3.0  # median 3 s over median 1 s
    assert speedup.samples == {"round-000": 3.0, "round-001": 2.0, "round-002": 4.0}
    assert got["step_ms"].samples == {"round-000": 1000.0, "round-001": 1000.0, "round-002": 2000.0}
    assert got["mfu"].value == 1e9 / 1.0 / 1e12  # the median step's FLOP/s over the roofline's
    # mfu: false samples no roofline (seconds of a CPU core each) and writes no mfu row
    monkeypatch.setattr(throughput_steps, "_roofline", lambda cuda: pytest.fail("sampled"))
    step_seconds.update({"cwt": iter([1.0] * 3), "ce": iter([2.0] * 3)})
    quick = {r.metric for r in run_throughput(_ctx(hf_baseline=False, steps=3, mfu=False))}
    assert "mfu" not in quick and "speedup_vs_baseline" in quick


class _FitsBelow:
    """A stand-in Stepper whose step runs out of CUDA memory from `limit` sequences on."""

    limit: ClassVar[int] = 0
    tried: ClassVar[list[int]] = []

    def __init__(self, spec, variant, batch, *args) -> None:  # type: ignore[no-untyped-def]
        self.batch = batch

    def step(self) -> None:
        _FitsBelow.tried.append(self.batch)
        if self.batch >= _FitsBelow.limit:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")


@pytest.mark.parametrize(
    ("fits_below", "start", "expected"),
    [(1000, 8, 999), (5, 8, 4), (1, 8, 0), (1 << 20, 8, (1 << 16) - 1)],
)
def test_largest_batch_doubles_then_bisects(monkeypatch, fits_below, start, expected) -> None:
    """The search the `max_batch` metric runs on a GPU, with out-of-memory simulated: it
    doubles from the cell's batch, bisects between the last fit and the first failure, and
    stays below the limit where cuDNN's attention refuses a batch."""
    monkeypatch.setattr(throughput_steps, "Stepper", _FitsBelow)
    _FitsBelow.limit, _FitsBelow.tried = fits_below, []
    spec = get_spec("bert-tiny", 300)
    got = throughput_steps.largest_batch(spec, variant("cwt"), 16, start)
    assert got == expected
    assert len(_FitsBelow.tried) <= 2 * 17  # doubling and bisection: logarithmic in the limit


def test_a_step_already_probed_in_this_process_is_not_probed_again(monkeypatch) -> None:
    """A ce cell's twin is its own step, a cwt cell's twin the ce cell's: two fresh
    interpreters for two cells, not four. Another run folder and pretraining key are the
    same step; another objective or batch is another."""
    calls: list[tuple[str, int]] = []

    def probing(kind, env, *, variant, batch, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((variant.config.objective, batch))
        return {"peak_mb": 100.0 + len(calls), "growth_mb": 10.0 * len(calls)}

    monkeypatch.setattr(throughput_steps, "probe", probing)
    monkeypatch.setattr(throughput_steps, "_MEASURED", {})

    def memory(objective: str, folder: str, batch: int = 2) -> dict[str, float]:
        cfg = PretrainConfig(
            preset="bert-tiny",
            objective=objective,
            output_dir=f"runs/{folder}",
            pretrain_key=folder,
            vocab_size=300,
        )
        ctx = TaskContext(
            spec=get_spec("bert-tiny", 300),
            objective=objective,
            pretrain=cfg,
            params=ThroughputParams(steps=1, warmup=0),
            seed=0,
        )
        variants = throughput_steps._variants(ctx, "ce", ctx.params, cuda=False)
        return {r.metric: r.value for r in throughput_steps._cpu_memory(ctx, variants, batch, 16)}

    ce = memory("ce", "a")
    assert calls == [("ce", 2)] and ce["memory_vs_baseline"] == 1.0
    cwt = memory("cwt", "b")
    assert calls == [("ce", 2), ("cwt", 2)]  # the twin's step is the ce cell's, probed
    assert cwt["memory_vs_baseline"] == 20.0 / 10.0 and cwt["peak_rss_mb"] == 102.0
    memory("cwt", "c", batch=4)
    assert calls[2:] == [("cwt", 4), ("ce", 4)]
