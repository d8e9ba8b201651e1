"""Faster dropout masks on the CPU, for training: the same distribution, fewer random draws.

torch's CPU dropout draws its mask with `bernoulli_`, one generator call per element, for
the 9 hidden-state and 4 attention-probability dropouts of a bert-small step; `hlm bench`
measures a headless step 1.1x faster with the masks below. Here one 64-bit draw
(`random_` on int64, from torch's default generator, so `torch.manual_seed` reproduces it)
gives four 15-bit lanes, and an element is kept when its lane is >= round(p * 2^15): the drop
probability is p to within 2^-16, and kept values are scaled by 1 / (1 - that probability),
so the expectation is unchanged. Backward multiplies by the same saved boolean mask
(`native_dropout_backward`, as torch's own dropout does).

`use_fast_dropout(model)` swaps the model's `nn.Dropout` modules for `FastDropout` and points
its attention at ``hlm_sdpa``: SDPA whenever attention dropout is off (evaluation, or
p = 0), otherwise the eager attention of the Hugging Face models with the fast mask (torch's
CPU SDPA falls back to its math path with `bernoulli_` masks whenever dropout_p > 0). On
CUDA both defer to torch (its fused dropout already draws Philox numbers in the kernel).

Nothing of this reaches a checkpoint: dropout has no weights and `config.json` does not record
the attention implementation, so a saved model loads as the plain Hugging Face class.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from transformers.integrations.sdpa_attention import sdpa_attention_forward

ATTENTION = "hlm_sdpa"
_LANE_BITS = 15  # each int64 draw is 63 random bits (random_ keeps int64 non-negative)


def keep_mask(shape: torch.Size | tuple[int, ...], p: float) -> tuple[Tensor, float]:
    """A boolean keep-mask of `shape` (each element kept with probability ~1 - p) on the CPU,
    and the scale 1 / (1 - p') that keeps the expectation, p' being the realised probability."""
    threshold = round(p * (1 << _LANE_BITS))
    if threshold >= 1 << _LANE_BITS:  # p ~ 1 (and beyond int16's range): drop everything
        return torch.zeros(shape, dtype=torch.bool), 0.0
    n = 1
    for s in shape:
        n *= s
    words = torch.empty((n + 3) // 4, dtype=torch.int64).random_()  # 63 random bits each
    lanes = words.view(torch.int16)[:n]  # (n,) four lanes per word
    keep = lanes.bitwise_and_((1 << _LANE_BITS) - 1) >= threshold  # lane's top bit dropped
    p_real = threshold / (1 << _LANE_BITS)
    return keep.view(shape), 1.0 / (1.0 - p_real)


class _FastDropout(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, p: float) -> Tensor:
        keep, scale = keep_mask(x.shape, p)
        ctx.save_for_backward(keep)
        ctx.scale = scale
        return torch.ops.aten.native_dropout_backward(x, keep, scale)  # x * keep * scale

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        (keep,) = ctx.saved_tensors
        return torch.ops.aten.native_dropout_backward(grad, keep, ctx.scale), None


def fast_dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """`F.dropout(x, p, training)` with the cheap mask on the CPU; torch's dropout elsewhere."""
    if not training or p == 0.0 or x.device.type != "cpu":
        return F.dropout(x, p, training)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    return _FastDropout.apply(x, p)


class FastDropout(nn.Dropout):
    """`nn.Dropout` whose CPU training mask comes from `keep_mask`."""

    def forward(self, x: Tensor) -> Tensor:
        return fast_dropout(x, self.p, self.training)


def fast_dropout_attention(
    module: nn.Module,
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attention_mask: Tensor | None,
    dropout: float = 0.0,
    scaling: float | None = None,
    is_causal: bool | None = None,
    **kwargs: Any,
) -> tuple[Tensor, None]:
    """Hugging Face attention interface: q, k, v (B, H, T, d) -> (B, T, H, d).

    SDPA when no dropout is drawn; with attention dropout on the CPU, softmax(q k^T * scaling
    + mask) with the fast mask, then @ v (what SDPA's math path computes)."""
    if dropout == 0.0 or query.device.type != "cpu":
        return sdpa_attention_forward(  # type: ignore[no-any-return]
            module, query, key, value, attention_mask, dropout, scaling, is_causal, **kwargs
        )
    if key.shape[1] != query.shape[1]:  # grouped-query attention: repeat the kv heads
        reps = query.shape[1] // key.shape[1]
        key, value = key.repeat_interleave(reps, 1), value.repeat_interleave(reps, 1)
    scores = torch.matmul(query, key.transpose(-1, -2))  # (B, H, Tq, Tk)
    scores.mul_(scaling if scaling is not None else query.shape[-1] ** -0.5)
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", False)
    if attention_mask is None and causal and query.shape[2] > 1:
        tq, tk = query.shape[2], key.shape[2]
        attention_mask = torch.ones(tq, tk, dtype=torch.bool).tril(tk - tq)  # (Tq, Tk)
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:  # True = attend (sdpa_mask's format)
            scores = scores.masked_fill(~attention_mask, torch.finfo(scores.dtype).min)
        else:
            scores = scores + attention_mask
    probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    probs = fast_dropout(probs, dropout, training=True)
    out = torch.matmul(probs, value)  # (B, H, Tq, d)
    return out.transpose(1, 2).contiguous(), None


def register_fast_attention() -> None:
    """Make ``hlm_sdpa`` known to transformers (attention and mask interfaces); idempotent."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTENTION, fast_dropout_attention)
    AttentionMaskInterface.register(ATTENTION, sdpa_mask)


def use_fast_dropout(model: nn.Module) -> int:
    """Swap every `nn.Dropout` of `model` for `FastDropout` and, for a Hugging Face model whose
    attention is SDPA, switch it to ``hlm_sdpa``. Returns how many modules were swapped."""
    swapped = 0
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if type(child) is nn.Dropout:
                setattr(parent, name, FastDropout(child.p, child.inplace))
                swapped += 1
    config = getattr(model, "config", None)
    if config is not None and getattr(config, "_attn_implementation", None) == "sdpa":
        register_fast_attention()
        config._attn_implementation = ATTENTION
    return swapped
