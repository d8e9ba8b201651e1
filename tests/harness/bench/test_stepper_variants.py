"""A benchmark `Variant` is a pretraining config stepped by the training loop's own step; its
compile settings reach the step: the CUDA-graphs variant compiles in torch.compile's
"reduce-overhead" mode and opens each step as a new graph generation."""

from __future__ import annotations

import json

import pytest
import torch
from pydantic import ValidationError

from harness.bench import stepper
from harness.bench.stepper import Stepper, Variant, variant
from zoo.errors import TrainingDiverged
from zoo.models import get_spec


def test_cuda_graphs_need_compile() -> None:
    with pytest.raises(ValueError, match="needs compile=True"):
        variant("cwt", cuda_graphs=True)


@pytest.mark.parametrize(
    ("graphs", "mode", "marks"), [(False, None, 0), (True, "reduce-overhead", 2)]
)
def test_the_compile_mode_and_the_step_marks(monkeypatch, graphs, mode, marks) -> None:
    modes: list[str | None] = []
    marked: list[int] = []

    def fake_compile(module, mode=None):  # the module eager: the settings are what is checked
        modes.append(mode)
        return module

    monkeypatch.setattr(stepper.torch, "compile", fake_compile)
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: marked.append(1))
    s = Stepper(get_spec("bert-tiny", 500), variant("cwt", compile=True, cuda_graphs=graphs), 2, 16)
    for _ in range(2):
        assert s.step() > 0
    assert modes == [mode]
    assert len(marked) == marks


def test_a_benchmark_step_is_the_training_loops_step(monkeypatch) -> None:
    """The stepper steps through `zoo.train.update.optimizer_step`, and the FLOPs it quotes for a
    step are the ones the loop counts for it."""
    called: list[object] = []
    loop_step = stepper.optimizer_step

    def recording(state, module, batches, guard):  # type: ignore[no-untyped-def]
        called.append(state)
        return loop_step(state, module, batches, guard)

    monkeypatch.setattr(stepper, "optimizer_step", recording)
    s = Stepper(get_spec("bert-tiny", 500), variant("cwt", sparse_embeddings=True), 2, 16)
    before = [p.detach().clone() for p in s.trainable]
    s.step()
    assert called == [s] and s.counters.step == 1
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, s.trainable, strict=True))
    torch.testing.assert_close(s.counters.flops, s.flops)


def test_a_variant_is_a_pretraining_config() -> None:
    """Settings go by `PretrainConfig`'s own names and ranges, and cross processes as JSON."""
    with pytest.raises(ValidationError, match="sparse"):
        variant("cwt", sparse=True)  # the field is sparse_embeddings
    with pytest.raises(ValidationError, match="chunk"):
        variant("cwt", loss={"chunk": 0})
    v = variant("ce", loss={"ce_impl": "chunked"}, prune_last_layer=False)
    back = Variant.from_json(json.loads(json.dumps(v.as_json())))
    assert back == v and back.config.loss.ce_impl == "chunked"
    assert v.changed(bf16=True).config.bf16 and not v.config.bf16


def test_a_non_finite_benchmark_step_stops_with_the_loops_error() -> None:
    s = Stepper(get_spec("bert-tiny", 500), variant("cwt"), 2, 16)
    nan = torch.tensor(float("nan"), requires_grad=True)
    s.module = lambda inputs, labels: {"loss": nan * 1.0}  # type: ignore[assignment]
    with pytest.raises(TrainingDiverged, match="step 1: loss nan"):
        s.step()
