"""Sentence log-probabilities for minimal pairs (BLiMP): which of two sentences a model
prefers, with no training and no prompt.

    score = sentence_scores(model, spec, tokenizer, sentences, scorer="head", batch_size=64)

- a decoder: the sum of its next-token log-probabilities over the sentence, after a
  beginning-of-text token (lm-eval's loglikelihood of the sentence from an empty context);
- an encoder: the pseudo-log-likelihood (Salazar et al. 2020): each token masked in turn,
  the log-probability of the token there given the rest, summed.

The log-probabilities come from one of two scorers:
- `head`: the model's vocabulary head (what a vanilla LM was trained to predict with);
- `cwt`: the output vector against the input embeddings, `h . e_v`, softmaxed over the
  vocabulary: the score a headless model (contrastive weight tying) was trained with, its
  in-batch negatives widened to the whole vocabulary. A tied decoder's two scorers agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from zoo.train.body_only import refuse_untrained_head

if TYPE_CHECKING:
    import torch

    from zoo.models.spec import ModelSpec

Scorer = Literal["head", "cwt"]


def _vocab_logits(model: Any, spec: ModelSpec, scorer: Scorer) -> Callable[..., torch.Tensor]:
    """h [N, D] -> log-probabilities over the vocabulary [N, V], by `scorer`."""
    import torch

    if scorer == "head":
        refuse_untrained_head(model, "the head scorer")
        head = spec.vocab_head(model)
        return lambda h: torch.log_softmax(head.logits(h).float(), dim=-1)
    emb = spec.input_embeddings(model).weight  # (V, D)
    return lambda h: torch.log_softmax((h @ emb.T).float(), dim=-1)


def _batches(order: list[int], lengths: list[int], budget: int) -> Iterator[list[int]]:
    """Indices in `order` (longest first), grouped so a batch holds at most `budget` tokens."""
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) + 1) * lengths[batch[0]] > budget:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def _padded(seqs: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    import torch

    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)  # (B, T)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for row, s in enumerate(seqs):
        ids[row, : len(s)] = torch.tensor(s)
        mask[row, : len(s)] = 1
    return ids, mask


def decoder_scores(
    model: Any, spec: ModelSpec, tokenizer: Any, sentences: list[str], scorer: Scorer, tokens: int
) -> np.ndarray:
    """Each sentence's summed next-token log-probability after a beginning-of-text token."""
    import torch

    bos = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else bos
    seqs = [[bos, *tokenizer(s, add_special_tokens=False)["input_ids"]] for s in sentences]
    lengths = [len(s) for s in seqs]
    order = sorted(range(len(seqs)), key=lambda i: -lengths[i])
    logprobs = _vocab_logits(model, spec, scorer)
    out = np.zeros(len(seqs))
    with torch.no_grad():
        for batch in _batches(order, lengths, tokens):
            ids, mask = _padded([seqs[i] for i in batch], pad)  # (B, T)
            h = spec.body(model, ids, mask)[:, :-1]  # (B, T-1, D): each predicts the next
            lp = logprobs(h.reshape(-1, h.shape[-1])).view(*h.shape[:2], -1)  # (B, T-1, V)
            picked = lp.gather(-1, ids[:, 1:, None])[..., 0] * mask[:, 1:]  # (B, T-1)
            out[batch] = picked.sum(1).double().numpy()
    return out


def encoder_scores(
    model: Any, spec: ModelSpec, tokenizer: Any, sentences: list[str], scorer: Scorer, tokens: int
) -> np.ndarray:
    """Each sentence's pseudo-log-likelihood: every non-special token masked in turn."""
    import torch

    enc = tokenizer(sentences, return_special_tokens_mask=True)
    rows = [  # (sentence, position) for every token a special token is not
        (i, t)
        for i, special in enumerate(enc["special_tokens_mask"])
        for t, is_special in enumerate(special)
        if not is_special
    ]
    lengths = [len(enc["input_ids"][i]) for i, _ in rows]
    order = sorted(range(len(rows)), key=lambda r: -lengths[r])
    logprobs = _vocab_logits(model, spec, scorer)
    out = np.zeros(len(sentences))
    with torch.no_grad():
        for batch in _batches(order, lengths, tokens):
            seqs = [list(enc["input_ids"][rows[r][0]]) for r in batch]
            targets = torch.tensor([seqs[k][rows[r][1]] for k, r in enumerate(batch)])
            positions = torch.tensor([rows[r][1] for r in batch])
            for k, r in enumerate(batch):
                seqs[k][rows[r][1]] = tokenizer.mask_token_id
            ids, mask = _padded(seqs, tokenizer.pad_token_id)  # (B, T)
            h = spec.body(model, ids, mask)[torch.arange(len(batch)), positions]  # (B, D)
            lp = logprobs(h).gather(-1, targets[:, None])[:, 0]  # (B,)
            np.add.at(out, [rows[r][0] for r in batch], lp.double().numpy())
    return out


def sentence_scores(
    model: Any,
    spec: ModelSpec,
    tokenizer: Any,
    sentences: list[str],
    scorer: Scorer,
    tokens: int = 8192,
) -> np.ndarray:
    """[N] log-probability (decoders) or pseudo-log-likelihood (encoders) of each sentence,
    in batches of at most `tokens` tokens."""
    score = decoder_scores if spec.kind == "decoder" else encoder_scores
    return score(model, spec, tokenizer, sentences, scorer, tokens)
