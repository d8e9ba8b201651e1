"""The training step copies to the host once, whatever the number of micro-batches."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

import zoo.train.loop as loop
from tests.tiny import TINY_RUN
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


def _host_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, micro: int) -> int:
    """How many times the training step's own code brings tensors to the host (`float`,
    `int`, `item`, `tolist` called from `zoo/train/loop.py` inside `train_step`). The model's
    forward is left out: a pruned last layer needs its row count as a shape."""
    copies = 0
    inside = False
    for name in ("__float__", "__int__", "item", "tolist"):
        original = getattr(torch.Tensor, name)

        def counted(self: torch.Tensor, *a: object, _original: object = original) -> object:
            nonlocal copies
            copies += inside and sys._getframe(1).f_code.co_filename == loop.__file__
            return _original(self, *a)  # type: ignore[operator]

        monkeypatch.setattr(torch.Tensor, name, counted)
    step = loop.train_step

    def watched(*args: object) -> dict[str, float]:
        nonlocal inside
        inside = True
        try:
            return step(*args)  # type: ignore[arg-type]
        finally:
            inside = False

    monkeypatch.setattr(loop, "train_step", watched)
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cwt",
        output_dir=str(tmp_path / f"m{micro}"),
        steps=3,
        micro_batch_size=micro,
        **TINY_RUN,
    )
    pretrain(cfg)
    return copies


def test_micro_batches_add_no_host_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _host_copies(tmp_path, monkeypatch, micro=4)  # batch 4: one micro-batch a step
    split = _host_copies(tmp_path, monkeypatch, micro=1)  # four a step
    assert split == whole
    assert whole == 3  # one per step: the logged values and counts together
