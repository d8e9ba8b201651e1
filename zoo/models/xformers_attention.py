"""`attention: xformers`: xFormers' memory-efficient attention through transformers' attention
interface, as the paper trained with (CUDA only; `pip install xformers`, part of the `gpu`
extra). Nothing of it reaches the checkpoint, which loads with SDPA anywhere.

    check_xformers("cuda")     # a clear error on the CPU or without the package
    use_xformers(model)        # the model's attention layers now call xformers
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from zoo.errors import UserError
from zoo.models.fast_attention import repeat_kv

NAME = "xformers"
ATTENTIONS = ("sdpa", NAME)


def check_xformers(device: str, key: str = "attention") -> None:
    """Refuse xformers where it cannot run, before anything is computed."""
    if device != "cuda":
        raise UserError(
            f"{key}: xformers runs on CUDA only; on the {device} use sdpa (the default), whose "
            "CPU path draws the fast dropout masks"
        )
    try:
        import xformers.ops
    except ImportError:
        raise UserError(
            f"{key}: xformers is not installed (pip install xformers, or the gpu extra); "
            "sdpa is the default"
        ) from None
    q = torch.zeros(1, 8, 1, 32, device="cuda", dtype=torch.bfloat16)  # (B, T, H, D)
    try:
        xformers.ops.memory_efficient_attention(q, q, q)
    except NotImplementedError as exc:  # a wheel built for another torch / CUDA / Python
        raise UserError(
            f"{key}: xformers {xformers.__version__} is installed but has no CUDA kernel for "
            f"torch {torch.__version__} here (`python -m xformers.info` says why); install a "
            f"build matching this torch, or use sdpa: {str(exc).splitlines()[0]}"
        ) from None


def _bias(mask: Tensor, shape: tuple[int, int, int, int], dtype: torch.dtype) -> Tensor:
    """An additive [B, H, Tq, Tk] bias from transformers' mask (bool: True = attend, or
    additive), in memory whose last dimension is padded to a multiple of 8 as xformers asks."""
    b, h, tq, tk = shape
    additive = (
        torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(~mask, float("-inf"))
        if mask.dtype == torch.bool
        else mask.to(dtype)
    )
    padded = torch.zeros(b, h, tq, (tk + 7) // 8 * 8, dtype=dtype, device=mask.device)
    padded[..., :tk] = additive.expand(b, h, tq, tk)
    return padded[..., :tk]


def xformers_attention(
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
    """Hugging Face attention interface: q, k, v (B, H, T, d) -> (B, T, H, d)."""
    import xformers.ops as xops

    key, value = repeat_kv(query, key, value)
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))  # (B, T, H, d)
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", False)
    bias: Any = None
    if attention_mask is not None:
        b, tq, h, _ = q.shape
        bias = _bias(attention_mask, (b, h, tq, k.shape[1]), q.dtype)
    elif causal and q.shape[1] > 1:
        bias = xops.LowerTriangularMask()
    out = xops.memory_efficient_attention(q, k, v, attn_bias=bias, p=dropout, scale=scaling)
    return out, None  # (B, T, H, d)


def use_xformers(model: nn.Module) -> None:
    """Route a Hugging Face model's attention through xformers (registered once)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(NAME, xformers_attention)
    AttentionMaskInterface.register(NAME, sdpa_mask)
    config = getattr(model, "config", None)
    if config is None:
        raise UserError(f"{type(model).__name__} has no Hugging Face config to route attention")
    config._attn_implementation = NAME
