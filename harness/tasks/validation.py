"""`validation` task: validation loss / perplexity of a checkpoint on held-out text.

Reports the loss of the objective the checkpoint was last trained with (CWT for headless
models, with their loss options, computed at the pretraining micro-batch size since it depends
on K; CE after causal fine-tuning) and, where an LM head is meaningful, cross-entropy and
perplexity through it: every decoder (a headless decoder's tied head is the paper's
"headless" row) and encoders trained with a vocabulary head. Beside them, the perplexity of
the training text's unigram model on the same tokens: the bar a model must clear before its
perplexity says anything. For decoders (blocks of at least 64 tokens), `context_gain`: the
head's cross-entropy on a block's first 16 predictions minus on its second half's, how much
of what it has read the model uses (near 0 for a model that cannot yet copy a word from the
passage, as LAMBADA asks). The model code (torch, transformers) is imported when a cell
runs: checking a suite does not load it.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
from pydantic import Field

from harness.results.gates import VALIDATION as VALIDATION_GATE
from harness.tasks.base import TASKS, Identity, Result, TaskContext, TaskType
from harness.tasks.unigram import unigram_perplexity
from zoo.checksums import file_sha256, text_digest
from zoo.data.corpus import LOCAL, local_files, source_kind
from zoo.errors import UserError
from zoo.models import family_of
from zoo.objectives import OBJECTIVES, LossOptions
from zoo.settings import Settings
from zoo.train.metadata import find_metadata
from zoo.train.recipe import resolve_recipe

if TYPE_CHECKING:
    import torch

    from zoo.data.cache import CorpusSpec, Part


MAX_EVAL_BATCHES = 100_000  # 10^5 batches: hours on a CPU, any validation text's end


class ValidationParams(Settings):
    corpus: list[str] | None = Field(
        None, description="held-out sources (default: the pretraining hold-out)"
    )
    batches: int = Field(8, gt=0, le=MAX_EVAL_BATCHES)
    batch_size: int | None = Field(
        None, gt=0, description="sequences per batch; default: the pretraining micro-batch"
    )


def _held_out_text(ctx: TaskContext) -> tuple[CorpusSpec, Part]:
    """The text to score: all of the task's sources, else the pretraining's validation text
    (its validation sources, or the part held out of its corpus)."""
    from zoo.data.cache import CorpusSpec

    params: ValidationParams = ctx.params
    if params.corpus:
        return CorpusSpec(tuple(params.corpus)), "main"
    text = ctx.pretrain.training_text()
    return (text.validation, "main") if text.validation else (text.train, "held_out")


def scored_tokens(blocks: torch.Tensor, kind: str, special: dict[str, int]) -> np.ndarray:
    """The ids a language model predicts in `blocks` [N, T]: every position after the first
    (decoders), the non-special ones (encoders)."""
    import torch

    if kind == "decoder":
        return blocks[:, 1:].flatten().numpy()
    ids = blocks.flatten()
    return ids[~torch.isin(ids, torch.tensor(list(special.values())))].numpy()


def _evaluate(ctx: TaskContext, path: Path, text: tuple[CorpusSpec, Part]) -> list[Result]:
    from zoo.data.batches import MaskingConfig, PackedBlocks
    from zoo.data.cache import token_streams
    from zoo.tokenizers import load_tokenizer, special_ids
    from zoo.train.body_only import refuse_untrained_head
    from zoo.train.checkpoint import load_model
    from zoo.train.evaluate import (
        CONTEXT_MIN_TOKENS,
        context_gains,
        evaluated_blocks,
        summarize,
        validation_batches,
    )
    from zoo.train.step import TrainModule

    params: ValidationParams = ctx.params
    recipe = resolve_recipe(ctx.pretrain, ctx.spec)
    meta = find_metadata(path)
    model = load_model(str(path))
    spec = family_of(model.config)
    tokenizer = load_tokenizer(str(path))
    objective, options = OBJECTIVES.get(ctx.objective), ctx.pretrain.loss
    seq_len, batch = recipe.seq_len, recipe.micro_batch_size
    if meta is not None and meta.causal_finetune is not None:
        # a causal LM now, judged by its CE on the blocks its pretraining twin is scored on
        objective, options = OBJECTIVES.get("ce"), LossOptions()
    elif meta is not None:  # as trained: the contrastive loss depends on K per forward
        seq_len, batch = meta.seq_len, meta.recipe.micro_batch_size
        objective, options = OBJECTIVES.get(meta.objective), meta.loss_options()
    if objective.needs_head:
        refuse_untrained_head(model, f"validation by {objective.name}")
    special, batch = special_ids(tokenizer, spec.kind), params.batch_size or batch
    stream = token_streams(text[0], tokenizer, spec.kind).part(text[1])
    blocks = PackedBlocks(stream, seq_len, spec.kind, special)
    module = TrainModule(model, spec, objective, options)
    scores = validation_batches(
        module,
        blocks,
        batch,
        params.batches,
        special,
        MaskingConfig(probability=ctx.pretrain.mlm_probability),
    )
    m = summarize(scores)
    # per evaluation batch, the same batches for every model: a paired test across models
    per_batch = {
        "val_loss": {str(i): s.loss for i, s in enumerate(scores)},
        "val_ce": {str(i): s.ce for i, s in enumerate(scores)},
    }
    names = ["val_loss"]
    if spec.kind == "decoder" or objective.needs_head:
        names += ["val_ce", "val_ppl", "unigram_ppl"]
        scored = blocks[: evaluated_blocks(len(blocks), batch, params.batches)]  # (N, T)
        training = token_streams(ctx.pretrain.training_text().train, tokenizer, spec.kind)
        m["unigram_ppl"] = unigram_perplexity(
            training.counts("main"), scored_tokens(scored, spec.kind, special)
        )
    if spec.kind == "decoder" and seq_len >= CONTEXT_MIN_TOKENS:
        gains = context_gains(module, blocks, batch, params.batches)
        names.append("context_gain")
        m["context_gain"] = sum(gains) / len(gains)
        per_batch["context_gain"] = {str(i): g for i, g in enumerate(gains)}
    if meta is None:
        return [
            Result(metric=n, value=m[n], samples=per_batch[n] if n in per_batch else None)
            for n in names
        ]
    return [
        Result(
            metric=n,
            value=m[n],
            samples=per_batch[n] if n in per_batch else None,
            step=meta.pretrain_step,
            tokens_seen=meta.tokens_seen,
            train_flops=meta.train_flops,
            train_seconds=meta.wall_seconds,
        )
        for n in names
    ]


def run_validation(ctx: TaskContext) -> list[Result]:
    if ctx.checkpoint is None:
        raise UserError("validation needs a checkpoint")
    return _evaluate(ctx, ctx.checkpoint, _held_out_text(ctx))


def describe(p: ValidationParams) -> str:
    """What a validation row scored, in words: how many batches of which text."""
    size = f"{p.batch_size} sequences" if p.batch_size else "the pretraining micro-batch"
    text = ", ".join(p.corpus) if p.corpus else "the run's held-out text"
    return f"scored on {p.batches} batches of {size} from {text}"


def _data_digests(p: ValidationParams, suite_dir: Path) -> dict[str, str | None]:
    """Each local source of the text to score (`corpus:`) by its files' contents, None for
    one that names no file here; the pretraining's held-out text is keyed by the pretraining,
    a Hub source by its `#REVISION` and the synthetic language by its version."""
    out: dict[str, str | None] = {}
    for source in p.corpus or []:
        if source_kind(source) is LOCAL:
            files = local_files(source)
            sums = ",".join(file_sha256(f) for f in files)
            out[source] = text_digest(sums) if files else None
    return out


class Validation(TaskType):
    name = "validation"
    description = (
        "validation loss / perplexity on held-out text (objective loss, LM-head CE and ppl)"
    )
    params = ValidationParams
    metrics = ("val_loss", "val_ce", "val_ppl", "unigram_ppl", "context_gain")
    hub_tasks = MappingProxyType({"encoder": "fill-mask", "decoder": "text-generation"})
    gates = MappingProxyType({"": VALIDATION_GATE})

    def run(self, ctx: TaskContext) -> list[Result]:
        return run_validation(ctx)

    def identity(self, params: ValidationParams, suite_dir: Path) -> Identity:
        return Identity(data=_data_digests(params, suite_dir))

    def describe(self, params: ValidationParams) -> str:
        return describe(params)


VALIDATION = TASKS.add(Validation.name, Validation())
