"""GPT-2 decoders (GPT2LMHeadModel): the paper's small 11M-parameter decoder (Appendix D.5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from torch import Tensor, nn
from transformers import (
    AutoModelForCausalLM,
    GPT2Config,
    GPT2LMHeadModel,
    PretrainedConfig,
    PreTrainedModel,
)

from zoo.models.registry import FAMILIES, PRESETS
from zoo.models.spec import Kind, ModelSpec, Recipe
from zoo.objectives.base import VocabHead


def _identity(x: Tensor) -> Tensor:
    return x


@FAMILIES.register("gpt2")
@dataclass(frozen=True)
class GPT2Spec(ModelSpec):
    family: ClassVar[str] = "gpt2"
    kind: ClassVar[Kind] = "decoder"
    auto_class: ClassVar[Any] = AutoModelForCausalLM
    pipeline_tag: ClassVar[str] = "text-generation"

    @classmethod
    def dims_from_hf_config(cls, config: PretrainedConfig) -> dict[str, int]:
        return {
            "hidden_size": config.n_embd,
            "num_layers": config.n_layer,
            "num_heads": config.n_head,
            "intermediate_size": config.n_inner or 4 * config.n_embd,
            "max_positions": config.n_positions,
        }

    def build(self, tie_word_embeddings: bool = True) -> PreTrainedModel:
        config = GPT2Config(
            vocab_size=self.vocab_size,
            n_embd=self.hidden_size,
            n_layer=self.num_layers,
            n_head=self.num_heads,
            n_inner=self.intermediate_size,
            n_positions=self.max_positions,
            tie_word_embeddings=tie_word_embeddings and self.tied,
            bos_token_id=0,  # zoo decoder tokenizers: <|endoftext|> = 0, <|pad|> = 1
            eos_token_id=0,
            pad_token_id=1,
            attn_implementation="sdpa",  # type: ignore[call-arg]  # accepted by PretrainedConfig(**kwargs)
        )
        return GPT2LMHeadModel(config)

    @staticmethod
    def body(model: PreTrainedModel, input_ids: Tensor, attention_mask: Tensor | None) -> Tensor:
        assert isinstance(model, GPT2LMHeadModel)
        return model.transformer(
            input_ids=input_ids, attention_mask=attention_mask
        ).last_hidden_state

    @staticmethod
    def vocab_head(model: PreTrainedModel) -> VocabHead:
        assert isinstance(model, GPT2LMHeadModel)
        return VocabHead(transform=_identity, weight=model.lm_head.weight, bias=None)

    @staticmethod
    def head_only_modules(model: PreTrainedModel) -> list[nn.Module]:
        return []


@PRESETS.register("gpt2-11m")
def gpt2_11m(vocab_size: int = 50257) -> GPT2Spec:
    """GPT-2 scaled down (Appendix D.5): 3 layers, hidden 192, 3 heads, ~11M parameters."""
    recipe = Recipe(
        lr=2.5e-4,
        weight_decay=0.01,
        schedule="cosine",
        warmup_steps=2000,
        steps=1_000_000,
        seq_len=128,
        batch_size=64,
    )
    return GPT2Spec(
        name="gpt2-11m",
        vocab_size=vocab_size,
        hidden_size=192,
        num_layers=3,
        num_heads=3,
        intermediate_size=4 * 192,
        max_positions=1024,
        recipe=recipe,
    )
