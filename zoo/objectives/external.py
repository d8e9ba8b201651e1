"""Vendor fused linear cross-entropy kernels for CUDA, used where they are installed.

Both never build the [K, N] logits, like `chunked_linear_cross_entropy`, but as Triton GPU
kernels; neither runs on a CPU. `zoo.objectives.kernels` registers them as ``cce`` and
``liger`` beside the built-in kernels:

- `cce_linear_cross_entropy`: Apple's Cut Cross-Entropy (`pip install cut-cross-entropy`),
  whose `linear_cross_entropy(e, c, targets)` has no bias argument: a bias is folded in as one
  more input column of ones and one more weight column (D + 1 features; a copy of the weight).
  Its gradient filtering (`filter_eps`, which skips small softmax terms) is off, but its
  backward accepts only 16-bit operands, so ``cce`` always multiplies in bf16 (accumulating
  in fp32): with fp32 products asked for, it is not the same computation as the others,
  only a close one.
- `liger_linear_cross_entropy`: Liger-Kernel's fused linear cross-entropy
  (`pip install liger-kernel`), `liger_fused_linear_cross_entropy(x, w, target, bias)`.

Vanilla CE calls them with the vocabulary matrix as the weight; CWT with the batch's target
embeddings as the weight and `arange(K)` as the targets (it is a linear cross-entropy too).
Importing this module does not import torch (`hlm ls` lists the kernels without it): the
functions import it when called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zoo.errors import UserError
from zoo.objectives.declared import ScoreDtype

if TYPE_CHECKING:
    import torch
    from torch import Tensor


@dataclass(frozen=True)
class Vendor:
    """A vendor's kernel: the impl name it goes by, where its function lives, and the package
    that installs it."""

    name: str  # the `ce_impl` / `cwt_impl` value
    package: str  # what `pip install` takes
    module: str
    function: str

    def load(self) -> Callable[..., Any]:
        """The kernel function; a `UserError` naming the kernel where it does not import."""
        try:
            fn: Callable[..., Any] = getattr(importlib.import_module(self.module), self.function)
        except ImportError as e:
            raise UserError(
                f"impl {self.name!r} needs the {self.package} package "
                f"(pip install {self.package}); it is not importable here ({e}); 'chunked' "
                "does the same on any device"
            ) from e
        return fn

    def check_device(self, device_type: str) -> None:
        """A `UserError` unless the kernel can run on `device_type` (CUDA, installed)."""
        if device_type != "cuda":
            raise UserError(
                f"{self.name!r} runs Triton kernels on CUDA only, and this run is on "
                f"{device_type}: use 'chunked' (same result, any device)"
            )
        self.load()

    def on_cuda(self, x: Tensor) -> None:
        """A `UserError` unless `x` is on a CUDA device."""
        if x.device.type != "cuda":
            raise UserError(
                f"impl {self.name!r} runs Triton kernels on CUDA only; these tensors are on "
                f"{x.device}: use 'chunked' (same result, any device)"
            )


CCE = Vendor("cce", "cut-cross-entropy", "cut_cross_entropy", "linear_cross_entropy")
LIGER = Vendor(
    "liger",
    "liger-kernel",
    "liger_kernel.transformers.functional",
    "liger_fused_linear_cross_entropy",
)


def _operand_dtype(at_least_16bit: bool, score_dtype: ScoreDtype) -> torch.dtype:
    """`product_dtype` on CUDA (autocast's dtype where it is on and `score_dtype` asks for it:
    bf16 tensor-core matmuls, fp32 accumulation inside the kernels; else fp32), or bf16 where
    that is fp32 for a kernel whose backward takes 16-bit operands only."""
    import torch

    from zoo.objectives.declared import product_dtype

    dtype = product_dtype("cuda", score_dtype)
    return torch.bfloat16 if at_least_16bit and dtype == torch.float32 else dtype


def cce_linear_cross_entropy(
    x: Tensor,
    weight: Tensor,
    target: Tensor,
    *,
    bias: Tensor | None = None,
    scale: float = 1.0,
    score_dtype: ScoreDtype = "autocast",
) -> Tensor:
    """Mean cross-entropy of softmax(x @ weight.T * scale + bias) at `target`, by CCE.

    Args:
        x (Tensor): [K, D] inputs on a CUDA device.
        weight (Tensor): [N, D] class vectors.
        target (Tensor): [K] column index of each row's positive.
        bias (Tensor): [N] or None (folded in as one more feature).
        scale (float): multiplies the scores (CWT's 1 / temperature), applied to x.
        score_dtype (str): "autocast" or "fp32" (`LossOptions.score_dtype`; CCE's products
            are 16-bit either way).

    Returns:
        Tensor: scalar fp32 loss (operands in bf16 or autocast's dtype: see the module).
    """
    import torch

    CCE.on_cuda(x)
    fn = CCE.load()
    dtype = _operand_dtype(True, score_dtype)
    x, weight = (x * scale).to(dtype), weight.to(dtype)
    if bias is not None:  # CCE has no bias: one more feature, 1 for every row
        x = torch.cat([x, x.new_ones(x.shape[0], 1)], dim=1)  # (K, D + 1)
        weight = torch.cat([weight, bias[:, None].to(dtype)], dim=1)  # (N, D + 1)
    loss: Tensor = fn(x, weight, target, filter_eps=None)  # exact gradients (no filtering)
    return loss.float()


def liger_linear_cross_entropy(
    x: Tensor,
    weight: Tensor,
    target: Tensor,
    *,
    bias: Tensor | None = None,
    scale: float = 1.0,
    score_dtype: ScoreDtype = "autocast",
) -> Tensor:
    """Mean cross-entropy of softmax(x @ weight.T * scale + bias) at `target`, by Liger-Kernel.

    Args and returns as `cce_linear_cross_entropy`; operands in autocast's dtype, else fp32.
    """
    LIGER.on_cuda(x)
    fn = LIGER.load()
    dtype = _operand_dtype(False, score_dtype)
    x, weight = (x * scale).to(dtype), weight.to(dtype)
    loss: Tensor = fn(x, weight, target, bias.to(dtype) if bias is not None else None)
    return loss.float()
