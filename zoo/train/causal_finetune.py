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

from pydantic import BaseModel, ConfigDict, Field

from zoo.errors import UserError
from zoo.train.config import PretrainConfig
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain


class CausalFinetuneConfig(BaseModel):
    """Section 4.2: constant learning rate 1e-4 after a linear warm-up; scale the steps to
    about 2% of pretraining. Unset batch size, sequence length and corpus are the
    pretraining's (from the checkpoint's metadata)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int = Field(1000, gt=0, description="fine-tuning steps")
    lr: float = Field(
        1e-4, gt=0, allow_inf_nan=False, description="constant learning rate after warm-up"
    )
    warmup_steps: int = Field(100, ge=0, description="linear warm-up steps")
    batch_size: int | None = Field(
        None, gt=0, description="micro-batch size; unset: the pretraining one"
    )
    seq_len: int | None = Field(
        None, gt=0, description="sequence length; unset: the pretraining one"
    )
    corpus: list[str] | None = Field(
        None, description="corpus sources; unset: the pretraining corpus"
    )
    probe: bool = Field(False, description="train only the LM head (body frozen)")
    seed: int = Field(0, ge=0, description="seed of batches and dropout")
    progress: bool = Field(True, description="progress bar")


def finetune_causal(
    checkpoint: str, output_dir: str, settings: CausalFinetuneConfig | None = None
) -> Path:
    """Fine-tune `checkpoint` causally into `output_dir`; returns the final checkpoint folder."""
    s = settings or CausalFinetuneConfig()
    if not Path(checkpoint).is_dir():
        raise UserError(f"checkpoint not found: {checkpoint}")
    meta = read_metadata(checkpoint)
    if meta.kind != "decoder":
        raise UserError(
            f"{checkpoint}: causal fine-tuning applies to decoders, this is an {meta.kind}"
        )
    cfg = PretrainConfig(
        preset=meta.preset,
        objective="ce",
        output_dir=output_dir,
        init_from=checkpoint,
        untie_head=True,
        freeze_body=s.probe,
        corpus=s.corpus or meta.corpus,
        steps=s.steps,
        lr=s.lr,
        warmup_steps=s.warmup_steps,
        schedule="constant",
        weight_decay=0.0,
        batch_size=s.batch_size or meta.recipe.batch_size,
        seq_len=s.seq_len or meta.seq_len,
        seed=s.seed,
        progress=s.progress,
    )
    return pretrain(cfg)
