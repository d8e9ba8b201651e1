"""Vendor fused linear cross-entropy kernels for CUDA, used where they are installed.

Both never build the [K, N] logits, like `chunked_linear_cross_entropy`, but as Triton GPU
kernels; neither runs on a CPU:

- ``cce``: Apple's Cut Cross-Entropy (`pip install cut-cross-entropy`), whose
  `linear_cross_entropy(e, c, targets)` has no bias argument: a bias is folded in as one more
  input column of ones and one more weight column (D + 1 features; a copy of the weight).
  Its gradient filtering (`filter_eps`, which skips small softmax terms) is off, but its
  backward accepts only 16-bit operands, so ``cce`` always multiplies in bf16 (accumulating
  in fp32): at fp32 it is not the same computation as the others, only a close one.
- ``liger``: Liger-Kernel's fused linear cross-entropy (`pip install liger-kernel`),
  `liger_fused_linear_cross_entropy(x, w, target, bias)`.

Vanilla CE calls them with the vocabulary matrix as the weight; CWT with the batch's target
embeddings as the weight and `arange(K)` as the targets (it is a linear cross-entropy too).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

from zoo.errors import UserError

External = Literal["cce", "liger"]
EXTERNAL: tuple[str, ...] = ("cce", "liger")
_PACKAGES = {"cce": "cut-cross-entropy", "liger": "liger-kernel"}


def external_available(kind: str) -> bool:
    """Whether kernel `kind` can run here: its package imports and a CUDA device exists."""
    try:
        _import(kind)
    except UserError:
        return False
    return torch.cuda.is_available()


def check_external(kind: str, device_type: str, key: str) -> None:
    """Raise a `UserError` naming config `key` unless kernel `kind` can run on `device_type`:
    called before any compute, so a run never stops at its first step for a missing package."""
    if device_type != "cuda":
        raise UserError(
            f"{key}: {kind!r} runs Triton kernels on CUDA only, and this run is on "
            f"{device_type}: use 'chunked' (same result, any device)"
        )
    try:
        _import(kind)
    except UserError as e:
        raise UserError(f"{key}: {e}") from e


def _import(kind: str):
    try:
        if kind == "cce":
            from cut_cross_entropy import linear_cross_entropy

            return linear_cross_entropy
        if kind == "liger":
            from liger_kernel.transformers.functional import liger_fused_linear_cross_entropy

            return liger_fused_linear_cross_entropy
    except ImportError as e:
        raise UserError(
            f"impl {kind!r} needs the {_PACKAGES[kind]} package (pip install {_PACKAGES[kind]}); "
            f"it is not importable here ({e}); 'chunked' does the same on any device"
        ) from e
    raise ValueError(f"unknown external kernel {kind!r}; choose from {EXTERNAL}")


def external_linear_cross_entropy(
    x: Tensor,
    weight: Tensor,
    target: Tensor,
    kind: str,
    *,
    bias: Tensor | None = None,
    scale: float = 1.0,
) -> Tensor:
    """Mean cross-entropy of softmax(x @ weight.T * scale + bias) at `target`, by a vendor kernel.

    Args:
        x (Tensor): [K, D] inputs on a CUDA device.
        weight (Tensor): [N, D] class vectors.
        target (Tensor): [K] column index of each row's positive.
        kind (str): ``cce`` or ``liger``.
        bias (Tensor): [N] or None.
        scale (float): multiplies the scores (CWT's 1 / temperature), applied to x.
        The operands are cast to autocast's dtype where it is on (bf16 tensor-core matmuls,
        fp32 accumulation inside the kernels), else to fp32 (``cce``: bf16, see above).

    Returns:
        Tensor: scalar fp32 loss.
    """
    if x.device.type != "cuda":
        raise UserError(
            f"impl {kind!r} runs Triton kernels on CUDA only; these tensors are on {x.device}: "
            "use 'chunked' (same result, any device)"
        )
    fn = _import(kind)
    # one dtype for both operands: autocast's where it is on (bf16 matmuls), else fp32; CCE's
    # backward takes 16-bit operands only, so it always runs in bf16 (fp32 accumulation)
    on = torch.is_autocast_enabled("cuda")
    dtype = torch.get_autocast_dtype("cuda") if on else torch.float32
    if kind == "cce" and dtype == torch.float32:
        dtype = torch.bfloat16
    x, weight = (x * scale).to(dtype), weight.to(dtype)
    if kind == "liger":
        loss = fn(x, weight, target, bias.to(dtype) if bias is not None else None)
    else:
        if bias is not None:  # CCE has no bias: one more feature, 1 for every row
            x = torch.cat([x, x.new_ones(x.shape[0], 1)], dim=1)  # (K, D + 1)
            weight = torch.cat([weight, bias[:, None].to(dtype)], dim=1)  # (N, D + 1)
        loss = fn(x, weight, target, filter_eps=None)  # exact gradients (no CCE filtering)
    return loss.float()
