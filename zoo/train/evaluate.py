"""Validation metrics of a model on packed blocks, with a fixed masking seed.

Reports the objective's loss (for CWT it depends on K, the selected positions per batch, so it
is computed at the training micro-batch size) and, for every model, the cross-entropy through
its (tied or fine-tuned) LM head and the matching perplexity. For decoders, `context_gains`
says how much of the block's context the model uses: the head's cross-entropy on a block's
first tokens, which see little context, minus on its second half.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from zoo.data.batches import IGNORE, MaskingConfig, PackedBlocks, clm_labels, mlm_mask
from zoo.models.spec import ModelSpec
from zoo.objectives import OBJECTIVES
from zoo.train.step import TrainModule

EVAL_SEED = 1234
EARLY_POSITIONS = 16  # the first predicted tokens of a block: at most 16 tokens of context
CONTEXT_MIN_TOKENS = 4 * EARLY_POSITIONS  # the shortest block `context_gains` reads


def make_labels(
    spec: type[ModelSpec] | ModelSpec,
    blocks: Tensor,
    vocab_size: int,
    special: dict[str, int],
    masking: MaskingConfig,
    generator: torch.Generator,
) -> tuple[Tensor, Tensor]:
    """(inputs, labels) for a batch of blocks [B, T]: MLM masking for encoders, shift for
    decoders."""
    if spec.kind == "encoder":
        return mlm_mask(
            blocks,
            [special["pad"], special["cls"], special["sep"], special["mask"]],
            vocab_size,
            special["mask"],
            masking,
            generator,
        )
    return blocks, clm_labels(blocks)


def evaluated_blocks(n: int, batch_size: int, max_batches: int) -> int:
    """How many of `n` blocks `validation_batches` reads: whole batches only, up to
    `max_batches` (K stays comparable across batches), or all of them when under one batch."""
    n_eval = min(n, batch_size * max_batches)
    return n_eval if n_eval < batch_size else n_eval // batch_size * batch_size


@dataclass(frozen=True)
class BatchScore:
    """One evaluation batch: the objective's mean loss, the LM head's summed cross-entropy
    and the number of scored tokens."""

    loss: float
    ce_sum: float
    tokens: int

    @property
    def ce(self) -> float:
        return self.ce_sum / max(1, self.tokens)


def _evaluated_chunks(
    step: TrainModule, blocks: Tensor | PackedBlocks, batch_size: int, max_batches: int
) -> Iterator[Tensor]:
    """The batches of `blocks` [B, T] an evaluation reads (`evaluated_blocks`), with the model
    in eval mode meanwhile and put back in the mode it was found in afterwards."""
    model = step.model
    was_training = model.training
    model.eval()
    try:
        for start in range(0, evaluated_blocks(len(blocks), batch_size, max_batches), batch_size):
            yield blocks[start : start + batch_size]
    finally:
        model.train(was_training)


@torch.no_grad()
def validation_batches(
    step: TrainModule,
    blocks: Tensor | PackedBlocks,
    batch_size: int,
    max_batches: int,
    special: dict[str, int],
    masking: MaskingConfig,
) -> list[BatchScore]:
    """The scores of `step` on each of the first `max_batches` batches of `blocks`, with the
    fixed masking seed (two models see the same batches, masked alike: paired). `step` is the
    run's train module (FSDP's root, which gathers the parameters) or one made around a
    loaded model."""
    model, spec = step.model, step.spec
    gen = torch.Generator().manual_seed(EVAL_SEED)
    head_ce = OBJECTIVES.get("ce")
    device = spec.input_embeddings(model).weight.device
    out = []
    for chunk in _evaluated_chunks(step, blocks, batch_size, max_batches):  # (B, T)
        inputs, labels = make_labels(spec, chunk, model.config.vocab_size, special, masking, gen)
        inputs, labels = inputs.to(device), labels.to(device)
        k = int((labels != IGNORE).sum())
        loss = float(step(inputs, labels)["loss"])
        ce = float(step(inputs, labels, objective=head_ce)["loss"])
        out.append(BatchScore(loss=loss, ce_sum=ce * k, tokens=k))
    return out


def summarize(scores: list[BatchScore]) -> dict[str, float]:
    """The mean objective loss over batches, the token-weighted cross-entropy and its
    perplexity."""
    loss = sum(s.loss for s in scores) / max(1, len(scores))
    ce = sum(s.ce_sum for s in scores) / max(1, sum(s.tokens for s in scores))
    return {"val_loss": loss, "val_ce": ce, "val_ppl": math.exp(min(ce, 50.0))}


@torch.no_grad()
def context_gains(
    step: TrainModule, blocks: Tensor | PackedBlocks, batch_size: int, max_batches: int
) -> list[float]:
    """Per evaluation batch of decoder blocks [B, T] (the batches `validation_batches` reads):
    the LM head's cross-entropy on the first `EARLY_POSITIONS` predicted tokens of each block
    minus on the predictions of its second half, in nats. Near 0: the model predicts from the
    last few tokens only, an n-gram model; larger: it uses what it has read (Olsson et al.'s
    in-context learning score, signed so that higher is more use)."""
    spec = step.spec
    if spec.kind != "decoder":
        raise ValueError("context_gains reads next-token predictions: decoders only")
    width = blocks[0:1].shape[1]
    if width < CONTEXT_MIN_TOKENS:
        raise ValueError(f"blocks of {width} tokens: context_gains needs {CONTEXT_MIN_TOKENS}")
    head_ce, device = OBJECTIVES.get("ce"), spec.input_embeddings(step.model).weight.device
    out = []
    for chunk in _evaluated_chunks(step, blocks, batch_size, max_batches):
        inputs = chunk.to(device)  # (B, T)
        labels = clm_labels(inputs)  # (B, T): position t predicts token t + 1
        early, late = labels.clone(), labels.clone()
        early[:, EARLY_POSITIONS:] = IGNORE  # predictions from 1..16 tokens of context
        late[:, : width // 2] = IGNORE  # predictions from more than T/2 tokens of context
        ce = [float(step(inputs, lab, objective=head_ce)["loss"]) for lab in (early, late)]
        out.append(ce[0] - ce[1])
    return out
