"""Model presets and families: named builders with explicit numbers, one file per family.

    spec = get_spec("bert-small", vocab_size=50_000)
    model = spec.build()

A family file registers its `ModelSpec` subclass (under its Hugging Face model type) and its
presets with decorators; a new family is its own file plus one import line below. Importing
this package imports neither torch nor transformers: a family imports them where it builds or
runs a model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from zoo.models import bert, gpt2, gpt_neox, llama, modernbert  # noqa: F401  # each file registers its family
from zoo.models.registry import FAMILIES, PRESETS
from zoo.models.spec import ModelSpec, Recipe

if TYPE_CHECKING:
    from transformers import PretrainedConfig

# An existing checkpoint's own training recipe is unknown: evaluation batch shapes only.
EVALUATION_RECIPE = Recipe(lr=1e-4, weight_decay=0.01, seq_len=128, batch_size=32)


def get_spec(preset: str, vocab_size: int | None = None) -> ModelSpec:
    """The preset's spec, at `vocab_size` if given (else the preset's default vocabulary)."""
    builder = PRESETS.get(preset)
    return builder() if vocab_size is None else builder(vocab_size=vocab_size)


def family_of(config: PretrainedConfig) -> type[ModelSpec]:
    """The family class for a Hugging Face config (by its `model_type`), or a clear error."""
    return FAMILIES.get(str(getattr(config, "model_type", "")))


def spec_from_hf_config(config: PretrainedConfig, name: str | None = None) -> ModelSpec:
    """A spec describing an existing checkpoint's architecture (for FLOP counts and evaluation);
    its recipe is `EVALUATION_RECIPE`."""
    family = family_of(config)
    return family.from_hf_config(config, name or family.family, EVALUATION_RECIPE)


__all__ = [
    "EVALUATION_RECIPE",
    "FAMILIES",
    "PRESETS",
    "ModelSpec",
    "Recipe",
    "family_of",
    "get_spec",
    "spec_from_hf_config",
]
