"""BERT-like encoders (BertForMaskedLM) and their presets.

Numbers follow the Hugging Face releases the paper uses (google/bert_uncased_L-*, bert-base,
distilbert-base-multilingual-cased's shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from torch import Tensor, nn
from transformers import BertConfig, BertForMaskedLM, PreTrainedModel

from zoo.models.spec import Kind, ModelSpec, Recipe
from zoo.objectives.base import VocabHead


@dataclass(frozen=True)
class BertSpec(ModelSpec):
    family: ClassVar[str] = "bert"
    kind: ClassVar[Kind] = "encoder"

    def build(self, tie_word_embeddings: bool = True) -> PreTrainedModel:
        config = BertConfig(
            vocab_size=self.vocab_size,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_layers,
            num_attention_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_positions,
            tie_word_embeddings=tie_word_embeddings,
            pad_token_id=0,  # [PAD]
            attn_implementation="sdpa",  # type: ignore[call-arg]  # accepted by PretrainedConfig(**kwargs)
        )
        return BertForMaskedLM(config)

    @staticmethod
    def body(model: PreTrainedModel, input_ids: Tensor, attention_mask: Tensor | None) -> Tensor:
        assert isinstance(model, BertForMaskedLM)
        return model.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    @staticmethod
    def vocab_head(model: PreTrainedModel) -> VocabHead:
        assert isinstance(model, BertForMaskedLM)
        pred = model.cls.predictions
        return VocabHead(transform=pred.transform, weight=pred.decoder.weight, bias=pred.bias)

    @staticmethod
    def head_only_modules(model: PreTrainedModel) -> list[nn.Module]:
        assert isinstance(model, BertForMaskedLM)
        return [model.cls.predictions.transform]


def _bert(
    name: str, layers: int, hidden: int, heads: int, vocab_size: int, recipe: Recipe
) -> BertSpec:
    return BertSpec(
        name=name,
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        intermediate_size=4 * hidden,
        max_positions=512,
        recipe=recipe,
    )


def bert_tiny(vocab_size: int = 4096) -> BertSpec:
    """CPU-test scale: L2 H128 A2 (google/bert_uncased_L-2_H-128_A-2 shape)."""
    recipe = Recipe(
        lr=1e-3, weight_decay=0.01, warmup_steps=20, steps=200, seq_len=128, batch_size=16
    )
    return _bert("bert-tiny", 2, 128, 2, vocab_size, recipe)


def bert_small(vocab_size: int = 30522) -> BertSpec:
    """L4 H512 A8 (google/bert_uncased_L-4_H-512_A-8), paper Appendix D.4 recipe."""
    recipe = Recipe(lr=2e-4, weight_decay=0.01, warmup_steps=10_000, steps=400_000, batch_size=64)
    return _bert("bert-small", 4, 512, 8, vocab_size, recipe)


def bert_base(vocab_size: int = 50304) -> BertSpec:
    """bert-base-uncased shape with the Pythia 50k vocabulary, paper Appendix D.1 recipe."""
    recipe = Recipe(
        lr=1e-4, weight_decay=0.01, warmup_steps=10_000, steps=1_000_000, batch_size=256
    )
    return _bert("bert-base", 12, 768, 12, vocab_size, recipe)


def distilbert_multilingual(vocab_size: int = 119547) -> BertSpec:
    """6 layers, hidden 768 (distilbert-base-multilingual-cased shape), Appendix D.3 recipe."""
    recipe = Recipe(lr=2e-4, weight_decay=0.01, warmup_steps=10_000, steps=400_000, batch_size=64)
    return _bert("distilbert-multilingual", 6, 768, 12, vocab_size, recipe)
