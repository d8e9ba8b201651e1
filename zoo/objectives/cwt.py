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


def cwt_loss(
    hidden: Tensor,
    target_embeddings: Tensor,
    temperature: float = 1.0,
    *,
    duplicates: Duplicates = "keep",
    target_ids: Tensor | None = None,
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

    k = hidden.shape[0]
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
