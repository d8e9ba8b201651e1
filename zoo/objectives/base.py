"""What the training step hands an objective's loss: the selected positions' outputs, the
targets, the input embeddings and, when the objective declares it needs them, the LM head's
pieces or untied output embeddings. The declarations (options, FLOPs, `Objective`) live in
`zoo.objectives.declared`, apart from torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch.nn.functional as F
from torch import Tensor, nn


@dataclass(frozen=True)
class VocabHead:
    """The pieces of an LM head: logits = linear(transform(h), weight, bias).

    transform: [K, D] -> [K, D] (BERT's dense+GELU+LayerNorm; identity for decoders).
    weight: [V, D] (tied to the input embeddings unless the model unties them).
    bias: [V] or None.
    """

    transform: Callable[[Tensor], Tensor]
    weight: Tensor
    bias: Tensor | None

    def logits(self, hidden: Tensor) -> Tensor:
        """hidden (Tensor): [K, D] -> [K, V]."""
        return F.linear(self.transform(hidden), self.weight, self.bias)


@dataclass(frozen=True)
class LossInputs:
    """What the step hands an objective.

    hidden (Tensor): [K, D] body outputs at the selected positions.
    targets (Tensor): [K] target token ids.
    input_embeddings (nn.Embedding): e_theta, [V, D].
    head (VocabHead | None): only when the objective declares ``needs_head``.
    output_embeddings (Tensor | None): [V, D], only when it declares ``needs_output_embeddings``.
    """

    hidden: Tensor
    targets: Tensor
    input_embeddings: nn.Embedding
    head: VocabHead | None = None
    output_embeddings: Tensor | None = None
