"""Optimisers for pretraining: AdamW, optionally with sparse embedding updates.

With `sparse_embeddings` (headless objectives only), the input embedding gets sparse gradients
and SparseAdam, so its update costs what the batch touches instead of V x D; the rest stays on
AdamW. `clip_grad_norm` clips the global norm over dense and sparse gradients alike.
"""

from __future__ import annotations

from typing import Any

import torch

from zoo.errors import UserError
from zoo.train.config import ResolvedRecipe


def clip_grad_norm(params: list[torch.nn.Parameter], max_norm: float) -> float:
    """Global-norm clipping that also handles sparse gradients (sparse embeddings)."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    sq = [(g.coalesce()._values() if g.is_sparse else g).float().pow(2).sum() for g in grads]
    norm = float(torch.stack(sq).sum().sqrt())
    if norm > max_norm:
        scale = max_norm / (norm + 1e-6)
        for g in grads:
            g.mul_(scale)
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
                f"sparse_embeddings needs a headless objective: {objective.name!r} uses the embedding "
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
    adamw = torch.optim.AdamW(groups, lr=recipe.lr, betas=recipe.betas, eps=recipe.eps)
    if not sparse:
        return adamw
    return _Combined(
        adamw, torch.optim.SparseAdam(sparse, lr=recipe.lr, betas=recipe.betas, eps=recipe.eps)
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
