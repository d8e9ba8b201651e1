"""Pretraining: plain PyTorch, small on purpose (the loss is the subject).

    final_dir = pretrain(PretrainConfig(preset="bert-tiny", objective="cwt", output_dir="runs/x"))

Two named stages: `zoo.train.setup.setup` (kernels, model, tokenizer, data, optimizer, resume
state) and `zoo.train.loop.fit` (the steps, evaluation, checkpoints, stopping rule).

Output folder layout:
    config.yaml          the configuration as given (hlm pretrain --config reads it back)
    resolved.yaml        the numbers the preset's recipe filled in, kind, vocabulary
    tokenizer/           the tokenizer (trained on the corpus unless one was given)
    metrics.jsonl        one JSON line per log / eval step (step, loss, lr, tokens/s, peak RSS)
    checkpoints/step-N/  HF checkpoint + training_state.pt + sharded/ (every `save_every` steps)
    final/               HF checkpoint at the end (AutoModelForMaskedLM / ForCausalLM)
"""

from __future__ import annotations

import logging
from pathlib import Path

from zoo.numerics import flush_denormal
from zoo.train.config import PretrainConfig
from zoo.train.distributed import init_distributed, resolve_device, shutdown_distributed
from zoo.train.loop import fit
from zoo.train.setup import setup

log = logging.getLogger(__name__)


def _doing(cfg: PretrainConfig, step: int) -> str:
    """What the run does, as its first log line says it."""
    if step:
        return "resuming"
    if cfg.untie_head:  # a head from the embeddings: the causal fine-tuning of a headless model
        return f"causally fine-tuning {cfg.init_from} as"
    return "pretraining"


def pretrain(cfg: PretrainConfig, resume: bool | str = False, until: int | None = None) -> Path:
    """Train per `cfg` (continuing its last checkpoint with `resume`, or the checkpoint
    `resume` names); returns `final/`.

    `until`: make the checkpoint at that step of the run already in `cfg.output_dir` (whose
    final/ exists) by resuming from its nearest earlier checkpoint, or from the start; training
    is deterministic, so it is the checkpoint an uninterrupted run saving there would have
    written. Returns `checkpoints/step-N/`; nothing else in the folder changes."""
    ctx = init_distributed(resolve_device(cfg.device), cfg.strategy)
    try:
        with flush_denormal(cfg.flush_denormal):
            run = setup(cfg, resume, ctx, until)
            r = run.recipe
            log.info(
                "%s %s/%s on %s x%d: %d steps of %d x %d tokens (lr %g, %s), vocabulary %d",
                _doing(cfg, run.counters.step),
                cfg.preset,
                cfg.objective,
                ctx.device.type,
                ctx.world_size,
                r.steps,
                r.batch_size,
                r.seq_len,
                r.lr,
                r.schedule,
                run.spec.vocab_size,
            )
            final = fit(run, until)
            ctx.barrier()  # every rank's last collective done before any rank tears gloo down
            log.info(
                "%s: %d steps, %d tokens seen", final, run.counters.step, run.counters.tokens_seen
            )
            return final
    finally:
        shutdown_distributed(ctx)
