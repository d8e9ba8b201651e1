"""Causal fine-tuning of a headless decoder (paper section 3.3 and Appendix E.3).

A new LM head is initialised from a copy of the input embeddings (the tied head the headless
model implicitly has), then trained with plain cross-entropy on the causal objective. With
`probe` only the head is trained (body frozen). The output loads with `AutoModelForCausalLM`
and has an untied head; its metadata keeps the *pretraining* objective and records the
fine-tuning beside it (`CheckpointMetadata.causal_finetune`).

    finetune_causal("runs/pythia-cwt/final", "runs/pythia-cwt-ft", CausalFinetuneConfig(steps=500))
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from zoo.errors import UserError, format_validation_error
from zoo.train.config import PretrainConfig
from zoo.train.metadata import CheckpointMetadata, read_metadata
from zoo.train.pretrain import pretrain
from zoo.train.sections.limits import MAX_POSITIONS, MAX_SEQUENCES, MAX_STEPS


class CausalFinetuneConfig(BaseModel):
    """Section 4.2 and Table 15: 10000 steps (about 7% of Pythia's 143000) at a constant
    learning rate after a linear warm-up of 20% of them, a global batch a quarter of
    pretraining's (256 for 1024), plain cross-entropy, no weight decay.

    The learning rate is 1e-4, as section 4.2's text says; Table 15 prints 1e-5. We follow the
    text because it describes the run behind Figure 4, whose curves it discusses, while the
    table stands alone; a suite sets `finetune: {lr: 1.0e-5}` for the table's value. Unset
    batch size, sequence length and corpus derive from the pretraining (the checkpoint's
    metadata)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int = Field(1000, gt=0, le=MAX_STEPS, description="fine-tuning steps")
    lr: float = Field(
        1e-4, gt=0, allow_inf_nan=False, description="constant learning rate after warm-up"
    )
    warmup_steps: int | None = Field(
        None, ge=0, description="linear warm-up steps; unset: 20% of the steps (Table 15)"
    )
    batch_size: int | None = Field(
        None,
        gt=0,
        le=MAX_SEQUENCES,
        description="global batch; unset: a quarter of the pretraining batch",
    )
    seq_len: int | None = Field(
        None,
        gt=0,
        le=MAX_POSITIONS,
        description="sequence length, at most the model's positions; unset: the pretraining one",
    )
    corpus: list[str] | None = Field(
        None, min_length=1, description="corpus sources; unset: the pretraining corpus"
    )
    probe: bool = Field(False, description="train only the LM head (body frozen)")
    seed: int = Field(0, ge=0, le=2**32 - 1, description="seed of batches and dropout")
    progress: bool = Field(True, description="progress bar")
    overwrite: bool = Field(
        False,
        description="clear an output folder that holds a run already and start anew (without "
        "it, such a folder is refused)",
    )


def finetune_causal(
    checkpoint: str, output_dir: str, settings: CausalFinetuneConfig | None = None
) -> Path:
    """Fine-tune `checkpoint` causally into `output_dir`; returns the final checkpoint folder."""
    s = settings or CausalFinetuneConfig()
    if not Path(checkpoint).is_dir():
        raise UserError(f"checkpoint not found: {checkpoint}")
    source, target = Path(checkpoint).resolve(), Path(output_dir).resolve()
    if source == target or source.is_relative_to(target):
        raise UserError(
            f"output folder {output_dir}: is or holds the checkpoint {checkpoint} being "
            "fine-tuned; writing there would destroy the input: choose another folder"
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
