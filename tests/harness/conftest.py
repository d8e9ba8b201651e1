"""Harness fixtures: the tiny suite, and a tiny decoder checkpoint for lm-eval tests."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
TINY = HERE / "data" / "tiny.yaml"


@pytest.fixture(scope="session")
def tiny_decoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-step pythia-tiny (CE) checkpoint: a decoder lm-eval can load, in seconds."""
    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    return pretrain(
        PretrainConfig(
            preset="pythia-tiny",
            objective="ce",
            output_dir=str(tmp_path_factory.mktemp("tiny-decoder")),
            steps=2,
            batch_size=2,
            seq_len=32,
            vocab_size=400,
            corpus=["synthetic:100"],
            progress=False,
        )
    )
