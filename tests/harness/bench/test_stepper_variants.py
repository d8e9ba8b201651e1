"""A benchmark `Variant`'s compile settings reach the step: the CUDA-graphs variant compiles
in torch.compile's "reduce-overhead" mode and opens each step as a new graph generation."""

from __future__ import annotations

import pytest
import torch

from harness.bench import stepper
from harness.bench.stepper import Stepper, Variant
from zoo.models import get_spec


def test_cuda_graphs_need_compile() -> None:
    with pytest.raises(ValueError, match="needs compile=True"):
        Variant("cwt", cuda_graphs=True)


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
    s = Stepper(get_spec("bert-tiny", 500), Variant("cwt", compile=True, cuda_graphs=graphs), 2, 16)
    for _ in range(2):
        assert s.step() > 0
    assert modes == [mode]
    assert len(marked) == marks
