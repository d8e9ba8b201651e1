"""Tokenizers: train byte-level BPE (decoders) or WordPiece (encoders) locally, or load one.

Trained tokenizers are wrapped as Hugging Face fast tokenizers and saved with each checkpoint,
so `AutoTokenizer.from_pretrained(checkpoint)` works without this package. transformers is
imported where a tokenizer is made or loaded: the special tokens and vocabulary bounds, which
a config's checks read, do not load it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from zoo.checkpoint_files import check_tokenizer_files
from zoo.errors import UserError

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast

ENCODER_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
DECODER_SPECIALS = ["<|endoftext|>", "<|pad|>"]


def min_vocab_size(kind: str) -> int:
    """Smallest vocabulary that leaves room beyond the special tokens (and byte alphabet)."""
    return len(ENCODER_SPECIALS) + 1 if kind == "encoder" else len(DECODER_SPECIALS) + 256 + 1


def _batches(texts: Iterable[str], size: int = 1000) -> Iterator[list[str]]:
    batch: list[str] = []
    for t in texts:
        batch.append(t)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def train_tokenizer(texts: Iterable[str], vocab_size: int, kind: str) -> PreTrainedTokenizerFast:
    """Train a WordPiece (kind='encoder', lower-cased like bert-uncased) or byte-level BPE
    (kind='decoder') tokenizer of exactly `vocab_size` entries at most."""
    from transformers import PreTrainedTokenizerFast

    need = min_vocab_size(kind)
    if vocab_size < need:
        raise UserError(
            f"vocab_size {vocab_size} is too small for a {kind} tokenizer: it must be >= {need} "
            f"(special tokens{' + 256 bytes' if kind == 'decoder' else ''} + 1)"
        )
    if kind == "encoder":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=True)
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        wp_trainer = trainers.WordPieceTrainer(
            vocab_size=vocab_size, special_tokens=ENCODER_SPECIALS, show_progress=False
        )
        tok.train_from_iterator(_batches(texts), trainer=wp_trainer)
        # The trainer numbers its vocabulary in hash-map order (differs run to run): renumber
        # it canonically (specials first, then by length and text) so training is deterministic.
        learned = tok.get_vocab()
        rest = sorted((t for t in learned if t not in ENCODER_SPECIALS), key=lambda t: (len(t), t))
        canonical = {t: i for i, t in enumerate([*ENCODER_SPECIALS, *rest])}
        tok.model = models.WordPiece(canonical, unk_token="[UNK]")
        cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
        )
        tok.decoder = decoders.WordPiece()
        return PreTrainedTokenizerFast(
            tokenizer_object=tok,
            unk_token="[UNK]",
            pad_token="[PAD]",
            cls_token="[CLS]",
            sep_token="[SEP]",
            mask_token="[MASK]",
            model_max_length=512,
        )
    if kind == "decoder":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=DECODER_SPECIALS,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(_batches(texts), trainer=trainer)
        return PreTrainedTokenizerFast(
            tokenizer_object=tok,
            bos_token="<|endoftext|>",
            eos_token="<|endoftext|>",
            unk_token="<|endoftext|>",
            pad_token="<|pad|>",
            model_max_length=2048,
        )
    raise ValueError(f"kind must be 'encoder' or 'decoder', got {kind!r}")


def encode_documents(tokenizer: PreTrainedTokenizerBase, docs: list[str]) -> list[list[int]]:
    """Token ids of each document, no special tokens (a fast tokenizer encodes the batch in
    parallel, without "longer than model_max_length" warnings)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return [e.ids for e in backend.encode_batch(docs, add_special_tokens=False)]
    ids: list[list[int]] = tokenizer(docs, add_special_tokens=False)["input_ids"]
    return ids


def load_tokenizer(name_or_path: str) -> PreTrainedTokenizerBase:
    """A tokenizer from a local folder (or a hub id, for users with network)."""
    from transformers import AutoTokenizer

    p = Path(name_or_path).expanduser()
    if p.exists() and not p.is_dir():
        raise UserError(
            f"tokenizer: {name_or_path} is a file; give the folder that holds tokenizer.json"
        )
    if p.is_dir():
        check_tokenizer_files(p)
    try:
        return AutoTokenizer.from_pretrained(str(p) if p.exists() else name_or_path)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot load tokenizer {name_or_path!r}: {exc}") from exc


ENCODER_ROLES = {
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "sep_token": "[SEP]",
    "mask_token": "[MASK]",
}


def complete_specials(tokenizer: PreTrainedTokenizerBase, kind: str) -> list[str]:
    """Add the special tokens a `kind` model needs and `tokenizer` lacks (a GPT-2 / Pythia
    tokenizer serving an encoder gets [PAD], [CLS], [SEP] and [MASK]); the tokens added, in
    order (their ids follow the tokenizer's own). A decoder pads with its end-of-text token
    when it has no pad token, so nothing is added for one."""
    if kind != "encoder":
        return []
    missing = {
        role: text for role, text in ENCODER_ROLES.items() if getattr(tokenizer, role) is None
    }
    if missing:
        tokenizer.add_special_tokens(missing)  # type: ignore[arg-type]
    return list(missing.values())


def special_ids(tokenizer: PreTrainedTokenizerBase, kind: str) -> dict[str, int]:
    """The ids the data pipeline needs, checked to exist."""
    names = ["pad", "cls", "sep", "mask"] if kind == "encoder" else ["eos", "pad"]
    out: dict[str, int] = {}
    for n in names:
        tid = getattr(tokenizer, f"{n}_token_id")
        if tid is None and n == "pad":
            tid = tokenizer.eos_token_id if kind == "decoder" else None
        if tid is None:
            raise UserError(f"tokenizer has no {n} token, which {kind}s need")
        out[n] = int(tid)
    return out
