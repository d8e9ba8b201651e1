"""Contrastive Weight Tying (CWT): the headless objective as a pure function.

For K selected positions, each output vector is scored against the input embeddings of the K
target tokens (in-batch negatives), and cross-entropy is taken on the diagonal:

    loss = F.cross_entropy(h @ e.T / tau, arange(K))

the scores' products in `product_dtype` (under bf16 autocast, bf16 with fp32 accumulation, as
vanilla CE's head computes its logits, unless `score_dtype="fp32"`), the softmax in fp32 via
log-sum-exp (never the paper's exp / divide, which overflows for scores above ~88 in fp32). No
[K, V] tensor is ever built.
"""

from __future__ import annotations

from typing import cast, get_args

import torch
import torch.nn.functional as F
from torch import Tensor

from zoo.objectives.declared import Duplicates, Impl, Negatives, ScoreDtype, product_dtype
from zoo.objectives.kernels import KERNELS

DUPLICATE_MODES: tuple[str, ...] = get_args(Duplicates)
IMPLS: tuple[str, ...] = get_args(Impl)
NEGATIVES: tuple[str, ...] = get_args(Negatives)
AUTO_CHUNK_ABOVE = 4096  # K above which "auto" chunks (a [K, K] fp32 matrix is 64 MiB here)


def cwt_loss(
    hidden: Tensor,
    target_embeddings: Tensor,
    temperature: float = 1.0,
    *,
    duplicates: Duplicates = "keep",
    target_ids: Tensor | None = None,
    impl: Impl = "auto",
    chunk: int = 1024,
    negatives: Negatives = "local",
    score_dtype: ScoreDtype = "autocast",
) -> Tensor:
    """Contrastive Weight Tying loss.

    Args:
        hidden (Tensor): [K, D] output vectors at the selected positions.
        target_embeddings (Tensor): [K, D] input embeddings of the K target tokens.
        temperature (float): scores are divided by it (the paper uses 1.0).
        duplicates (str): what to do with targets that repeat in the batch:
            ``keep`` (the paper): every other row is a negative, even the same token;
            ``mask``: negatives with the same token id as the positive are removed;
            ``unique``: softmax over the batch's distinct target tokens ([K, U] scores).
        target_ids (Tensor): [K] token ids, required for ``mask`` and ``unique``.
        impl (str): ``plain`` (the [K, K] scores at once), ``chunked`` (row blocks, gradients
            computed in the forward pass), ``recompute`` (row blocks, recomputed in backward:
            least memory), ``torch`` (torch's ``F.linear_cross_entropy`` with chunking),
            ``cce`` / ``liger`` (the vendors' fused Triton kernels, CUDA only), or ``auto``:
            plain up to K = 4096, chunked above. All but plain and auto are the registered
            kernels of `zoo.objectives.kernels`.
        chunk (int): rows per block for the chunked implementations.
        negatives (str): ``local`` (this process's K targets) or ``global``: every rank's
            targets are all-gathered (with gradient) and serve as negatives, as in
            large-batch contrastive training; the same as ``local`` in a single process.
        score_dtype (str): ``autocast``: under autocast, the [K, N] products in its dtype
            (accumulated in fp32), as the vocabulary head's under the same autocast; ``fp32``:
            in fp32. The softmax is fp32 either way; without autocast, so is everything.

    Returns:
        Tensor: scalar fp32 loss (mean over the K rows).
    """
    _check_args(hidden, target_embeddings, temperature, duplicates, target_ids, impl, negatives)
    k = hidden.shape[0]
    if impl == "auto":
        impl = "chunked" if k > AUTO_CHUNK_ABOVE else "plain"
    # columns of the softmax: this rank's K targets, or every rank's N targets
    cols, col_ids, offset = target_embeddings, target_ids, 0  # (N, D), (N,), row offset
    if negatives == "global":
        ids = target_ids if duplicates != "keep" else None  # only mask/unique read them
        cols, col_ids, offset = gather_targets(target_embeddings, ids)
    n = cols.shape[0]
    target = offset + torch.arange(k, device=hidden.device)  # (K,) column of each row's positive
    exclude = None
    if duplicates == "unique":  # one column per distinct token (equal ids: identical rows)
        assert col_ids is not None
        uniq, inverse = torch.unique(col_ids, return_inverse=True)  # (U,), (N,)
        first = torch.full_like(uniq, n).scatter_reduce(
            0, inverse, torch.arange(n, device=hidden.device), reduce="amin"
        )
        cols, target = cols[first], inverse[offset : offset + k]  # (U, D), (K,)
    elif duplicates == "mask":
        assert target_ids is not None and col_ids is not None
        exclude = (target_ids, col_ids)
    if impl != "plain":  # a registered kernel, the target embeddings as its "vocabulary"
        kernel = KERNELS.get(impl)
        return kernel(
            hidden,
            cols,
            target,
            scale=1.0 / temperature,
            chunk=chunk,
            exclude=exclude,
            score_dtype=score_dtype,
        )
    dtype = product_dtype(hidden.device.type, score_dtype)  # read before autocast is off
    with torch.autocast(device_type=hidden.device.type, enabled=False):
        # 1/tau scales h [K, D], not the scores [K, N]: one pass fewer over the big tensor
        scores = ((hidden.to(dtype) / temperature) @ cols.to(dtype).T).float()  # (K, N) / (K, U)
        if exclude is not None:
            same = exclude[0][:, None] == exclude[1][None, :]  # (K, N)
            same[torch.arange(k, device=hidden.device), target] = False
            scores = scores.masked_fill(same, float("-inf"))
        return F.cross_entropy(scores, target)


def _check_args(
    hidden: Tensor,
    target_embeddings: Tensor,
    temperature: float,
    duplicates: str,
    target_ids: Tensor | None,
    impl: str,
    negatives: str,
) -> None:
    if hidden.ndim != 2 or target_embeddings.shape != hidden.shape:
        raise ValueError(
            f"cwt_loss expects hidden [K, D] and target_embeddings [K, D], got "
            f"{tuple(hidden.shape)} and {tuple(target_embeddings.shape)}"
        )
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if duplicates not in DUPLICATE_MODES:
        raise ValueError(f"duplicates must be one of {DUPLICATE_MODES}, got {duplicates!r}")
    if duplicates != "keep" and (target_ids is None or target_ids.shape != hidden.shape[:1]):
        raise ValueError(f"duplicates={duplicates!r} needs target_ids of shape [K]")
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    if negatives not in NEGATIVES:
        raise ValueError(f"negatives must be one of {NEGATIVES}, got {negatives!r}")


def gather_targets(
    target_embeddings: Tensor, target_ids: Tensor | None
) -> tuple[Tensor, Tensor | None, int]:
    """Every rank's target embeddings, for cross-rank negatives.

    Args:
        target_embeddings (Tensor): [K, D] this rank's (K may differ between ranks).
        target_ids (Tensor | None): [K] their token ids.

    Returns:
        (Tensor [N, D], Tensor [N] | None, int): all ranks' rows in rank order (differentiable:
        each rank's gradient flows back to the rank that owns the row), their ids, and this
        rank's first row. Without an initialised process group, the inputs and 0.
    """
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return target_embeddings, target_ids, 0
    # functional collectives: the supported differentiable all-gather (its backward sums each
    # row's gradients from every rank and hands them to the row's owner: a reduce-scatter)
    from torch.distributed import _functional_collectives as collectives

    # `all_gather_single_autograd` where this torch has it (`..._tensor_autograd` warns that
    # it is deprecated there), the older name before
    gather = getattr(collectives, "all_gather_single_autograd", None) or (
        collectives.all_gather_tensor_autograd
    )

    k = torch.tensor([target_embeddings.shape[0]], device=target_embeddings.device)
    sizes_t = [torch.zeros_like(k) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes_t, k)
    sizes = [int(x) for x in sizes_t]
    pad = max(sizes) - target_embeddings.shape[0]  # all_gather needs equal shapes
    padded = F.pad(target_embeddings, (0, 0, 0, pad))  # (max K, D)
    world = cast(dist.ProcessGroup, dist.group.WORLD)  # initialised: checked above
    gathered = gather(padded, 0, world)  # (world x max K, D)
    parts = gathered.split(padded.shape[0])
    cols = torch.cat([p[:n] for p, n in zip(parts, sizes, strict=True)])  # (N, D)
    col_ids = None
    if target_ids is not None:
        ids = F.pad(target_ids, (0, pad), value=-1)
        got = [torch.empty_like(ids) for _ in sizes]
        dist.all_gather(got, ids)
        col_ids = torch.cat([g[:n] for g, n in zip(got, sizes, strict=True)])
    return cols, col_ids, sum(sizes[: dist.get_rank()])
