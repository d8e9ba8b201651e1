"""GPT-2 decoders (GPT2LMHeadModel): the paper's small 11M-parameter decoder (Appendix D.5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from zoo.models.registry import FAMILIES, PRESETS
from zoo.models.spec import DecoderSpec, Recipe

if TYPE_CHECKING:
    from transformers import PretrainedConfig, PreTrainedModel


@FAMILIES.register("gpt2")
@dataclass(frozen=True)
class GPT2Spec(DecoderSpec):
    family: ClassVar[str] = "gpt2"

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
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(
            n_embd=self.hidden_size,
            n_layer=self.num_layers,
            n_head=self.num_heads,
            n_inner=self.intermediate_size,
            n_positions=self.max_positions,
            **self.decoder_config(tie_word_embeddings),
        )
        return GPT2LMHeadModel(config)


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
