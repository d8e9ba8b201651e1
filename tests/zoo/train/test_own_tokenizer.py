"""Bring your own tokenizer: the vocabulary follows it, the pad id is the one the data
pipeline pads with, and a GPT-2-style tokenizer serves an encoder with its missing specials
added and recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import AutoConfig, PreTrainedTokenizerFast

from zoo.data.synthetic import synthetic_corpus
from zoo.errors import UserError
from zoo.models import get_spec
from zoo.tokenizers import complete_specials, load_tokenizer
from zoo.train.config import PretrainConfig
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain
from zoo.train.setup import fit_vocabulary

RUN = dict(corpus=["synthetic:300"], steps=2, batch_size=4, seq_len=32, progress=False)


@pytest.fixture(scope="module")
def gpt2_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A byte-level BPE tokenizer shaped like GPT-2's: <|endoftext|> only, no pad, no mask."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=800,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(synthetic_corpus(300), trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
    )
    out = tmp_path_factory.mktemp("gpt2-like")
    wrapped.save_pretrained(out)
    return out


def test_a_decoder_takes_the_tokenizers_size_and_pads_with_its_end_of_text(
    gpt2_like: Path, tmp_path: Path
) -> None:
    tok = load_tokenizer(str(gpt2_like))
    final = pretrain(
        PretrainConfig(
            preset="pythia-tiny",
            objective="cwt",
            output_dir=str(tmp_path),
            tokenizer=str(gpt2_like),
            **RUN,
        )
    )
    config = AutoConfig.from_pretrained(final)
    assert config.vocab_size == len(tok) < get_spec("pythia-tiny").vocab_size  # no dead rows
    assert config.pad_token_id == config.eos_token_id == tok.eos_token_id  # not 1 ('!')
    assert read_metadata(final).tokenizer.added_specials == []


def test_an_encoder_on_a_gpt2_tokenizer_gets_its_specials_added_and_recorded(
    gpt2_like: Path, tmp_path: Path
) -> None:
    final = pretrain(
        PretrainConfig(
            preset="bert-tiny",
            objective="cwt",
            output_dir=str(tmp_path),
            tokenizer=str(gpt2_like),
            **RUN,
        )
    )
    meta = read_metadata(final)
    assert meta.tokenizer.added_specials == ["[PAD]", "[CLS]", "[SEP]", "[MASK]"]
    saved = load_tokenizer(str(final))
    assert saved.mask_token == "[MASK]" and saved.cls_token == "[CLS]"
    config = AutoConfig.from_pretrained(final)
    assert config.vocab_size == len(saved) == len(load_tokenizer(str(gpt2_like))) + 4
    assert config.pad_token_id == saved.pad_token_id


def test_the_vocabulary_follows_a_given_tokenizer_either_way(gpt2_like: Path) -> None:
    tok = load_tokenizer(str(gpt2_like))
    assert complete_specials(tok, "decoder") == []
    small = get_spec("pythia-tiny", 300)  # fewer rows than the tokenizer has entries
    cfg = PretrainConfig(preset="pythia-tiny", output_dir="x", tokenizer=str(gpt2_like))
    assert fit_vocabulary(cfg, small, tok, str(gpt2_like)).vocab_size == len(tok)
    fixed = cfg.model_copy(update={"vocab_size": 300})
    with pytest.raises(UserError, match="leave vocab_size unset"):
        fit_vocabulary(fixed, small, tok, str(gpt2_like))
