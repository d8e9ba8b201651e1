"""ModernBERT-like encoders (ModernBertForMaskedLM) and their presets.

ModernBERT (Warner et al. 2024) is BERT with the changes that let a small encoder leave the
MLM plateau early: pre-LayerNorm blocks, rotary positions (no learned position table), a gated
GeLU feed-forward (GeGLU), no biases, no dropout, and local attention in two layers of three.
The zoo builds transformers' own classes (no remote code), so a checkpoint loads with plain
`AutoModelForMaskedLM` or `AutoModel`.

Presets match the paper's BERT sizes (tiny L2 H128, mini L4 H256, small L4 H512) with a
GeGLU width of about 2/3 of BERT's 4 x hidden, so a block holds about BERT's weights (three
[D, I] matrices instead of two [D, 4D]); `modernbert-base` is answerdotai/ModernBERT-base's
shape. As in `zoo.models.spec`, torch and transformers are imported where a model is built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from zoo.models.registry import FAMILIES, PRESETS
from zoo.models.spec import Kind, ModelSpec, Recipe

if TYPE_CHECKING:
    from torch import nn
    from transformers import ModernBertForMaskedLM, PreTrainedModel

    from zoo.objectives.base import VocabHead

# ModernBERT's attention pattern: every third layer global, the others a sliding window.
GLOBAL_EVERY = 3
LOCAL_WINDOW = 128


@FAMILIES.register("modernbert")
@dataclass(frozen=True)
class ModernBertSpec(ModelSpec):
    family: ClassVar[str] = "modernbert"
    kind: ClassVar[Kind] = "encoder"
    auto_class_name: ClassVar[str] = "AutoModelForMaskedLM"
    pipeline_tag: ClassVar[str] = "fill-mask"

    mlp_matrices: int = 3  # GeGLU: Wi is [D, 2I] (input and gate), Wo [I, D]

    def build(self, tie_word_embeddings: bool = True) -> PreTrainedModel:
        from transformers import ModernBertConfig, ModernBertForMaskedLM

        from zoo.tokenizers import ENCODER_SPECIALS

        cls_id, sep_id = ENCODER_SPECIALS.index("[CLS]"), ENCODER_SPECIALS.index("[SEP]")
        config = ModernBertConfig(
            vocab_size=self.vocab_size,
            hidden_size=self.hidden_size,
            num_hidden_layers=self.num_layers,
            num_attention_heads=self.num_heads,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_positions,
            layer_types=layer_types(self.num_layers),
            local_attention=LOCAL_WINDOW,
            tie_word_embeddings=tie_word_embeddings and self.tied,
            pad_token_id=ENCODER_SPECIALS.index("[PAD]"),  # the tokenizer's ids
            cls_token_id=cls_id,
            bos_token_id=cls_id,
            sep_token_id=sep_id,
            eos_token_id=sep_id,
            attn_implementation="sdpa",  # type: ignore[call-arg]  # PretrainedConfig(**kwargs)
        )
        return ModernBertForMaskedLM(config)

    @staticmethod
    def vocab_head(model: PreTrainedModel) -> VocabHead:
        """The MLM head: dense, GeLU and LayerNorm (`model.head`), then the decoder [V, D] with
        its bias, tied to the input embeddings where the model is."""
        from zoo.objectives.base import VocabHead

        mlm = _checked(model)
        return VocabHead(transform=mlm.head, weight=mlm.decoder.weight, bias=mlm.decoder.bias)

    @staticmethod
    def head_only_modules(model: PreTrainedModel) -> list[nn.Module]:
        return [_checked(model).head]


def layer_types(num_layers: int) -> list[str]:
    """ModernBERT's pattern: layer i is global when i is a multiple of `GLOBAL_EVERY`."""
    return [
        "full_attention" if i % GLOBAL_EVERY == 0 else "sliding_attention"
        for i in range(num_layers)
    ]


def _checked(model: PreTrainedModel) -> ModernBertForMaskedLM:
    """`model` as the ModernBertForMaskedLM this family builds and loads."""
    from transformers import ModernBertForMaskedLM

    if not isinstance(model, ModernBertForMaskedLM):
        raise TypeError(
            f"a modernbert spec was handed a {type(model).__name__}, not a ModernBertForMaskedLM"
        )
    return model


def _modernbert(
    name: str, layers: int, hidden: int, heads: int, glu: int, vocab_size: int, recipe: Recipe
) -> ModernBertSpec:
    return ModernBertSpec(
        name=name,
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=heads,
        intermediate_size=glu,
        max_positions=512,
        recipe=recipe,
    )


# The small sizes' recipe: the CPU ladder's (lr 1e-3, 64 x 128 tokens a step).
SMALL_RECIPE = Recipe(
    lr=1e-3, weight_decay=0.01, warmup_steps=1000, steps=18_000, seq_len=128, batch_size=64
)


@PRESETS.register("modernbert-tiny")
def modernbert_tiny(vocab_size: int = 8192) -> ModernBertSpec:
    """L2 H128 A2, GeGLU 344 (bert-tiny's size and about its weights per block)."""
    return _modernbert("modernbert-tiny", 2, 128, 2, 344, vocab_size, SMALL_RECIPE)


@PRESETS.register("modernbert-mini")
def modernbert_mini(vocab_size: int = 8192) -> ModernBertSpec:
    """L4 H256 A4, GeGLU 688 (bert-mini's size)."""
    return _modernbert("modernbert-mini", 4, 256, 4, 688, vocab_size, SMALL_RECIPE)


@PRESETS.register("modernbert-small")
def modernbert_small(vocab_size: int = 8192) -> ModernBertSpec:
    """L4 H512 A8, GeGLU 1376 (bert-small's size)."""
    recipe = Recipe(
        lr=5e-4, weight_decay=0.01, warmup_steps=1000, steps=18_000, seq_len=128, batch_size=64
    )
    return _modernbert("modernbert-small", 4, 512, 8, 1376, vocab_size, recipe)


@PRESETS.register("modernbert-base")
def modernbert_base(vocab_size: int = 50368) -> ModernBertSpec:
    """answerdotai/ModernBERT-base's shape: L22 H768 A12, GeGLU 1152, 8192 positions; its
    recipe's peak rate (8e-4) and weight decay (1e-5), 30 % masking left to the objective."""
    recipe = Recipe(
        lr=8e-4,
        weight_decay=1e-5,
        betas=(0.9, 0.98),
        eps=1e-6,
        warmup_steps=3000,
        steps=400_000,
        seq_len=1024,
        batch_size=256,
    )
    spec = _modernbert("modernbert-base", 22, 768, 12, 1152, vocab_size, recipe)
    return dataclasses.replace(spec, max_positions=8192)
