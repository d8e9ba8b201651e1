"""The CPU training path of attention with dropout, and the switch that puts a model on it.

When attention dropout is on, torch's CPU SDPA falls back to its math path, and the eager
attention of Hugging Face models makes one pass over the whole [B, H, Tq, Tk] score tensor
per element-wise step (scale, mask, softmax, dropout mask, dropout, and their backwards:
16 MiB each for bert-small at batch 32) and copies q, k, v, the output and their gradients
between the projections' (B, T, H, d) layout and the (B, H, T, d) one the batched products
want. `attention(...)` computes the same function one batch slice at a time (512 KiB of
scores, so a slice's element-wise steps run in the L2 cache), folds the scale into the
product (`baddbmm(alpha=...)`), and writes the output and the gradients straight into the
(B, T, H, d) layout the projections read. It keeps the softmax output and the dropout lanes
per slice (the eager path keeps the softmax output, a boolean mask and the dropped
probabilities). Dropout masks come from `zoo.models.dropout`, one draw per slice in order,
so `torch.manual_seed` reproduces them (`tests/zoo/models/test_fast_attention.py` replays them to
check values and gradients against the eager computation).

`use_fast_dropout(model)` swaps the model's `nn.Dropout` modules for `FastDropout` and points
its attention at ``hlm_sdpa``: SDPA whenever attention dropout is off (evaluation, or p = 0),
the sliced attention for fp32 (or fp64) on the CPU with dropout, and otherwise (bf16, additive
float masks) the eager computation with the fast mask. On CUDA, torch's SDPA.

Nothing of this reaches a checkpoint: dropout has no weights and `config.json` does not record
the attention implementation, so a saved model loads as the plain Hugging Face class.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn
from transformers.integrations.sdpa_attention import sdpa_attention_forward

from zoo.models.dropout import (
    FastDropout,
    draw_lanes,
    fast_dropout,
    fill_lanes,
    scaled_keep,
    threshold,
)

ATTENTION = "hlm_sdpa"

SLICE_BYTES = 1 << 19  # one slice's [rows * H, Tq, Tk] scores: 512 KiB, inside a 2 MiB L2


def slice_rows(heads: int, tq: int, tk: int, itemsize: int = 4) -> int:
    """Batch rows per slice: as many as fit `SLICE_BYTES` of scores, at least one."""
    return max(1, SLICE_BYTES // (heads * tq * tk * itemsize))


def _heads_first(x: Tensor) -> Tensor:
    """(c, H, T, d) view -> (c * H, T, d) for the batched products (a copy only if c > 1)."""
    c, h, t, d = x.shape
    return x.reshape(c * h, t, d)


class _SlicedAttention(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None, scale: float, p: float
    ) -> Tensor:
        b, h, tq, d = q.shape
        tk = k.shape[2]
        rows = slice_rows(h, tq, tk, q.element_size())
        out = q.new_empty(b, tq, h, d)  # (B, Tq, H, d): what the output projection reads
        probs: list[Tensor] = []  # softmax outputs, (c*H, Tq, Tk) per slice
        keeps: list[Tensor] = []  # their dropout lanes, (c*H*Tq*Tk,) int16
        fill = torch.finfo(q.dtype).min
        thr, sc = threshold(p)
        n = rows * h * tq * tk
        mask_buf, drop_buf = q.new_empty(n), q.new_empty(n)  # reused by every slice
        for r0 in range(0, b, rows):
            r1 = min(b, r0 + rows)
            c = r1 - r0
            qc, kc, vc = (_heads_first(x[r0:r1]) for x in (q, k, v))
            s = torch.baddbmm(  # (c*H, Tq, Tk), scale folded into the product
                qc.new_empty(c * h, tq, tk), qc, kc.transpose(1, 2), beta=0.0, alpha=scale
            )
            if allowed is not None:  # (B or 1, 1 or H, Tq, Tk) bool, True = attend
                a = allowed[r0:r1] if allowed.shape[0] > 1 else allowed
                s.view(c, h, tq, tk).masked_fill_(~a, fill)
            pc = torch.softmax(s, dim=-1)  # (c*H, Tq, Tk)
            words, lanes = draw_lanes(pc.numel())
            mask = scaled_keep(
                fill_lanes(words, lanes, 0, pc.numel()), thr, sc, mask_buf[: pc.numel()]
            )
            dropped = torch.mul(pc, mask.view(pc.shape), out=drop_buf[: pc.numel()].view(pc.shape))
            oc = torch.bmm(dropped, vc)  # (c*H, Tq, d)
            out[r0:r1].copy_(oc.view(c, h, tq, d).transpose(1, 2))
            probs.append(pc)
            keeps.append(lanes)
        ctx.save_for_backward(q, k, v, *probs, *keeps)
        ctx.n_slices, ctx.rows, ctx.scale, ctx.thr, ctx.sc = len(probs), rows, scale, thr, sc
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        q, k, v, *saved = ctx.saved_tensors
        probs, keeps = saved[: ctx.n_slices], saved[ctx.n_slices :]
        b, h, tq, d = q.shape
        tk = k.shape[2]
        grad = grad.contiguous()  # (B, Tq, H, d)
        dq = q.new_empty(b, tq, h, d)  # gradients in the projections' layout
        dk = k.new_empty(b, tk, h, d)
        dv = v.new_empty(b, tk, h, d)
        n = ctx.rows * h * tq * tk
        mask_buf, drop_buf = q.new_empty(n), q.new_empty(n)
        for i, r0 in enumerate(range(0, b, ctx.rows)):
            r1 = min(b, r0 + ctx.rows)
            c = r1 - r0
            qc, kc, vc = (_heads_first(x[r0:r1]) for x in (q, k, v))
            gc = grad[r0:r1].transpose(1, 2).reshape(c * h, tq, d)  # (c*H, Tq, d)
            pc = probs[i]
            mask = scaled_keep(keeps[i], ctx.thr, ctx.sc, mask_buf[: pc.numel()]).view(pc.shape)
            dropped = torch.mul(pc, mask, out=drop_buf[: pc.numel()].view(pc.shape))
            dvc = torch.bmm(dropped.transpose(1, 2), gc)  # (c*H, Tk, d)
            ds = torch.bmm(gc, vc.transpose(1, 2)).mul_(mask)  # (c*H, Tq, Tk)
            ds = torch.ops.aten._softmax_backward_data(ds, pc, -1, pc.dtype)
            dqc = torch.baddbmm(qc.new_empty(c * h, tq, d), ds, kc, beta=0.0, alpha=ctx.scale)
            dkc = torch.baddbmm(
                kc.new_empty(c * h, tk, d), ds.transpose(1, 2), qc, beta=0.0, alpha=ctx.scale
            )
            dq[r0:r1].copy_(dqc.view(c, h, tq, d).transpose(1, 2))
            dk[r0:r1].copy_(dkc.view(c, h, tk, d).transpose(1, 2))
            dv[r0:r1].copy_(dvc.view(c, h, tk, d).transpose(1, 2))
        return dq.transpose(1, 2), dk.transpose(1, 2), dv.transpose(1, 2), None, None, None


def attention(
    q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None, scale: float, p: float
) -> Tensor:
    """softmax(q k^T * scale, masked) with dropout p, @ v; returns the (B, Tq, H, d) layout.

    q (Tensor): [B, H, Tq, d]; k, v (Tensor): [B, H, Tk, d] (views of (B, T, H, d) are read
    in place). allowed (Tensor | None): bool, broadcastable to [B, H, Tq, Tk], True = attend.
    """
    return _SlicedAttention.apply(q, k, v, allowed, scale, p)


def repeat_kv(query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor]:
    """Grouped-query attention: key and value heads (B, Hkv, T, d) repeated to the query's H."""
    if key.shape[1] == query.shape[1]:
        return key, value
    reps = query.shape[1] // key.shape[1]
    return key.repeat_interleave(reps, 1), value.repeat_interleave(reps, 1)


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

    SDPA when no dropout is drawn or off the CPU. With attention dropout on the CPU,
    softmax(q k^T * scaling + mask) with the fast mask, then @ v (what SDPA's math path
    computes): by `attention` (a batch slice at a time) for fp32/fp64 with a boolean or no
    mask, else eagerly (bf16 or autocast, additive float masks, p = 1)."""
    if dropout == 0.0 or query.device.type != "cpu":
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout, scaling, is_causal, **kwargs
        )
    key, value = repeat_kv(query, key, value)
    scale = scaling if scaling is not None else query.shape[-1] ** -0.5
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", False)
    if attention_mask is None and causal and query.shape[2] > 1:
        tq, tk = query.shape[2], key.shape[2]
        attention_mask = torch.ones(tq, tk, dtype=torch.bool).tril(tk - tq)[None, None]
    sliced = (
        query.dtype in (torch.float32, torch.float64)
        and not torch.is_autocast_enabled("cpu")
        and (attention_mask is None or attention_mask.dtype == torch.bool)
        and threshold(dropout)[1] != 0.0
    )
    if sliced:  # the common case: a batch slice at a time
        return attention(query, key, value, attention_mask, scale, dropout), None
    scores = torch.matmul(query, key.transpose(-1, -2))  # (B, H, Tq, Tk)
    scores.mul_(scale)
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
