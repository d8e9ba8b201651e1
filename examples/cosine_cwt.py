"""A user objective from a file of mine: CWT on cosine similarities, with its own temperature."""

import torch.nn.functional as F
from pydantic import Field
from torch import Tensor

from zoo.objectives import (
    OBJECTIVES,
    LossInputs,
    LossOptions,
    Objective,
    contrastive_flops,
    cwt_loss,
)


class CosineOptions(LossOptions):  # a suite or config sets it as `loss: {temperature: 0.1}`
    temperature: float = Field(0.05, gt=0, description="cosine scores are divided by it")


def cosine_cwt(batch: LossInputs, options: LossOptions) -> dict[str, Tensor]:
    """h [K, D] and e(targets) [K, D], L2-normalised, contrasted with in-batch negatives."""
    h = F.normalize(batch.hidden.float(), dim=-1)  # (K, D)
    e = F.normalize(batch.input_embeddings(batch.targets).float(), dim=-1)  # (K, D)
    return {"loss": cwt_loss(h, e, temperature=options.temperature)}


OBJECTIVES.add(
    "cosine-cwt",
    Objective(
        "cosine-cwt", cosine_cwt, needs_head=False, flops=contrastive_flops, options=CosineOptions
    ),
)
