"""A user objective from a file of mine: CWT on cosine similarities, with options of its own."""

import torch
import torch.nn.functional as F
from pydantic import Field
from torch import Tensor

from zoo.objectives import OBJECTIVES, LossInputs, Objective, ObjectiveOptions, contrastive_flops


class CosineOptions(ObjectiveOptions):  # `loss: {temperature: 0.1, margin: 0.2}`, --loss.margin
    temperature: float = Field(0.05, gt=0, description="cosine scores are divided by it")
    margin: float = Field(0.0, ge=0, lt=2, description="subtracted from each positive's cosine")


def cosine_cwt(batch: LossInputs, options: CosineOptions) -> dict[str, Tensor]:
    """h [K, D] and e(targets) [K, D], L2-normalised, contrasted with in-batch negatives."""
    h = F.normalize(batch.hidden.float(), dim=-1)  # (K, D)
    e = F.normalize(batch.input_embeddings(batch.targets).float(), dim=-1)  # (K, D)
    scores = h @ e.T - options.margin * torch.eye(len(h), device=h.device)  # (K, K)
    target = torch.arange(len(h), device=h.device)  # (K,): the diagonal
    return {"loss": F.cross_entropy(scores / options.temperature, target)}


OBJECTIVES.add(
    "cosine-cwt",
    Objective(
        "cosine-cwt",
        cosine_cwt,
        needs_head=False,
        flops=contrastive_flops,
        options=CosineOptions,  # any other option set is refused
        description="CWT on cosine similarities, a margin on the positives",
    ),
)
