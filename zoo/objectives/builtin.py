"""The built-in objectives: ce, cwt, ce+cwt, nce.

Their declarations (`zoo.objectives.declared.register_builtin_objectives`) name these
functions; this module, and torch with it, is imported at the first loss computed.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor

from zoo.objectives.base import LossInputs, VocabHead
from zoo.objectives.cwt import cwt_loss
from zoo.objectives.declared import ContrastiveOptions, LossOptions, VocabularyOptions
from zoo.objectives.kernels import KERNELS


def ce_loss(batch: LossInputs, options: VocabularyOptions) -> dict[str, Tensor]:
    """Classical cross-entropy through the weight-tied head, at the K selected positions only.

    batch.hidden (Tensor): [K, D]; the logits [K, V] are products in autocast's dtype under
    autocast (as a Hugging Face head's), or fp32 with ``score_dtype: fp32``; the softmax fp32.
    """
    if batch.head is None:
        raise RuntimeError("the 'ce' objective needs the model's head")
    if options.ce_impl == "plain":
        logits = _logits(batch.head, batch.hidden, options)  # (K, V) fp32
        loss = F.cross_entropy(logits, batch.targets)
    else:  # a registered kernel, the vocabulary as its weight: no [K, V] tensor
        loss = KERNELS.get(options.ce_impl)(
            batch.head.transform(batch.hidden),  # (K, D)
            batch.head.weight,  # (V, D)
            batch.targets,
            bias=batch.head.bias,
            chunk=options.chunk,
            score_dtype=options.score_dtype,
        )
    return {"loss": loss, "ce": loss.detach()}


def _logits(head: VocabHead, hidden: Tensor, options: VocabularyOptions) -> Tensor:
    """[K, V] fp32 logits of hidden [K, D]: the projection under the step's autocast, or, with
    ``score_dtype: fp32``, in fp32 with autocast off (the head's transform runs as the body)."""
    if options.score_dtype == "autocast":
        return head.logits(hidden).float()
    x = head.transform(hidden)  # (K, D)
    with torch.autocast(device_type=x.device.type, enabled=False):
        bias = head.bias.float() if head.bias is not None else None
        return F.linear(x.float(), head.weight.float(), bias)


def _contrast(batch: LossInputs, targets_e: Tensor, options: ContrastiveOptions) -> Tensor:
    """h [K, D] against target vectors [K, D] with in-batch negatives, per `options`."""
    return cwt_loss(
        batch.hidden,
        targets_e,
        options.temperature,
        duplicates=options.duplicates,
        target_ids=batch.targets,
        impl=options.cwt_impl,
        chunk=options.chunk,
        negatives=options.negatives,
        score_dtype=options.score_dtype,
    )


def cwt_objective(batch: LossInputs, options: ContrastiveOptions) -> dict[str, Tensor]:
    """Headless: contrast h [K, D] against e(targets) [K, D]; never touches the head."""
    loss = _contrast(batch, batch.input_embeddings(batch.targets), options)  # e(targets): (K, D)
    return {"loss": loss, "cwt": loss.detach()}


def ce_plus_cwt(batch: LossInputs, options: LossOptions) -> dict[str, Tensor]:
    """The paper's ablation: CE + CWT, summed without weights."""
    ce = ce_loss(batch, options)["loss"]
    cwt = cwt_objective(batch, options)["loss"]
    return {"loss": ce + cwt, "ce": ce.detach(), "cwt": cwt.detach()}


def nce_objective(batch: LossInputs, options: ContrastiveOptions) -> dict[str, Tensor]:
    """NCE without weight tying: targets come from a separate [V, D] matrix, not e_theta."""
    if batch.output_embeddings is None:
        raise RuntimeError("the 'nce' objective needs the model's untied output embeddings")
    loss = _contrast(batch, F.embedding(batch.targets, batch.output_embeddings), options)  # (K, D)
    return {"loss": loss, "nce": loss.detach()}
