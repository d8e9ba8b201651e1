"""A user objective, registered from a file of mine: CWT on cosine similarities."""

import torch.nn.functional as F
from torch import Tensor

from zoo.objectives import OBJECTIVES, LossInputs, Objective, ObjectiveOptions, cwt_loss


def cosine_cwt(batch: LossInputs, options: ObjectiveOptions) -> dict[str, Tensor]:
    """h [K, D] and e(targets) [K, D], L2-normalised, contrasted with in-batch negatives."""
    h = F.normalize(batch.hidden.float(), dim=-1)  # (K, D)
    e = F.normalize(batch.input_embeddings(batch.targets).float(), dim=-1)  # (K, D)
    loss = cwt_loss(h, e, temperature=0.05)
    return {"loss": loss}


OBJECTIVES.add(
    "cosine-cwt",
    Objective("cosine-cwt", cosine_cwt, needs_head=False, description="CWT on cosine similarities"),
)
