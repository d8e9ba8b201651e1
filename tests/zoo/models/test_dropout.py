"""Fast CPU dropout masks: the right distribution, the right gradient, and models that train
with them and still save as plain Hugging Face checkpoints."""

from __future__ import annotations

import pytest
import torch
from torch.testing import assert_close

from zoo.models.dropout import BLOCK, fast_dropout, keep_mask


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_keep_mask_drops_with_probability_p_and_rescales(p: float) -> None:
    torch.manual_seed(0)
    keep, scale = keep_mask((1000, 1000), p)
    assert keep.dtype == torch.bool and keep.shape == (1000, 1000)
    dropped = 1 - float(keep.float().mean())
    sd = (p * (1 - p) / 1e6) ** 0.5
    assert abs(dropped - p) < 5 * sd + 2**-16
    p_real = 1 - 1 / scale
    assert abs(p_real - p) <= 2**-16  # the realised probability, scaled for exactly


def test_keep_mask_lanes_are_independent() -> None:
    """Four mask elements come from one 64-bit word: neighbours must not be correlated, and
    the fourth lane (whose top bit random_ leaves at 0) must drop as often as the others."""
    torch.manual_seed(1)
    p = 0.3
    keep, _ = keep_mask((4_000_000,), p)
    drop = (~keep).float().view(-1, 4)  # (words, lanes)
    sd = (p * (1 - p) / 1e6) ** 0.5
    for lane in range(4):
        assert abs(float(drop[:, lane].mean()) - p) < 5 * sd
    both = float((drop[:, :-1] * drop[:, 1:]).mean())  # neighbouring lanes dropped together
    assert abs(both - p * p) < 0.003


def test_keep_mask_edges_and_seed() -> None:
    assert bool(keep_mask((64,), 0.0)[0].all())
    keep, scale = keep_mask((64,), 1.0)
    assert not bool(keep.any()) and scale == 0.0
    torch.manual_seed(3)
    a = keep_mask((1000,), 0.2)[0]
    torch.manual_seed(3)
    assert torch.equal(a, keep_mask((1000,), 0.2)[0])  # torch.manual_seed reproduces it


def test_fast_dropout_value_and_gradient() -> None:
    x = torch.randn(64, 33, requires_grad=True)
    torch.manual_seed(5)
    y = fast_dropout(x, 0.25)
    torch.manual_seed(5)
    keep, scale = keep_mask(x.shape, 0.25)
    assert_close(y, x.detach() * keep * scale)
    (y * 2).sum().backward()
    assert x.grad is not None
    assert_close(x.grad, 2 * keep.float() * scale)
    assert fast_dropout(x, 0.25, training=False) is x  # evaluation: identity, like F.dropout
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fast_dropout(x, 1.5)


@pytest.mark.parametrize("n", [BLOCK - 3, 3 * BLOCK + 5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_blockwise_mask_is_the_same_draw_as_one_mask(n: int, dtype: torch.dtype) -> None:
    """fp32 masks are drawn and applied block by block; bf16 takes the boolean-mask path.
    Either way the draws are those of one `keep_mask` call (blocks that end mid-word too)."""
    x = torch.randn(n).to(dtype).requires_grad_()
    grad = torch.randn(n).to(dtype)
    torch.manual_seed(11)
    y = fast_dropout(x, 0.1)
    y.backward(grad)
    torch.manual_seed(11)
    keep, scale = keep_mask((n,), 0.1)
    assert y.dtype == dtype
    assert_close(y, (x.detach().float() * keep * scale).to(dtype))
    assert x.grad is not None
    assert_close(x.grad, (grad.float() * keep * scale).to(dtype))
    assert torch.equal(y == 0, ~keep | (x.detach() == 0))  # exactly the dropped elements


def test_fast_dropout_keeps_two_bytes_per_element_for_backward() -> None:
    x = torch.randn(4096, requires_grad=True)
    y = fast_dropout(x, 0.1)
    saved = y.grad_fn.saved_tensors  # type: ignore[union-attr]
    assert [(t.dtype, t.numel()) for t in saved] == [(torch.int16, 4096)]
