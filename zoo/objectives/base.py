"""What an objective is, and what it receives from the model.

An `Objective` is a pure loss function plus a declaration of what it needs from the model:

- ``needs_head``: the vocabulary projection (weight-tied LM head). A headless objective
  (``needs_head=False``) is never handed the head, so no [K, V] tensor can exist in its step.
- ``needs_output_embeddings``: a separate (untied) target-embedding matrix [V, D], as in NCE
  without weight tying. The model keeps it as its (untied) output embeddings.

The training step selects the K positions (masked tokens for MLM, next-token positions for
CLM), runs the body once, and calls ``objective.loss(LossInputs(...), options)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch.nn.functional as F
from torch import Tensor, nn

from zoo.objectives.cwt import Duplicates, Impl, Negatives

CEImpl = Literal["plain", "chunked", "torch", "cce", "liger"]


@dataclass(frozen=True)
class ObjectiveOptions:
    """Knobs shared by the built-in objectives (ignored by those that have no use for them).

    cwt_impl: how the contrastive term is computed (see `cwt_loss`).
    ce_impl: how the vocabulary cross-entropy is computed at the K selected positions:
    ``plain`` ([K, V] logits at once), ``chunked`` (our row-chunked linear CE, never the full
    logits), ``torch`` (``F.linear_cross_entropy`` with chunking), ``cce`` / ``liger`` (the
    vendors' fused Triton kernels, CUDA only: `zoo.objectives.external`).
    negatives: ``local`` or ``global`` (contrastive terms: all ranks' targets, see `cwt_loss`).
    """

    temperature: float = 1.0
    duplicates: Duplicates = "keep"
    cwt_impl: Impl = "auto"
    ce_impl: CEImpl = "plain"
    chunk: int = 1024
    negatives: Negatives = "local"


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


LossFn = Callable[[LossInputs, ObjectiveOptions], dict[str, Tensor]]


@dataclass(frozen=True)
class Objective:
    """A registered pretraining objective.

    ``loss`` returns a dict with at least ``"loss"`` (the scalar to minimise); other entries
    (e.g. ``"ce"``, ``"cwt"``) are logged.
    """

    name: str
    loss: LossFn
    needs_head: bool
    needs_output_embeddings: bool = False
    description: str = ""

    @property
    def headless(self) -> bool:
        return not self.needs_head
