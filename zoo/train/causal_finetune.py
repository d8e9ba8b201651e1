"""Causal fine-tuning of a headless decoder (paper section 3.3 and Appendix E.3).

A new LM head is initialised from a copy of the input embeddings (the tied head the headless
model implicitly has; an NCE model keeps its separate target-embedding matrix, which its loss
trained, as the head), then trained with plain cross-entropy on the causal objective. A
decoder whose objective trained an LM head (`ce`, `ce+cwt`) is refused: its head would be
replaced. With
`probe` only the head is trained (body frozen). The output loads with `AutoModelForCausalLM`
and has an untied head; its metadata keeps the *pretraining* objective and records the
fine-tuning beside it (`CheckpointMetadata.causal_finetune`).

    finetune_causal("runs/pythia-cwt/final", "runs/pythia-cwt-ft", CausalFinetuneConfig(steps=500))
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from zoo.errors import UserError, format_validation_error
from zoo.train.checkpoint import not_found
from zoo.train.config import PretrainConfig
from zoo.train.finetune_settings import CausalFinetuneConfig
from zoo.train.layout import inputs_at_risk
from zoo.train.metadata import CheckpointMetadata, read_metadata
from zoo.train.pretrain import pretrain


def finetune_causal(
    checkpoint: str, output_dir: str, settings: CausalFinetuneConfig | None = None
) -> Path:
    """Fine-tune `checkpoint` causally into `output_dir`; returns the final checkpoint folder."""
    s = settings or CausalFinetuneConfig()
    if not Path(checkpoint).is_dir():
        raise not_found(checkpoint)
    risky = inputs_at_risk(Path(output_dir), {"the checkpoint": checkpoint})
    if risky:
        raise UserError(
            f"output folder {output_dir}: is, holds or lies among the files of the run of the "
            f"checkpoint {checkpoint} being fine-tuned; writing there would destroy the input "
            "or mix a second run into it: choose another folder"
        )
    meta = read_metadata(checkpoint)
    if meta.kind != "decoder":
        raise UserError(
            f"{checkpoint}: causal fine-tuning applies to decoders, this is an {meta.kind}"
        )
    try:
        cfg = _pretrain_config(checkpoint, output_dir, s, meta)
    except ValidationError as exc:
        raise UserError(format_validation_error(exc, f"fine-tuning {checkpoint}")) from None
    return pretrain(cfg)


def _pretrain_config(
    checkpoint: str, output_dir: str, s: CausalFinetuneConfig, meta: CheckpointMetadata
) -> PretrainConfig:
    """The pretraining run that fine-tunes `checkpoint`: causal CE, a new head, a constant rate."""
    return PretrainConfig(
        preset=meta.preset,
        objective="ce",
        output_dir=output_dir,
        init_from=checkpoint,
        untie_head=True,
        freeze_body=s.probe,
        corpus=s.corpus or meta.corpus,
        steps=s.steps,
        lr=s.lr,
        warmup_steps=s.warmup_steps if s.warmup_steps is not None else s.steps // 5,
        schedule="constant",
        weight_decay=0.0,
        batch_size=s.batch_size or max(1, meta.batch_size // 4),
        seq_len=s.seq_len or meta.seq_len,
        seed=s.seed,
        progress=s.progress,
        overwrite=s.overwrite,
    )
