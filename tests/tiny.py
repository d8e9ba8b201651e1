"""The tiny pretraining run the training and reliability tests share: 4 x 32 tokens a step
on the synthetic corpus, a 400-word vocabulary, one metrics line per step, no progress bar.
Each test adds its preset, objective, steps and checkpoints."""

from __future__ import annotations

TINY_RUN = dict(
    batch_size=4,
    seq_len=32,
    vocab_size=400,
    corpus=["synthetic:300"],
    progress=False,
    log_every=1,
)
