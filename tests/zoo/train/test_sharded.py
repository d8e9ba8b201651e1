"""A training-state save that fails: a full disk is one line (exit 2) with the last good
checkpoint kept and no half folder; any other failure is an ordinary error, never DCP's
BaseException."""

from __future__ import annotations

import shutil
from collections import namedtuple
from pathlib import Path

import pytest
from torch.distributed.checkpoint.api import CheckpointException

import zoo.train.sharded as sharded
from tests.tiny import TINY_RUN
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain
from zoo.writer import WriteRefused

Usage = namedtuple("Usage", "total used free")


def _failing_save(after: int, error: Exception):
    """`dcp.save` that works `after` times, then fails as a short write does."""
    calls = {"n": 0}
    real = sharded.dcp.save

    def save(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] > after:
            raise CheckpointException("save failed", {0: (error, None)})
        return real(*args, **kwargs)

    return save


def _run(tmp_path: Path) -> PretrainConfig:
    return PretrainConfig(
        preset="bert-tiny",
        objective="ce",
        output_dir=str(tmp_path / "r"),
        steps=6,
        save_every=2,
        warmup_steps=1,
        **TINY_RUN,
    )


def test_a_full_disk_is_one_line_and_keeps_the_last_good_checkpoint(tmp_path, monkeypatch):
    short = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 704 vs 598")
    monkeypatch.setattr(sharded.dcp, "save", _failing_save(1, short))
    monkeypatch.setattr(shutil, "disk_usage", lambda _: Usage(10**9, 10**9, 0))
    with pytest.raises(WriteRefused, match="no space left on the device"):
        pretrain(_run(tmp_path))
    left = sorted(p.name for p in (tmp_path / "r" / "checkpoints").iterdir())
    assert left == ["step-0000002"]  # the first save, whole; the failed one's folder gone


def test_an_enospc_inside_dcp_is_a_full_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(sharded.dcp, "save", _failing_save(0, OSError(28, "No space left")))
    with pytest.raises(WriteRefused, match="no space left"):
        pretrain(_run(tmp_path))


def test_another_save_failure_is_an_ordinary_error(tmp_path, monkeypatch):
    monkeypatch.setattr(sharded.dcp, "save", _failing_save(0, ValueError("odd")))
    with pytest.raises(RuntimeError, match="saving the training state failed: odd"):
        pretrain(_run(tmp_path))
    assert not list((tmp_path / "r" / "checkpoints").glob(".tmp-*"))
