"""Contrastive Weight Tying (CWT): the headless objective as a pure function.

For K selected positions, each output vector is scored against the input embeddings of the K
target tokens (in-batch negatives), and cross-entropy is taken on the diagonal:

    loss = F.cross_entropy(h @ e.T / tau, arange(K))

computed in fp32 with autocast disabled, via log-sum-exp (never the paper's exp / divide, which
overflows for scores above ~88 in fp32). No [K, V] tensor is ever built.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

Duplicates = Literal["keep", "mask", "unique"]
DUPLICATE_MODES: tuple[str, ...] = ("keep", "mask", "unique")
Impl = Literal["auto", "plain", "chunked", "recompute", "torch"]
IMPLS: tuple[str, ...] = ("auto", "plain", "chunked", "recompute", "torch")
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
            least memory), ``torch`` (torch's ``F.linear_cross_entropy`` with chunking), or
            ``auto``: plain up to K = 4096, chunked above.
        chunk (int): rows per block for the chunked implementations.

    Returns:
        Tensor: scalar fp32 loss (mean over the K rows).
    """
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

    k = hidden.shape[0]
    if impl == "auto":
        impl = "chunked" if k > AUTO_CHUNK_ABOVE else "plain"
    if impl != "plain":
        return _cwt_linear_ce(
            hidden, target_embeddings, temperature, duplicates, target_ids, impl, chunk
        )
    with torch.autocast(device_type=hidden.device.type, enabled=False):
        h = hidden.float()  # (K, D)
        e = target_embeddings.float()  # (K, D)
        if duplicates == "unique":
            assert target_ids is not None
            uniq, inverse = torch.unique(target_ids, return_inverse=True)  # (U,), (K,)
            # index of one occurrence of each distinct token (rows of e are identical for equal ids)
            first = torch.full_like(uniq, k).scatter_reduce(
                0, inverse, torch.arange(k, device=hidden.device), reduce="amin"
            )
            scores = h @ e[first].T / temperature  # (K, U)
            return F.cross_entropy(scores, inverse)
        scores = h @ e.T / temperature  # (K, K)
        labels = torch.arange(k, device=hidden.device)
        if duplicates == "mask":
            assert target_ids is not None
            same = target_ids[:, None] == target_ids[None, :]  # (K, K)
            same.fill_diagonal_(False)
            scores = scores.masked_fill(same, float("-inf"))
        return F.cross_entropy(scores, labels)


def _cwt_linear_ce(
    hidden: Tensor,
    target_embeddings: Tensor,
    temperature: float,
    duplicates: str,
    target_ids: Tensor | None,
    impl: str,
    chunk: int,
) -> Tensor:
    """CWT as a linear cross-entropy whose "vocabulary" is the batch's target embeddings."""
    from zoo.objectives.chunked import chunked_linear_cross_entropy

    k = hidden.shape[0]
    weight, target = target_embeddings, torch.arange(k, device=hidden.device)  # (K, D), (K,)
    exclude = None
    if duplicates == "unique":
        assert target_ids is not None
        uniq, target = torch.unique(target_ids, return_inverse=True)
        first = torch.full_like(uniq, k).scatter_reduce(
            0, target, torch.arange(k, device=hidden.device), reduce="amin"
        )
        weight = target_embeddings[first]  # (U, D)
    elif duplicates == "mask":
        assert target_ids is not None
        exclude = (target_ids, target_ids)
    if impl == "torch":
        if exclude is not None:
            raise ValueError("impl='torch' does not support duplicates='mask'")
        import torch.nn.functional as F
        from torch import nn

        with torch.autocast(device_type=hidden.device.type, enabled=False):
            return F.linear_cross_entropy(
                hidden.float() / temperature,
                weight.float(),
                target,
                options=nn.LinearCrossEntropyOptions(batch_chunk_size=chunk),
            )
    return chunked_linear_cross_entropy(
        hidden,
        weight,
        target,
        scale=1.0 / temperature,
        chunk=chunk,
        exclude_ids=exclude,
        recompute=impl == "recompute",
    )
