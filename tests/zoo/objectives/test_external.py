"""The vendors' CUDA kernels (cce, liger) on a machine that cannot run them: a clear error that
names the key, before anything is computed or written. Their numbers are checked on a GPU by
tests/zoo/test_cuda.py (`pytest -m cuda`)."""

from __future__ import annotations

import pytest
import torch

from zoo.errors import UserError
from zoo.objectives import cwt_loss
from zoo.objectives.external import cce_linear_cross_entropy, liger_linear_cross_entropy
from zoo.objectives.kernels import KERNELS
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


@pytest.mark.parametrize("kind", ["cce", "liger"])
def test_cpu_tensors_are_refused_with_a_pointer_to_chunked(kind: str) -> None:
    x, w = torch.randn(4, 8), torch.randn(10, 8)
    fn = {"cce": cce_linear_cross_entropy, "liger": liger_linear_cross_entropy}[kind]
    with pytest.raises(UserError, match=r"CUDA only.*chunked"):
        fn(x, w, torch.arange(4))
    with pytest.raises(UserError, match=r"CUDA only.*chunked"):
        KERNELS.get(kind)(x, w, torch.arange(4))
    with pytest.raises(UserError, match=r"CUDA only.*chunked"):
        cwt_loss(x, torch.randn(4, 8), impl=kind)  # type: ignore[arg-type]
    with pytest.raises(UserError, match=r"^ce_impl: .*CUDA only.*chunked"):
        KERNELS.get(kind).check_device("cpu", "ce_impl")
    assert not KERNELS.get(kind).available("cpu")


def test_mask_duplicates_are_refused_by_the_vendor_impls() -> None:
    ids = torch.tensor([1, 1, 2, 3])
    with pytest.raises(ValueError, match="duplicates='mask'"):
        cwt_loss(
            torch.randn(4, 8), torch.randn(4, 8), duplicates="mask", target_ids=ids, impl="cce"
        )


@pytest.mark.parametrize(("key", "impl"), [("ce_impl", "cce"), ("cwt_impl", "liger")])
def test_pretraining_refuses_them_before_computing_anything(tmp_path, key: str, impl: str) -> None:
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="ce+cwt",
        output_dir=str(tmp_path / "run"),
        steps=2,
        corpus=["synthetic:400"],
        progress=False,
        device="cpu",
        loss={key: impl},
    )
    with pytest.raises(UserError, match=f"^loss.{key}: "):
        pretrain(cfg)
    assert not (tmp_path / "run").exists()  # nothing written, no tokenizer trained
