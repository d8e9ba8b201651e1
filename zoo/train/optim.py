"""Optimisers for pretraining: AdamW, optionally with sparse embedding updates.

AdamW runs its fused kernel (one pass over each tensor instead of about ten element-wise ops;
same update within float rounding). With `sparse_embeddings`
(headless objectives only), the input embedding gets sparse gradients and SparseAdam, so its
update costs what the batch touches instead of V x D; the rest stays on AdamW.
`clip_grad_norm` clips the global norm over dense and sparse gradients alike, with foreach
kernels and no copies of the gradients.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch.distributed.tensor import DTensor

from zoo.errors import UserError
from zoo.train.recipe import ResolvedRecipe


def grad_norm(params: list[torch.nn.Parameter]) -> Tensor:
    """The global L2 norm of the gradients, dense and sparse alike (one foreach pass), a
    float32 scalar on their device; not finite when any gradient is not. FSDP's sharded
    gradients: the norm over every rank's shards."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.zeros((), device=params[0].device if params else None)
    if isinstance(grads[0], DTensor):
        total = torch.nn.utils.get_total_norm(grads, foreach=True)
        return (total.full_tensor() if isinstance(total, DTensor) else total).float()
    dense = [g for g in grads if not g.is_sparse]
    norms = list(torch._foreach_norm(dense)) if dense else []
    norms += [torch.linalg.vector_norm(g.coalesce()._values()) for g in grads if g.is_sparse]
    return torch.linalg.vector_norm(torch.stack([n.float() for n in norms]))  # ()


def clip_grad_norm(
    params: list[torch.nn.Parameter], max_norm: float, norm: Tensor | None = None
) -> Tensor:
    """Global-norm clipping that also handles sparse gradients (sparse embeddings), on the
    device: gradients are scaled by max_norm / (norm + 1e-6) where that is under 1, and by 1
    elsewhere. `norm` when the caller has it already (`grad_norm`); returns it."""
    if norm is None:
        norm = grad_norm(params)
    # (): computed in float64 and applied in float32, as a host float scale is
    scale = (max_norm / (norm.double() + 1e-6)).clamp(max=1.0).float()
    grads = [g for p in params if (g := p.grad) is not None]
    dense = [g for g in grads if not g.is_sparse]
    if dense:
        torch._foreach_mul_(dense, scale.to(dense[0].device))
    for g in grads:
        if g.is_sparse:
            g.mul_(scale.to(g.device))
    return norm


def make_optimizer(
    model: Any, spec: Any, objective: Any, recipe: ResolvedRecipe, sparse_embeddings: bool
) -> torch.optim.Optimizer:
    """AdamW (no decay on biases / norms); with `sparse_embeddings`, the input embedding gets
    sparse gradients and SparseAdam, so its update touches only the rows in the batch."""
    params = [p for p in model.parameters() if p.requires_grad]
    sparse: list[torch.nn.Parameter] = []
    if sparse_embeddings:
        if objective.needs_head or objective.needs_output_embeddings:
            raise UserError(
                f"sparse_embeddings needs a headless objective: {objective.name!r} uses the "
                "embedding "
                "matrix densely (tied head / output matrix)"
            )
        emb = spec.input_embeddings(model)
        emb.sparse = True
        sparse = [emb.weight]
    dense = [p for p in params if all(p is not q for q in sparse)]
    decay = [p for p in dense if p.ndim >= 2]
    no_decay = [p for p in dense if p.ndim < 2]
    groups = [
        {"params": decay, "weight_decay": recipe.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    adamw = torch.optim.AdamW(
        groups, lr=recipe.lr, betas=recipe.betas, eps=recipe.eps, fused=_fusable(dense)
    )
    if not sparse:
        return adamw
    return _Combined(
        adamw, torch.optim.SparseAdam(sparse, lr=recipe.lr, betas=recipe.betas, eps=recipe.eps)
    )


def optimizers_of(optimizer: torch.optim.Optimizer) -> list[torch.optim.Optimizer]:
    """The torch optimizers behind `optimizer` (AdamW, and SparseAdam with sparse embeddings)."""
    return list(optimizer.parts) if isinstance(optimizer, _Combined) else [optimizer]


def _fusable(params: list[torch.nn.Parameter]) -> bool:
    """torch's fused AdamW takes floating-point tensors on CPU or CUDA, all on one device type."""
    devices = {p.device.type for p in params}
    return (
        len(devices) == 1
        and devices <= {"cpu", "cuda"}
        and all(p.is_floating_point() for p in params)
    )


class _Combined(torch.optim.Optimizer):
    """AdamW for dense parameters + SparseAdam for the sparse embedding, stepped together."""

    def __init__(self, dense: torch.optim.Optimizer, sparse: torch.optim.Optimizer) -> None:
        self.parts = [dense, sparse]
        super().__init__([{"params": g["params"]} for o in self.parts for g in o.param_groups], {})
        self.param_groups = [
            g for o in self.parts for g in o.param_groups
        ]  # shared: schedulers see all

    def step(self, closure: Any = None) -> None:  # type: ignore[override]
        for o in self.parts:
            o.step()

    def zero_grad(self, set_to_none: bool = True) -> None:
        for o in self.parts:
            o.zero_grad(set_to_none=set_to_none)

    def state_dict(self) -> dict[str, Any]:
        return {"parts": [o.state_dict() for o in self.parts]}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        for o, s in zip(self.parts, state_dict["parts"], strict=True):
            o.load_state_dict(s)
