"""`validation` task: validation loss / perplexity of a checkpoint on held-out text.

Reports the objective's loss (CWT for headless models, computed at the pretraining micro-batch
size since it depends on K) and, where an LM head is meaningful, cross-entropy and perplexity
through it: every decoder (a headless decoder's tied head is the paper's "headless" row) and
encoders trained with a vocabulary head.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from harness.tasks.base import Result, TaskContext, TaskType
from zoo.data.batches import MaskingConfig, pack
from zoo.data.corpus import load_documents
from zoo.models import spec_for_model_type
from zoo.objectives import OBJECTIVES, ObjectiveOptions
from zoo.tokenizers import load_tokenizer, special_ids
from zoo.train.checkpoint import load_model, read_metadata
from zoo.train.evaluate import validation_metrics
from zoo.train.pretrain import prepare_documents, resolve_recipe


class ValidationParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    corpus: list[str] | None = Field(
        None, description="held-out sources (default: the pretraining hold-out)"
    )
    batches: int = Field(8, gt=0)
    batch_size: int | None = Field(None, gt=0, description="default: the pretraining micro-batch")


def run_validation(ctx: TaskContext) -> list[Result]:
    params: ValidationParams = ctx.params
    cfg = ctx.pretrain
    recipe = resolve_recipe(cfg, ctx.spec)
    _, val_docs = prepare_documents(cfg)
    if params.corpus:
        val_docs = load_documents(params.corpus)
    points = ctx.checkpoints or ([(0, ctx.checkpoint)] if ctx.checkpoint else [])
    results: list[Result] = []
    for _, path in points:
        assert path is not None
        meta = read_metadata(path)
        model = load_model(str(path))
        spec = spec_for_model_type(model.config.model_type)
        tokenizer = load_tokenizer(str(path))
        seq_len = int(meta.get("seq_len") or recipe.seq_len)
        blocks = pack(val_docs, tokenizer, seq_len, spec.kind)
        objective = OBJECTIVES.get(meta.get("objective", ctx.objective))
        batch_size = params.batch_size or recipe.batch_size
        m = validation_metrics(
            model,
            spec,
            objective,
            ObjectiveOptions(temperature=cfg.temperature, duplicates=cfg.duplicates),  # type: ignore[arg-type]
            blocks,
            batch_size,
            params.batches,
            special_ids(tokenizer, spec.kind),
            MaskingConfig(probability=cfg.mlm_probability),
        )
        names = ["val_loss"]
        if spec.kind == "decoder" or objective.needs_head:
            names += ["val_ce", "val_ppl"]
        common = dict(
            step=meta.get("steps"),
            tokens_seen=meta.get("tokens_seen"),
            train_flops=meta.get("train_flops"),
            train_seconds=meta.get("wall_seconds"),
        )
        results += [Result(metric=n, value=m[n], **common) for n in names]
    return results


VALIDATION = TaskType(
    name="validation",
    description="validation loss / perplexity on held-out text (objective loss, LM-head CE and ppl)",
    run=run_validation,
    params=ValidationParams,
    metrics=("val_loss", "val_ce", "val_ppl"),
)
