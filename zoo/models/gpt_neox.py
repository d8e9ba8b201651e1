"""GPT-NeoX / Pythia-like decoders (GPTNeoXForCausalLM) and their presets.

Numbers follow EleutherAI's Pythia configs (rotary on 25% of head dims, parallel residual).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from zoo.models.registry import FAMILIES, PRESETS
from zoo.models.spec import TINY_DECODER_RECIPE, DecoderSpec, Recipe

if TYPE_CHECKING:
    from transformers import PreTrainedModel


@FAMILIES.register("gpt_neox")
@dataclass(frozen=True)
class GPTNeoXSpec(DecoderSpec):
    family: ClassVar[str] = "gpt_neox"

    def build(self, tie_word_embeddings: bool = True) -> PreTrainedModel:
        from transformers import GPTNeoXConfig, GPTNeoXForCausalLM

        config = GPTNeoXConfig(
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_layers,
            num_attention_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_positions,
            rope_parameters={
                "rope_type": "default",
                "rope_theta": 10000.0,
                "partial_rotary_factor": 0.25,
            },
            use_parallel_residual=True,
            **self.decoder_config(tie_word_embeddings),
        )
        return GPTNeoXForCausalLM(config)


@PRESETS.register("pythia-tiny")
def pythia_tiny(vocab_size: int = 4096) -> GPTNeoXSpec:
    """CPU-test scale: 2 layers, hidden 128, 4 heads; Pythia's recipe shape (cosine to 10%)."""
    return GPTNeoXSpec(
        name="pythia-tiny",
        vocab_size=vocab_size,
        hidden_size=128,
        num_layers=2,
        num_heads=4,
        intermediate_size=512,
        max_positions=2048,
        recipe=TINY_DECODER_RECIPE,
    )


def _pythia(name: str, layers: int, hidden: int, heads: int, lr: float, vocab: int) -> GPTNeoXSpec:
    """A Pythia suite shape (Biderman et al. 2023, Table 1): untied head, 2048 positions, the
    Pythia recipe (143k steps of 1024 x 2048 tokens, cosine to 10% after 1% warm-up)."""
    recipe = Recipe(
        lr=lr,
        weight_decay=0.1,
        betas=(0.9, 0.95),
        schedule="cosine",
        warmup_steps=1430,
        steps=143_000,
        seq_len=2048,
        batch_size=1024,
        min_lr_ratio=0.1,
    )
    return GPTNeoXSpec(
        name=name,
        vocab_size=vocab,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        intermediate_size=4 * hidden,
        max_positions=2048,
        recipe=recipe,
        tied=False,
    )


@PRESETS.register("pythia-160m")
def pythia_160m(vocab_size: int = 50304) -> GPTNeoXSpec:
    """EleutherAI/pythia-160m: 12 layers, hidden 768, 12 heads (162,322,944 parameters)."""
    return _pythia("pythia-160m", 12, 768, 12, 6e-4, vocab_size)


@PRESETS.register("pythia-410m")
def pythia_410m(vocab_size: int = 50304) -> GPTNeoXSpec:
    """EleutherAI/pythia-410m: 24 layers, hidden 1024, 16 heads (405,334,016 parameters)."""
    return _pythia("pythia-410m", 24, 1024, 16, 3e-4, vocab_size)


@PRESETS.register("pythia-70m")
def pythia_70m(vocab_size: int = 50304) -> GPTNeoXSpec:
    """EleutherAI/pythia-70m-deduped: 6 layers, hidden 512, 8 heads, a separate (untied) LM head
    as Pythia has (70,426,624 parameters); Appendix D.2 recipe (Table 8), the cosine schedule
    ending at Pythia's 10% of the peak learning rate."""
    return _pythia("pythia-70m", 6, 512, 8, 1e-3, vocab_size)
