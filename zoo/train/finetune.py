"""Causal fine-tuning of a headless decoder (paper section 3.3 and Appendix E.3).

A new LM head is initialised from a copy of the input embeddings (the tied head the headless
model implicitly has), then trained with plain cross-entropy on the causal objective. With
`probe=True` only the head is trained (body frozen). The output loads with
`AutoModelForCausalLM` and has an untied head.
"""

from __future__ import annotations

from pathlib import Path

from zoo.errors import UserError
from zoo.train.checkpoint import read_metadata
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


def finetune_causal(
    checkpoint: str,
    output_dir: str,
    *,
    steps: int = 1000,
    lr: float = 1e-4,
    warmup_steps: int = 100,
    batch_size: int | None = None,
    seq_len: int | None = None,
    corpus: list[str] | None = None,
    probe: bool = False,
    seed: int = 0,
    progress: bool = True,
) -> Path:
    """Defaults follow section 4.2: constant LR 1e-4 after linear warm-up; scale steps to
    about 2% of pretraining. Returns the final checkpoint folder."""
    meta = read_metadata(checkpoint)
    if not Path(checkpoint).is_dir():
        raise UserError(f"checkpoint not found: {checkpoint}")
    if meta.get("kind", "decoder") != "decoder":
        raise UserError(
            f"{checkpoint}: causal fine-tuning applies to decoders, this is an {meta['kind']}"
        )
    cfg = PretrainConfig(
        preset=meta.get("preset", "pythia-tiny"),
        objective="ce",
        output_dir=output_dir,
        init_from=checkpoint,
        untie_head=True,
        freeze_body=probe,
        corpus=corpus or meta.get("corpus", ["synthetic"]),
        steps=steps,
        lr=lr,
        warmup_steps=warmup_steps,
        schedule="constant",
        weight_decay=0.0,
        batch_size=batch_size or meta.get("batch_size"),
        seq_len=seq_len or meta.get("seq_len"),
        seed=seed,
        progress=progress,
    )
    return pretrain(cfg)
