"""`attention: xformers` is refused on the CPU before anything is computed (its GPU parity
with SDPA is in tests/zoo/test_cuda.py, run with `pytest -m cuda`)."""

from __future__ import annotations

import pytest

from zoo.errors import UserError
from zoo.models.xformers_attention import check_xformers
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


def test_the_cpu_gets_a_clear_error_naming_the_alternative() -> None:
    with pytest.raises(
        UserError, match=r"^attention: xformers runs on CUDA only; on the cpu use sdpa"
    ):
        check_xformers("cpu")


def test_pretraining_refuses_it_before_computing_anything(tmp_path) -> None:
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cwt",
        output_dir=str(tmp_path / "r"),
        attention="xformers",
        device="cpu",
        corpus=["synthetic:100"],
        progress=False,
    )
    with pytest.raises(UserError, match=r"^attention: xformers runs on CUDA only"):
        pretrain(cfg)
    assert not (tmp_path / "r").exists()
