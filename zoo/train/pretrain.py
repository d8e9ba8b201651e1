"""Pretraining: plain PyTorch, small on purpose (the loss is the subject).

    final_dir = pretrain(PretrainConfig(preset="bert-tiny", objective="cwt", output_dir="runs/x"))

Two named stages: `zoo.train.setup.setup` (kernels, model, tokenizer, data, optimizer, resume
state) and `zoo.train.loop.fit` (the steps, evaluation, checkpoints, stopping rule).

Output folder layout:
    config.yaml               the resolved configuration
    tokenizer/                the tokenizer (trained on the corpus unless one was given)
    metrics.jsonl             one JSON line per log / eval step (step, loss, lr, tokens/s, peak RSS)
    checkpoints/step-N/       HF checkpoint + training_state.pt (every `save_every` steps)
    final/                    HF checkpoint at the end (AutoModelForMaskedLM / ForCausalLM)
"""

from __future__ import annotations

from pathlib import Path

from zoo.numerics import flush_denormal
from zoo.train.config import PretrainConfig
from zoo.train.distributed import init_distributed, resolve_device, shutdown_distributed
from zoo.train.loop import fit
from zoo.train.setup import setup


def pretrain(cfg: PretrainConfig, resume: bool = False) -> Path:
    """Train per `cfg` (continuing its last checkpoint with `resume`); returns `final/`."""
    ctx = init_distributed(resolve_device(cfg.device))
    try:
        with flush_denormal(cfg.flush_denormal):
            return fit(setup(cfg, resume, ctx))
    finally:
        shutdown_distributed(ctx)
