"""Harness fixtures: the tiny suite, and tiny decoder (vanilla, headless) / encoder checkpoints
for task tests."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
TINY = HERE / "data" / "tiny.yaml"


def _two_steps(folder: Path, preset: str, objective: str) -> Path:
    """A 2-step checkpoint of `preset` on the synthetic corpus, written under `folder`."""
    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    return pretrain(
        PretrainConfig(
            preset=preset,
            objective=objective,
            output_dir=str(folder),
            steps=2,
            batch_size=2,
            seq_len=32,
            vocab_size=400,
            corpus=["synthetic:100"],
            progress=False,
        )
    )


@pytest.fixture(scope="session")
def tiny_decoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-step pythia-tiny (CE) checkpoint: a decoder lm-eval can load, in seconds."""
    return _two_steps(tmp_path_factory.mktemp("tiny-decoder"), "pythia-tiny", "ce")


@pytest.fixture(scope="session")
def tiny_headless_decoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-step pythia-tiny (CWT) checkpoint: a decoder `hlm finetune-causal` takes."""
    return _two_steps(tmp_path_factory.mktemp("tiny-headless-decoder"), "pythia-tiny", "cwt")


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 2-step bert-tiny (CWT) checkpoint: an encoder a classifier can be fine-tuned from."""
    return _two_steps(tmp_path_factory.mktemp("tiny-encoder"), "bert-tiny", "cwt")
