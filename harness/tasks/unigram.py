"""The unigram bar of a perplexity: what the training text's token frequencies alone score.

A language model's perplexity says something only once it beats the add-one unigram model of
the text it was trained on, scored on the same tokens. `validation` reports that bar beside its
per-token perplexity (`unigram_perplexity`); `lm_eval` beside the perplexity of each
loglikelihood task, LAMBADA's among them (`target_perplexity`: lm-eval's perplexity is per
target, the exponential of the mean negative log-likelihood of a whole continuation, so the
unigram model's is the product of the target tokens' probabilities, averaged the same way).
The counts are the training text's, counted when its token cache was built (`zoo.data.cache`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import ValidationError

from zoo.errors import UserError
from zoo.train.config import PretrainConfig
from zoo.train.metadata import find_metadata

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

log = logging.getLogger(__name__)


def unigram_log_probs(counts: np.ndarray) -> np.ndarray:
    """log p of each token id under the add-one unigram model of token `counts` [V]."""
    return np.log((counts + 1.0) / (counts.sum() + len(counts)))  # (V,)


def unigram_perplexity(counts: np.ndarray, scored: np.ndarray) -> float:
    """Perplexity per token on `scored` ids of the add-one unigram model with token `counts`
    [V]: the bar a language model must clear to have learnt more than token frequencies."""
    return float(np.exp(-unigram_log_probs(counts)[scored].mean()))


def target_perplexity(counts: np.ndarray, targets: list[list[int]]) -> float:
    """Perplexity per target (each a list of token ids) of the add-one unigram model with token
    `counts` [V], as lm-eval's `perplexity` aggregates a loglikelihood task: exp of the mean,
    over targets, of minus the sum of the target's token log-probabilities."""
    log_p = unigram_log_probs(counts)
    return float(np.exp(-np.mean([log_p[ids].sum() for ids in targets])))


def training_counts(checkpoint: Path, tokenizer: PreTrainedTokenizerBase) -> np.ndarray | None:
    """Token counts [V] of the text `checkpoint` was pretrained on, by the config its metadata
    records; None for a checkpoint without that record (a Hub model, an older checkpoint),
    and, with a warning, for one whose recorded text cannot be read here."""
    from zoo.data.cache import token_streams  # the token cache: torch and transformers

    meta = find_metadata(checkpoint) if checkpoint.is_dir() else None
    if meta is None or not meta.config:
        return None
    try:
        config = PretrainConfig.model_validate({**meta.config, "output_dir": ""})
        text = config.training_text().train
        return token_streams(text, tokenizer, meta.kind).counts("main")
    except (ValidationError, UserError) as exc:
        log.warning("%s: no unigram bar, its training text cannot be read: %s", checkpoint, exc)
        return None
