"""Fixed-length blocks over token streams, MLM masking, CLM labels, deterministic batches.

Every batch is a pure function of (seed, step, micro-step, rank): resuming at step s replays
exactly the batches an uninterrupted run would have seen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor
from transformers import PreTrainedTokenizerBase

from zoo.errors import UserError
from zoo.tokenizers import encode_documents, special_ids

IGNORE = -100


class PackedBlocks:
    """Fixed-length blocks [N, T] over a flat token stream (documents joined by their
    separator), cut when read: nothing but the rows asked for is copied out of the stream (a
    memory map of the token cache, or an array).

    Decoder: the stream cut into T-token blocks. Encoder: cut into T - 2 token pieces, each
    wrapped as [CLS] ... [SEP]. The trailing partial block is dropped.
    """

    def __init__(self, stream: np.ndarray, seq_len: int, kind: str, special: dict[str, int]):
        self.stream = stream
        self.body = seq_len if kind == "decoder" else seq_len - 2
        self.n = len(stream) // self.body
        self.wrap = (special["cls"], special["sep"]) if kind == "encoder" else None
        if self.n == 0:
            raise UserError(
                f"corpus too small: {len(stream)} tokens, less than one block of {seq_len}"
            )

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: Tensor | slice) -> Tensor:
        """Blocks [B, T] (int64) at `index`: a tensor of block numbers or a slice."""
        rows = np.arange(self.n)[index] if isinstance(index, slice) else index.cpu().numpy()  # (B,)
        take = rows[:, None] * self.body + np.arange(self.body)[None, :]  # (B, body)
        blocks = torch.from_numpy(self.stream[take].astype(np.int64))  # (B, body)
        if self.wrap is not None:
            b = len(rows)
            cls = torch.full((b, 1), self.wrap[0], dtype=torch.long)
            end = torch.full((b, 1), self.wrap[1], dtype=torch.long)
            blocks = torch.cat([cls, blocks, end], dim=1)  # (B, T)
        return blocks


def token_stream(docs: list[str], tokenizer: PreTrainedTokenizerBase, kind: str) -> np.ndarray:
    """Documents encoded and joined, each followed by the separator (in memory)."""
    ids = special_ids(tokenizer, kind)
    sep = ids["eos"] if kind == "decoder" else ids["sep"]
    stream: list[int] = []
    for d in encode_documents(tokenizer, docs):
        stream.extend(d)
        stream.append(sep)
    return np.asarray(stream, dtype=np.int64)


def pack(docs: list[str], tokenizer: PreTrainedTokenizerBase, seq_len: int, kind: str) -> Tensor:
    """Tokenise and pack (few) documents into blocks [N, seq_len], in memory (see
    `PackedBlocks`; a corpus goes through the token cache instead)."""
    blocks = PackedBlocks(
        token_stream(docs, tokenizer, kind), seq_len, kind, special_ids(tokenizer, kind)
    )
    return blocks[:]


@dataclass(frozen=True)
class MaskingConfig:
    probability: float = 0.15
    replace_mask: float = 0.8
    replace_random: float = 0.1


def mlm_mask(
    input_ids: Tensor,
    special: list[int],
    vocab_size: int,
    mask_id: int,
    config: MaskingConfig,
    generator: torch.Generator,
) -> tuple[Tensor, Tensor]:
    """BERT masking. input_ids (Tensor): [B, T] -> (masked inputs [B, T], labels [B, T]).

    `probability` of the non-special tokens are selected; of those, `replace_mask` become
    [MASK], `replace_random` a random token, the rest stay. Labels are IGNORE elsewhere. At
    least one token is always selected.
    """
    candidates = ~torch.isin(input_ids, torch.tensor(special))  # (B, T)
    probs = torch.rand(input_ids.shape, generator=generator)
    selected = (probs < config.probability) & candidates
    if not selected.any():
        flat = candidates.flatten().nonzero().squeeze(1)
        if flat.numel() == 0:
            raise UserError("a batch holds only special tokens: nothing to mask")
        pick = flat[torch.randint(flat.numel(), (1,), generator=generator)]
        selected.view(-1)[pick] = True
    labels = input_ids.masked_fill(~selected, IGNORE)
    action = torch.rand(input_ids.shape, generator=generator)
    to_mask = selected & (action < config.replace_mask)
    to_random = (
        selected
        & (action >= config.replace_mask)
        & (action < config.replace_mask + config.replace_random)
    )
    masked = input_ids.masked_fill(to_mask, mask_id)
    random_tokens = torch.randint(vocab_size, input_ids.shape, generator=generator)
    masked = torch.where(to_random, random_tokens, masked)
    return masked, labels


def clm_labels(input_ids: Tensor) -> Tensor:
    """Next-token labels aligned with positions: labels[:, t] = input_ids[:, t + 1]. [B, T]."""
    labels = torch.full_like(input_ids, IGNORE)
    labels[:, :-1] = input_ids[:, 1:]
    return labels


class BatchSampler:
    """Deterministic sample order over `n` blocks: a fresh permutation per epoch from `seed`."""

    def __init__(self, n: int, seed: int) -> None:
        self.n, self.seed = n, seed
        self._perms: dict[int, Tensor] = {}

    def _perm(self, epoch: int) -> Tensor:
        if epoch not in self._perms:
            g = torch.Generator().manual_seed(self.seed * 1_000_003 + epoch)
            self._perms = {epoch: torch.randperm(self.n, generator=g)}
        return self._perms[epoch]

    def indices(self, start: int, count: int) -> Tensor:
        """Indices of samples start .. start+count-1 of the infinite stream."""
        out = []
        for p in range(start, start + count):
            out.append(self._perm(p // self.n)[p % self.n])
        return torch.stack(out)
