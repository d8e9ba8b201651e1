"""Linear cross-entropy kernels: the registered ways to compute a loss without its [K, N] logits.

Both built-in losses are linear cross-entropies, the mean over K rows of

    -log softmax(x @ W.T * scale + b)[target]

vocabulary CE with the head's [V, D] matrix as W (`LossOptions.ce_impl`), CWT with the batch's
[K, D] target embeddings as W and `arange(K)` as the targets (`LossOptions.cwt_impl`). Each
objective writes its ``plain`` form out itself (the whole [K, N] scores, the reference every
kernel is tested against); every other implementation is a `LinearCEKernel` in `KERNELS`, and
the objectives, the pretraining set-up and the benchmarks reach it only through its entry.

A new kernel is one function of `KernelFn`'s signature and one `LinearCEKernel` entry here,
plus its name in `zoo.objectives.declared.Impl` and `CEImpl` (which the config validates);
`tests/zoo/objectives/test_kernels.py` checks those names and the registry agree, and
`tests/zoo/objectives/test_chunked.py` checks every kernel that runs on a CPU against ``plain``.
Importing the registry does not import torch (`hlm ls` lists it without): a kernel imports
what it computes with when it is called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zoo.errors import UserError
from zoo.objectives.declared import ScoreDtype
from zoo.objectives.external import (
    CCE,
    LIGER,
    Vendor,
    cce_linear_cross_entropy,
    liger_linear_cross_entropy,
)
from zoo.registry import Registry

if TYPE_CHECKING:
    from torch import Tensor

    Exclude = tuple[Tensor, Tensor]  # ([K] row ids, [N] column ids): same-id columns left out
    # mean CE of softmax(x [K, D] @ weight [N, D].T * scale + bias [N]) at target [K]: fp32
    KernelFn = Callable[[Tensor, Tensor, Tensor, "KernelArgs"], Tensor]


@dataclass(frozen=True)
class KernelArgs:
    """What a kernel takes beside x [K, D], weight [N, D] and target [K]."""

    bias: Tensor | None  # [N]: vanilla CE's head bias
    scale: float  # multiplies the scores (CWT: 1 / temperature)
    chunk: int  # rows per block, for the kernels that do not pick their own
    exclude: Exclude | None  # CWT's duplicates="mask"
    score_dtype: ScoreDtype = "autocast"  # the products' dtype under autocast (`product_dtype`)


@dataclass(frozen=True)
class LinearCEKernel:
    """A registered linear cross-entropy kernel and what it can do.

    ``masks``: it takes `exclude` (CWT's ``duplicates: mask``); ``vendor``: the package of a
    CUDA-only vendor kernel, checked before a run computes anything.
    """

    name: str
    compute: KernelFn
    description: str
    masks: bool = False
    vendor: Vendor | None = None

    def check_device(self, device_type: str, key: str) -> None:
        """A `UserError` naming config `key` where this kernel cannot run on `device_type`."""
        if self.vendor is None:
            return
        try:
            self.vendor.check_device(device_type)
        except UserError as e:
            raise UserError(f"{key}: {e}") from e

    def available(self, device_type: str) -> bool:
        """Whether it runs on `device_type` here (a vendor kernel: installed and CUDA)."""
        if self.vendor is None:
            return True
        try:
            self.vendor.check_device(device_type)
        except UserError:
            return False
        return True

    def __call__(
        self,
        x: Tensor,
        weight: Tensor,
        target: Tensor,
        *,
        bias: Tensor | None = None,
        scale: float = 1.0,
        chunk: int = 1024,
        exclude: Exclude | None = None,
        score_dtype: ScoreDtype = "autocast",
    ) -> Tensor:
        """The scalar fp32 loss; a `ValueError` for `exclude` where it cannot mask."""
        if exclude is not None and not self.masks:
            raise ValueError(f"impl={self.name!r} does not support duplicates='mask'")
        args = KernelArgs(bias, scale, chunk, exclude, score_dtype)
        return self.compute(x, weight, target, args)


def _chunked(recompute: bool) -> KernelFn:
    def compute(x: Tensor, weight: Tensor, target: Tensor, a: KernelArgs) -> Tensor:
        from zoo.objectives.chunked import chunked_linear_cross_entropy

        return chunked_linear_cross_entropy(
            x,
            weight,
            target,
            bias=a.bias,
            scale=a.scale,
            chunk=a.chunk,
            exclude_ids=a.exclude,
            recompute=recompute,
            score_dtype=a.score_dtype,
        )

    return compute


def _torch(x: Tensor, weight: Tensor, target: Tensor, a: KernelArgs) -> Tensor:
    """torch's `F.linear_cross_entropy`, chunked over rows, in fp32 with autocast off whatever
    `score_dtype` asks: it takes its softmax in its operands' dtype (bf16 operands round the
    loss itself to bf16)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    with torch.autocast(device_type=x.device.type, enabled=False):
        xf = x.float() if a.scale == 1.0 else x.float() * a.scale  # (K, D)
        return F.linear_cross_entropy(
            xf,
            weight.float(),
            target,
            linear_bias=a.bias.float() if a.bias is not None else None,
            options=nn.LinearCrossEntropyOptions(batch_chunk_size=a.chunk),
        )


def _vendor(fn: Callable[..., Tensor]) -> KernelFn:
    """A vendor kernel as a `KernelFn`: it picks its own blocks and cannot mask."""
    return lambda x, weight, target, a: fn(
        x, weight, target, bias=a.bias, scale=a.scale, score_dtype=a.score_dtype
    )


KERNELS: Registry[LinearCEKernel] = Registry("linear cross-entropy kernel")
for _kernel in (
    LinearCEKernel(
        "chunked",
        _chunked(recompute=False),
        "row blocks, gradients computed in the forward pass",
        masks=True,
    ),
    LinearCEKernel(
        "recompute",
        _chunked(recompute=True),
        "row blocks, only the log-sum-exp kept and recomputed in backward",
        masks=True,
    ),
    LinearCEKernel(
        "torch", _torch, "torch's F.linear_cross_entropy, chunked over rows (fp32 products)"
    ),
    LinearCEKernel(
        CCE.name,
        _vendor(cce_linear_cross_entropy),
        "Apple's Cut Cross-Entropy (bf16 operands)",
        vendor=CCE,
    ),
    LinearCEKernel(
        LIGER.name,
        _vendor(liger_linear_cross_entropy),
        "Liger-Kernel's fused linear cross-entropy",
        vendor=LIGER,
    ),
):
    KERNELS.add(_kernel.name, _kernel)
