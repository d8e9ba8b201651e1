"""The chunked losses equal the plain ones (value and gradient), fp32 and under bf16 autocast."""

from __future__ import annotations

from typing import get_args

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from zoo.models import get_spec
from zoo.objectives import OBJECTIVES, LossOptions, cwt_loss
from zoo.objectives.chunked import chunked_linear_cross_entropy
from zoo.objectives.declared import CEImpl
from zoo.objectives.kernels import KERNELS
from zoo.train.step import TrainModule

# every kernel that runs on a CPU; the vendors' CUDA kernels: tests/zoo/test_cuda.py
IMPLS = [name for name, kernel in KERNELS.items() if kernel.vendor is None]


def _batch(k: int = 257, d: int = 24, vocab: int = 40, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(vocab, (k,), generator=g)  # many duplicates
    table = torch.randn(vocab, d, generator=g)
    h = torch.randn(k, d, generator=g, requires_grad=True)
    e = table[ids].clone().requires_grad_(True)
    return h, e, ids


# a kernel without a column mask (torch's) refuses duplicates="mask": tested below
CASES = [
    (i, d) for i in IMPLS for d in ("keep", "mask", "unique") if KERNELS.get(i).masks or d != "mask"
]


@pytest.mark.parametrize(("impl", "duplicates"), CASES)
def test_chunked_cwt_equals_plain(impl: str, duplicates: str) -> None:
    h, e, ids = _batch()
    plain = cwt_loss(h, e, 0.7, duplicates=duplicates, target_ids=ids, impl="plain")
    gh, ge = torch.autograd.grad(plain, [h, e])
    out = cwt_loss(h, e, 0.7, duplicates=duplicates, target_ids=ids, impl=impl, chunk=50)
    ch, ce = torch.autograd.grad(out, [h, e])
    assert_close(out, plain, rtol=1e-5, atol=1e-5)
    assert_close(ch, gh, rtol=1e-5, atol=1e-5)
    assert_close(ce, ge, rtol=1e-5, atol=1e-5)


def test_torch_impl_rejects_mask() -> None:
    h, e, ids = _batch()
    with pytest.raises(ValueError, match="does not support duplicates='mask'"):
        cwt_loss(h, e, duplicates="mask", target_ids=ids, impl="torch")


@pytest.mark.parametrize("score_dtype", ["autocast", "fp32"])
@pytest.mark.parametrize("impl", ["chunked", "recompute"])
def test_chunked_under_bf16_autocast_multiplies_as_plain_does(impl: str, score_dtype: str) -> None:
    """bf16 products (or fp32 ones) as the plain loss's, the softmax and sums in fp32."""
    h, e, _ = _batch(k=300, d=32)
    hb, eb = h.detach().bfloat16().requires_grad_(), e.detach().bfloat16().requires_grad_()
    hp, ep = h.detach().bfloat16().requires_grad_(), e.detach().bfloat16().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = cwt_loss(hb, eb, impl=impl, chunk=64, score_dtype=score_dtype)  # type: ignore[arg-type]
        plain = cwt_loss(hp, ep, impl="plain", score_dtype=score_dtype)  # type: ignore[arg-type]
    assert out.dtype == torch.float32
    assert_close(out, plain, rtol=1e-6, atol=1e-6)
    gh, ge = torch.autograd.grad(out, [hb, eb])
    ph, pe = torch.autograd.grad(plain, [hp, ep])
    assert gh.dtype == ge.dtype == torch.bfloat16
    assert_close(gh, ph, rtol=2e-2, atol=1e-4)  # one bf16 rounding of the gradients apart
    assert_close(ge, pe, rtol=2e-2, atol=1e-4)
    fp32 = cwt_loss(hb.detach().float(), eb.detach().float())  # no autocast: fp32 throughout
    if score_dtype == "fp32":
        assert_close(out, fp32, rtol=1e-6, atol=0)
    else:  # the bf16 scores are a different computation, close to the fp32 one
        assert (out - fp32).abs() > 1e-5
        assert_close(out, fp32, rtol=1e-2, atol=0)


@pytest.mark.parametrize("score_dtype", ["autocast", "fp32"])
@pytest.mark.parametrize("impl", ["plain", "chunked"])
def test_vanilla_ce_under_bf16_autocast_multiplies_in_score_dtype(
    impl: str, score_dtype: str
) -> None:
    spec = get_spec("bert-tiny", vocab_size=500)
    torch.manual_seed(0)
    model = spec.build().eval()
    ids = torch.randint(5, 500, (2, 32))
    labels = torch.full_like(ids, -100)
    labels[:, ::3] = ids[:, ::3]
    step = TrainModule(
        model,
        spec,
        OBJECTIVES.get("ce"),
        LossOptions(ce_impl=impl, chunk=4, score_dtype=score_dtype),  # type: ignore[arg-type]
    )
    fp32 = step(ids, labels)["loss"].detach()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = step(ids, labels)["loss"].detach()
        base = TrainModule(model, spec, OBJECTIVES.get("ce"), LossOptions())(ids, labels)
    assert out.dtype == torch.float32
    assert_close(out, fp32, rtol=2e-2, atol=0)  # the body runs in bf16 either way
    if score_dtype == "autocast":  # the kernel's bf16 logits are the plain head's
        assert_close(out, base["loss"].detach(), rtol=1e-4, atol=0)
    else:  # fp32 logits of the same bf16 body: not the bf16 ones
        assert (out - base["loss"].detach()).abs() > 1e-6


def test_auto_selects_chunked_above_threshold(monkeypatch) -> None:
    import zoo.objectives.chunked as chunked_mod
    import zoo.objectives.cwt as cwt_mod

    calls = []  # the chunked kernel's `recompute` at each call
    original = chunked_mod.chunked_linear_cross_entropy

    def spy(*args, **kwargs):
        calls.append(kwargs["recompute"])
        return original(*args, **kwargs)

    monkeypatch.setattr(chunked_mod, "chunked_linear_cross_entropy", spy)
    monkeypatch.setattr(cwt_mod, "AUTO_CHUNK_ABOVE", 100)
    h, e, _ = _batch(k=50)
    cwt_loss(h, e)
    assert calls == []
    h, e, _ = _batch(k=150)
    cwt_loss(h, e)
    assert calls == [False]  # "chunked", not "recompute"


@pytest.mark.parametrize("recompute", [False, True])
def test_chunked_linear_ce_with_bias_equals_cross_entropy(recompute: bool) -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(90, 16, generator=g, requires_grad=True)
    w = torch.randn(300, 16, generator=g, requires_grad=True)
    b = torch.randn(300, generator=g, requires_grad=True)
    t = torch.randint(300, (90,), generator=g)
    ref = F.cross_entropy(x @ w.T + b, t)
    out = chunked_linear_cross_entropy(x, w, t, bias=b, chunk=32, recompute=recompute)
    assert_close(out, ref, rtol=1e-5, atol=1e-5)
    for a, r in zip(
        torch.autograd.grad(out, [x, w, b]), torch.autograd.grad(ref, [x, w, b]), strict=True
    ):
        assert_close(a, r, rtol=1e-5, atol=1e-6)


# every kernel vanilla CE accepts that runs on a CPU
CE_IMPLS = [i for i in get_args(CEImpl) if i != "plain" and KERNELS.get(i).vendor is None]


@pytest.mark.parametrize("ce_impl", CE_IMPLS)
def test_vanilla_ce_impls_equal_plain_in_the_model(ce_impl: str) -> None:
    torch.manual_seed(0)
    spec = get_spec("bert-tiny", vocab_size=500)
    model = spec.build().eval()
    ids = torch.randint(5, 500, (2, 32))
    labels = torch.full_like(ids, -100)
    labels[:, ::5] = ids[:, ::5]
    losses = {}
    grads = {}
    for impl in ("plain", ce_impl):
        model.zero_grad()
        out = TrainModule(model, spec, OBJECTIVES.get("ce"), LossOptions(ce_impl=impl, chunk=4))(
            ids, labels
        )["loss"]
        out.backward()
        losses[impl] = out.detach()
        grads[impl] = model.get_input_embeddings().weight.grad.clone()
    assert_close(losses[ce_impl], losses["plain"], rtol=1e-5, atol=1e-5)
    assert_close(grads[ce_impl], grads["plain"], rtol=1e-4, atol=1e-6)
