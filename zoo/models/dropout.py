"""Faster dropout on the CPU, for training: the same distribution, fewer random draws, and
the mask applied a cache-sized block at a time.

torch's CPU dropout draws its mask with `bernoulli_`, one generator call per element, then
multiplies the whole tensor by a float copy of it (three passes over fresh memory). Here one
64-bit draw (`random_` on int64, from torch's default generator, so `torch.manual_seed`
reproduces it) gives four 15-bit lanes, and an element is kept when its lane is
>= round(p * 2^15): the drop probability is p to within 2^-16, and kept values are scaled by
1 / (1 - that probability), so the expectation is unchanged. For fp32 the lanes are drawn,
turned into a {0, scale} float mask and applied one 512 KiB block at a time, so the mask never
leaves the L2 cache; backward keeps the int16 lanes (2 bytes per element) and rebuilds each
block's mask. `keep_mask` gives the same draws as a boolean mask (what the tests replay).

The attention-probability dropout and the switch of a whole model (`use_fast_dropout`) are
in `zoo.models.fast_attention`. On CUDA everything defers to torch (its fused dropout draws
Philox numbers in the kernel).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

_LANE_BITS = 15  # each int64 draw is 63 random bits (random_ keeps int64 non-negative)
BLOCK = 1 << 17  # elements per block (512 KiB of fp32): a block's steps run in the L2 cache


def threshold(p: float) -> tuple[int, float]:
    """Lanes below the returned integer are dropped; kept values are multiplied by the returned
    scale, 1 / (1 - p') for the realised probability p' (0.0 when everything is dropped)."""
    thr = min(round(p * (1 << _LANE_BITS)), 1 << _LANE_BITS)
    return thr, (0.0 if thr == 1 << _LANE_BITS else 1.0 / (1.0 - thr / (1 << _LANE_BITS)))


def draw_lanes(n: int) -> tuple[Tensor, Tensor]:
    """Uninitialised int64 words for `n` lanes, and their (n,) int16 lane view. Fill a range
    of lanes with `fill_lanes`; every 4 lanes share one word."""
    words = torch.empty((n + 3) // 4, dtype=torch.int64)
    return words, words.view(torch.int16)[:n]


def fill_lanes(words: Tensor, lanes: Tensor, start: int, end: int) -> Tensor:
    """Draw the lanes [start, end) (start a multiple of 4) from torch's default generator and
    return them as 15-bit values, (end - start,) int16. Drawing a tensor's lanes block by block
    in order gives the same lanes as one draw."""
    words[start // 4 : (end + 3) // 4].random_()  # 63 random bits each
    return lanes[start:end].bitwise_and_((1 << _LANE_BITS) - 1)  # the top bit dropped


def scaled_keep(lanes: Tensor, thr: int, scale: float, out: Tensor) -> Tensor:
    """The float mask of `lanes`: `scale` where lane >= thr, else 0, written into `out`.

    (lane - thr + 1/2) * 2 * scale is >= scale for a kept lane and <= -scale for a dropped
    one (lanes are integers), so clamping to [0, scale] gives exactly {0, scale}, in three
    vectorised passes over one block."""
    torch.add(lanes, 0.5 - thr, out=out)
    return out.mul_(2.0 * scale).clamp_(0.0, scale)


def keep_mask(shape: torch.Size | tuple[int, ...], p: float) -> tuple[Tensor, float]:
    """A boolean keep-mask of `shape` (each element kept with probability ~1 - p) on the CPU,
    and the scale 1 / (1 - p') that keeps the expectation, p' being the realised probability.
    The same draws as the masks `fast_dropout` and the sliced attention apply."""
    thr, scale = threshold(p)
    if scale == 0.0:  # p ~ 1: drop everything
        return torch.zeros(shape, dtype=torch.bool), 0.0
    n = 1
    for s in shape:
        n *= s
    words, lanes = draw_lanes(n)
    return (fill_lanes(words, lanes, 0, n) >= thr).view(shape), scale


def _apply_mask(src: Tensor, lanes: Tensor, thr: int, scale: float, draw: Tensor | None) -> Tensor:
    """src * mask, block by block; `draw` (the words) draws each block's lanes first."""
    flat = src.contiguous().view(-1)
    out = torch.empty_like(flat)
    n = flat.numel()
    buf = torch.empty(min(n, BLOCK), dtype=flat.dtype)
    for start in range(0, n, BLOCK):
        end = min(n, start + BLOCK)
        block = fill_lanes(draw, lanes, start, end) if draw is not None else lanes[start:end]
        mask = scaled_keep(block, thr, scale, buf[: end - start])
        torch.mul(flat[start:end], mask, out=out[start:end])
    return out.view(src.shape)


class _FastDropout(torch.autograd.Function):
    """fp32: the mask is applied block by block; backward keeps the (n,) int16 lanes (2 bytes
    per element) and rebuilds each block's float mask from them. Other dtypes: a bool mask."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, p: float) -> Tensor:
        thr, scale = threshold(p)
        if x.dtype != torch.float32 or scale == 0.0:
            keep, scale = keep_mask(x.shape, p)
            ctx.save_for_backward(keep)
            ctx.scale, ctx.thr = scale, None
            return torch.ops.aten.native_dropout_backward(x, keep, scale)  # x * keep * scale
        words, lanes = draw_lanes(x.numel())
        out = _apply_mask(x, lanes, thr, scale, draw=words)
        ctx.save_for_backward(lanes)
        ctx.scale, ctx.thr = scale, thr
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        (saved,) = ctx.saved_tensors
        if ctx.thr is None:
            return torch.ops.aten.native_dropout_backward(grad, saved, ctx.scale), None
        return _apply_mask(grad, saved, ctx.thr, ctx.scale, draw=None), None


def fast_dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """`F.dropout(x, p, training)` with the cheap mask on the CPU; torch's dropout elsewhere."""
    if not training or p == 0.0 or x.device.type != "cpu":
        return F.dropout(x, p, training)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    return _FastDropout.apply(x, p)


class FastDropout(nn.Dropout):
    """`nn.Dropout` whose CPU training mask comes from `fast_dropout`."""

    def forward(self, x: Tensor) -> Tensor:
        return fast_dropout(x, self.p, self.training)
