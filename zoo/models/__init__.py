"""Model presets: named builders with explicit numbers, one file per family.

spec = PRESETS.get("bert-small")(vocab_size=50_000)
model = spec.build()
"""

from __future__ import annotations

from collections.abc import Callable

from zoo.models.bert import BertSpec, bert_base, bert_small, bert_tiny, distilbert_multilingual
from zoo.models.gpt2 import GPT2Spec, gpt2_11m
from zoo.models.gpt_neox import GPTNeoXSpec, pythia_70m, pythia_tiny
from zoo.models.spec import ModelSpec, Recipe
from zoo.registry import Registry

PresetBuilder = Callable[..., ModelSpec]
PRESETS: Registry[PresetBuilder] = Registry("preset")
for _name, _builder in (
    ("bert-tiny", bert_tiny),
    ("bert-small", bert_small),
    ("bert-base", bert_base),
    ("distilbert-multilingual", distilbert_multilingual),
    ("pythia-tiny", pythia_tiny),
    ("pythia-70m", pythia_70m),
    ("gpt2-11m", gpt2_11m),
):
    PRESETS.add(_name, _builder)

SPEC_TYPES: dict[str, type[ModelSpec]] = {
    "bert": BertSpec,
    "gpt_neox": GPTNeoXSpec,
    "gpt2": GPT2Spec,
}


def get_spec(preset: str, vocab_size: int | None = None) -> ModelSpec:
    """The preset's spec, at `vocab_size` if given (else the preset's default vocabulary)."""
    builder = PRESETS.get(preset)
    return builder() if vocab_size is None else builder(vocab_size=vocab_size)


def spec_for_model_type(model_type: str) -> type[ModelSpec]:
    """The family class for a Hugging Face `config.model_type` (to train a loaded checkpoint)."""
    from zoo.errors import UserError

    if model_type not in SPEC_TYPES:
        raise UserError(
            f"model type {model_type!r} is not supported (known: {', '.join(SPEC_TYPES)})"
        )
    return SPEC_TYPES[model_type]


def spec_from_hf_config(config: object, name: str | None = None) -> ModelSpec:
    """A spec describing an existing checkpoint's architecture (for FLOP counts and evaluation).

    Its recipe is only a placeholder for evaluation batch shapes (seq 128, batch 32): the
    checkpoint's own training recipe is unknown.
    """
    model_type = getattr(config, "model_type", "")
    cls = spec_for_model_type(model_type)
    get = config.__getattribute__
    if model_type == "gpt2":
        dims = (
            get("n_embd"),
            get("n_layer"),
            get("n_head"),
            get("n_inner") or 4 * get("n_embd"),
            get("n_positions"),
        )
    else:
        dims = (
            get("hidden_size"),
            get("num_hidden_layers"),
            get("num_attention_heads"),
            get("intermediate_size"),
            get("max_position_embeddings"),
        )
    return cls(
        name=name or model_type,
        vocab_size=get("vocab_size"),
        hidden_size=dims[0],
        num_layers=dims[1],
        num_heads=dims[2],
        intermediate_size=dims[3],
        max_positions=dims[4],
        recipe=Recipe(lr=1e-4, weight_decay=0.01, seq_len=128, batch_size=32),
    )


__all__ = [
    "PRESETS",
    "ModelSpec",
    "Recipe",
    "get_spec",
    "spec_for_model_type",
    "spec_from_hf_config",
]
