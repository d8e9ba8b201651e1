"""Llama decoders (LlamaForCausalLM): grouped-query attention and a gated feed-forward block
(three [D, I] matrices), a family whose blocks differ from BERT's, GPT-2's and Pythia's; its
FLOP count comes from the same block description (`kv_heads`, `mlp_matrices`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from zoo.models.registry import FAMILIES, PRESETS
from zoo.models.spec import TINY_DECODER_RECIPE, DecoderSpec

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel


@FAMILIES.register("llama")
@dataclass(frozen=True)
class LlamaSpec(DecoderSpec):
    family: ClassVar[str] = "llama"

    @classmethod
    def dims_from_hf_config(cls, config: PretrainedConfig) -> dict[str, int]:
        return {
            **super().dims_from_hf_config(config),
            "kv_heads": config.num_key_value_heads,
            "mlp_matrices": 3,
        }

    def build(self, tie_word_embeddings: bool = True) -> PreTrainedModel:
        from transformers import LlamaConfig, LlamaForCausalLM

        config = LlamaConfig(
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_layers,
            num_attention_heads=self.num_heads,
            num_key_value_heads=self.kv_heads or self.num_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_positions,
            **self.decoder_config(tie_word_embeddings),
        )
        return LlamaForCausalLM(config)


@PRESETS.register("llama-tiny")
def llama_tiny(vocab_size: int = 4096) -> LlamaSpec:
    """CPU-test scale: 2 layers, hidden 128, 4 query heads sharing 2 key / value heads, a gated
    feed-forward block of 352; pythia-tiny's recipe."""
    return LlamaSpec(
        name="llama-tiny",
        vocab_size=vocab_size,
        hidden_size=128,
        num_layers=2,
        num_heads=4,
        kv_heads=2,
        intermediate_size=352,
        max_positions=2048,
        recipe=TINY_DECODER_RECIPE,
        mlp_matrices=3,
    )
