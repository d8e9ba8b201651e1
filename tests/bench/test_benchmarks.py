"""pytest-benchmark timings (marked `benchmark`; not in the default test command).

    .venv/bin/pytest -m benchmark --benchmark-enable tests/bench

Ratios against targets are `hlm bench`'s job; these give per-kernel distributions.
"""

from __future__ import annotations

import pytest
import torch

from harness.bench.stepper import Stepper, variant
from zoo.models import get_spec
from zoo.objectives import cwt_loss

pytestmark = pytest.mark.benchmark


@pytest.fixture(autouse=True)
def _ftz():
    from zoo.numerics import flush_denormal

    with flush_denormal(True):
        yield


@pytest.mark.parametrize("impl", ["plain", "chunked", "recompute", "torch"])
def test_cwt_loss_step(benchmark, impl: str) -> None:
    h = torch.randn(4096, 768).requires_grad_()
    e = (0.05 * torch.randn(4096, 768)).requires_grad_()

    def step() -> None:
        cwt_loss(h, e, impl=impl).backward()  # type: ignore[arg-type]

    benchmark.pedantic(step, rounds=3, warmup_rounds=1)


@pytest.mark.parametrize(
    ("name", "objective", "hf_default"),
    [("hf-default", "ce", True), ("vanilla", "ce", False), ("headless", "cwt", False)],
)
def test_bert_small_training_step(benchmark, name: str, objective: str, hf_default: bool) -> None:
    s = Stepper(get_spec("bert-small", 50_000), variant(objective, hf_default=hf_default), 8, 128)
    benchmark.pedantic(s.step, rounds=3, warmup_rounds=1)
