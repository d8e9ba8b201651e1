"""Chunked linear cross-entropy: never materialises the full [K, N] score matrix.

    loss = mean_i [ logsumexp_j (x_i . w_j * scale + b_j) - (x_i . w_t(i) * scale + b_t(i)) ]

CWT is this with w = the K gathered target embeddings and t(i) = i (or w = every rank's
targets, t(i) = offset + i, for cross-rank negatives); vanilla CE is this with w = the
vocabulary matrix and t(i) = the token id. Rows are processed in blocks of `chunk` rows: each
block's [chunk, N] scores live only inside the loop, in fp32. The products (scores and
gradients) run in `product_dtype`: under bf16 autocast, in bf16 with fp32 accumulation (as
the plain losses), unless `score_dtype="fp32"`; the softmax and the sums are fp32 always.

Two backward strategies:
- ``fused`` (default): the gradients are computed block by block during the forward pass and
  kept ([K, D] and [N, D], the size of the inputs); backward only scales them. Same matmul
  count as the plain version (3), memory O((K + N) D + chunk N).
- ``recompute``: only the per-row log-sum-exp [K] is kept; backward recomputes each block's
  scores. Least memory, one extra matmul (4).

`exclude_ids` removes, from row i's softmax, the columns whose id equals row i's id except its
own target (CWT's `duplicates="mask"`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import torch
from torch import Tensor

from zoo.objectives.declared import ScoreDtype, product_dtype


class _Buffers(NamedTuple):
    """Work space allocated once a pass and reused by every block (fresh 64 MiB blocks would
    be page-faulted in again and again): the fp32 scores, and with 16-bit products their
    16-bit results (a block's scores, then its softmax; its rows' x gradient; the w gradient).
    """

    scores: Tensor  # (chunk, N) fp32
    low: Tensor | None  # (chunk, N) in the products' dtype
    gx_low: Tensor | None  # (chunk, D)
    gw_low: Tensor | None  # (N, D)

    @staticmethod
    def make(rows: int, xc: Tensor, wc: Tensor, grads: bool) -> _Buffers:
        n, d = wc.shape
        scores = torch.empty(rows, n, dtype=torch.float32, device=xc.device)
        if xc.dtype == torch.float32:
            return _Buffers(scores, None, None, None)
        low = torch.empty(rows, n, dtype=xc.dtype, device=xc.device)
        gx_low = torch.empty(rows, d, dtype=xc.dtype, device=xc.device) if grads else None
        gw_low = torch.empty_like(wc) if grads else None
        return _Buffers(scores, low, gx_low, gw_low)


def _block_scores(
    x: Tensor,
    w: Tensor,
    bias: Tensor | None,
    scale: float,
    rows: slice,
    target: Tensor,
    row_ids: Tensor | None,
    col_ids: Tensor | None,
    bufs: _Buffers,
) -> Tensor:
    """Scores of a row block, written into `bufs.scores`."""
    s = bufs.scores[: rows.stop - rows.start]
    if bufs.low is None:
        torch.mm(x[rows], w.T, out=s)  # (B, N) fp32
    else:  # 16-bit products, accumulated in fp32 by the matmul; the scores kept in fp32
        low = bufs.low[: s.shape[0]]
        torch.mm(x[rows], w.T, out=low)
        s.copy_(low)
    if scale != 1.0:
        s.mul_(scale)
    if bias is not None:
        s.add_(bias)
    if row_ids is not None and col_ids is not None:
        same = row_ids[rows, None] == col_ids[None, :]  # (B, N)
        same[torch.arange(s.shape[0]), target[rows]] = False
        s.masked_fill_(same, float("-inf"))
    return s


def _softmax_(s: Tensor) -> Tensor:
    """In-place row softmax of `s`; returns the row log-sum-exp (one exp per element)."""
    m = s.amax(dim=1, keepdim=True)  # (B, 1)
    s.sub_(m).exp_()
    z = s.sum(dim=1, keepdim=True)
    s.div_(z)
    return (m + z.log()).squeeze(1)


def _accumulate_grads(
    p: Tensor,
    x: Tensor,
    w: Tensor,
    rows: slice,
    target: Tensor,
    scale: float,
    gx: Tensor,
    gw: Tensor,
    gb: Tensor | None,
    bufs: _Buffers,
) -> None:
    """Given a block's softmax `p` [B, N] (overwritten), add its loss gradients (x K) to the
    fp32 `gx`, `gw`, `gb`, the products in the dtype of `x` and `w`."""
    p[torch.arange(p.shape[0]), target[rows]] -= 1.0  # softmax - one-hot
    if bufs.low is None:
        torch.mm(p, w, out=gx[rows])  # (B, D)
        gw.addmm_(p.T, x[rows], alpha=scale)  # (N, D)
    else:  # 16-bit products of the fp32 softmax, summed into the fp32 gradients
        assert bufs.gx_low is not None and bufs.gw_low is not None  # made with grads=True
        pc = bufs.low[: p.shape[0]]
        pc.copy_(p)  # (B, N)
        gx_low = bufs.gx_low[: p.shape[0]]
        torch.mm(pc, w, out=gx_low)  # (B, D)
        gx[rows] = gx_low
        torch.mm(pc.T, x[rows], out=bufs.gw_low)  # (N, D)
        gw.add_(bufs.gw_low, alpha=scale)
    if scale != 1.0:
        gx[rows].mul_(scale)
    if gb is not None:
        gb += p.sum(0)


def _grads_out(
    g: Tensor, dtypes: tuple[Any, Any, Any], gx: Tensor, gw: Tensor, gb: Tensor | None
) -> tuple[Tensor | None, ...]:
    dx_t, dw_t, db_t = dtypes
    bias_grad = (gb * g).to(db_t) if gb is not None else None
    return ((gx * g).to(dx_t), (gw * g).to(dw_t), None, bias_grad, None, None, None)


class _Blocks(NamedTuple):
    """How the rows are processed: the score scale, rows per block, whether backward
    recomputes the scores, and the dtype the products run in."""

    scale: float
    chunk: int
    recompute: bool
    dtype: torch.dtype


class _ChunkedLinearCE(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        w: Tensor,
        target: Tensor,
        bias: Tensor | None,
        row_ids: Tensor | None,
        col_ids: Tensor | None,
        how: _Blocks,
    ) -> Tensor:
        scale, chunk, recompute, dtype = how
        xc, wc = x.to(dtype), w.to(dtype)  # the products' operands
        bf = bias.float() if bias is not None else None
        k = xc.shape[0]
        needs_grad = ctx.needs_input_grad[0] or ctx.needs_input_grad[1] or ctx.needs_input_grad[3]
        lse = torch.empty(k, dtype=torch.float32, device=x.device)
        total = torch.zeros((), dtype=torch.float64, device=x.device)
        fused = needs_grad and not recompute
        gx = torch.empty_like(xc, dtype=torch.float32) if fused else None
        gw = torch.zeros_like(wc, dtype=torch.float32) if fused else None
        gb = torch.zeros_like(bf) if fused and bf is not None else None
        bufs = _Buffers.make(min(chunk, k), xc, wc, grads=fused)
        for start in range(0, k, chunk):
            rows = slice(start, min(start + chunk, k))
            s = _block_scores(xc, wc, bf, scale, rows, target, row_ids, col_ids, bufs)  # (B, N)
            pos = s.gather(1, target[rows, None]).squeeze(1)  # (B,)
            block_lse = _softmax_(s)  # s now holds the softmax
            lse[rows] = block_lse
            total += (block_lse - pos).sum(dtype=torch.float64)
            if fused:
                assert gx is not None and gw is not None
                _accumulate_grads(s, xc, wc, rows, target, scale, gx, gw, gb, bufs)
        ctx.scale, ctx.chunk, ctx.k, ctx.recompute = scale, chunk, k, not fused
        ctx.dtype = dtype
        ctx.dtypes = (x.dtype, w.dtype, bias.dtype if bias is not None else None)
        if fused:
            ctx.save_for_backward(gx, gw, gb)
        else:
            ctx.save_for_backward(x, w, target, bias, lse, row_ids, col_ids)
        return (total / k).float()

    @staticmethod
    def backward(ctx: Any, grad_out: Tensor) -> tuple[Tensor | None, ...]:
        g = grad_out.float() / ctx.k
        if not ctx.recompute:
            return _grads_out(g, ctx.dtypes, *ctx.saved_tensors)
        x, w, target, bias, lse, row_ids, col_ids = ctx.saved_tensors
        xc, wc = x.to(ctx.dtype), w.to(ctx.dtype)
        bf = bias.float() if bias is not None else None
        gx = torch.empty_like(xc, dtype=torch.float32)
        gw = torch.zeros_like(wc, dtype=torch.float32)
        gb = torch.zeros_like(bf) if bf is not None else None
        bufs = _Buffers.make(min(ctx.chunk, ctx.k), xc, wc, grads=True)
        for start in range(0, ctx.k, ctx.chunk):
            rows = slice(start, min(start + ctx.chunk, ctx.k))
            s = _block_scores(xc, wc, bf, ctx.scale, rows, target, row_ids, col_ids, bufs)
            p = s.sub_(lse[rows, None]).exp_()
            _accumulate_grads(p, xc, wc, rows, target, ctx.scale, gx, gw, gb, bufs)
        return _grads_out(g, ctx.dtypes, gx, gw, gb)


def chunked_linear_cross_entropy(
    x: Tensor,
    weight: Tensor,
    target: Tensor,
    *,
    bias: Tensor | None = None,
    scale: float = 1.0,
    chunk: int = 1024,
    exclude_ids: tuple[Tensor, Tensor] | None = None,
    recompute: bool = False,
    score_dtype: ScoreDtype = "autocast",
) -> Tensor:
    """Mean cross-entropy of softmax(x @ weight.T * scale + bias) at `target`, in row chunks.

    Args:
        x (Tensor): [K, D] inputs (any float dtype; the products in `product_dtype`).
        weight (Tensor): [N, D] class vectors (CWT: target embeddings; CE: the vocabulary).
        target (Tensor): [K] column index of each row's positive.
        bias (Tensor): [N] or None.
        exclude_ids (tuple): ([K] row ids, [N] column ids): columns with the row's id, other
            than its target, are left out of its softmax.
        recompute (bool): keep only the log-sum-exp and recompute in backward (least memory).
        score_dtype (str): "autocast" (bf16 products under bf16 autocast) or "fp32".

    Returns:
        Tensor: scalar fp32 loss.
    """
    if chunk <= 0:
        raise ValueError(f"chunk must be > 0, got {chunk}")
    row_ids, col_ids = exclude_ids if exclude_ids is not None else (None, None)
    dtype = product_dtype(x.device.type, score_dtype)  # read before autocast is turned off
    with torch.autocast(device_type=x.device.type, enabled=False):
        how = _Blocks(scale, chunk, recompute, dtype)
        out: Tensor = _ChunkedLinearCE.apply(x, weight, target, bias, row_ids, col_ids, how)
    return out
