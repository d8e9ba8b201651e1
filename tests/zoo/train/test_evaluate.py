"""Validation measures of `zoo.train.evaluate`: which predictions `context_gains` compares."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch
from torch import Tensor, nn

from zoo.data.batches import IGNORE
from zoo.train.evaluate import EARLY_POSITIONS, context_gains

T = 64


class PositionLoss(nn.Module):
    """A stand-in for a train module whose loss at position t is `per_position[t]`: the mean
    over the labelled positions, as the CE objective's mean is."""

    def __init__(self, per_position: Tensor, kind: str = "decoder") -> None:
        super().__init__()
        self.model = nn.Linear(1, 1)
        emb = nn.Embedding(4, 2)
        self.spec = SimpleNamespace(kind=kind, input_embeddings=lambda _model: emb)
        self.per_position = per_position  # (T,)

    def forward(self, inputs: Tensor, labels: Tensor, objective: Any = None) -> dict[str, Tensor]:
        kept = labels != IGNORE  # (B, T)
        values = self.per_position.expand_as(labels.float())  # (B, T)
        return {"loss": values[kept].mean()}


def test_the_gain_is_the_early_windows_loss_minus_the_second_halfs() -> None:
    per_position = 1.0 / torch.arange(1, T + 1, dtype=torch.float)  # falls with context
    step = PositionLoss(per_position)
    blocks = torch.zeros(6, T, dtype=torch.long)
    gains = context_gains(step, blocks, batch_size=2, max_batches=2)  # type: ignore[arg-type]
    early = per_position[:EARLY_POSITIONS].mean()
    late = per_position[T // 2 : T - 1].mean()  # the last position predicts nothing
    assert gains == pytest.approx([float(early - late)] * 2)
    flat = context_gains(PositionLoss(torch.ones(T)), blocks, 2, 1)  # type: ignore[arg-type]
    assert flat == [0.0]  # a model that ignores its context gains nothing


def test_encoders_and_short_blocks_are_refused() -> None:
    blocks = torch.zeros(2, T, dtype=torch.long)
    with pytest.raises(ValueError, match="decoders only"):
        context_gains(PositionLoss(torch.ones(T), "encoder"), blocks, 2, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs 64"):
        context_gains(PositionLoss(torch.ones(32)), blocks[:, :32], 2, 1)  # type: ignore[arg-type]
