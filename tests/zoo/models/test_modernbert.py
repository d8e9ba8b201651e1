"""The ModernBERT family: transformers' own classes at the zoo's sizes, trained by both
objectives, saved as plain Hugging Face checkpoints."""

from __future__ import annotations

import pytest
import torch

from zoo.models import get_spec
from zoo.models.modernbert import layer_types


def _matrices(model) -> int:
    return sum(
        p.numel() for layer in model.model.layers for p in layer.parameters() if p.dim() == 2
    )


def test_the_base_preset_is_transformers_default_modernbert() -> None:
    """modernbert-base is ModernBertConfig()'s model (answerdotai/ModernBERT-base's shape):
    the same parameter count and the same global / local attention pattern."""
    from transformers import ModernBertConfig, ModernBertForMaskedLM

    with torch.device("meta"):
        reference = ModernBertForMaskedLM(ModernBertConfig())
        ours = get_spec("modernbert-base").build()
    assert sum(p.numel() for p in ours.parameters()) == sum(
        p.numel() for p in reference.parameters()
    )
    assert ours.config.layer_types == reference.config.layer_types
    assert ours.config.max_position_embeddings == 8192


@pytest.mark.parametrize("preset", ["modernbert-tiny", "modernbert-mini", "modernbert-small"])
def test_flop_counts_read_the_gated_blocks(preset: str) -> None:
    """The analytic body parameters (FLOPs) equal the built blocks' matrices: GeGLU's three."""
    spec = get_spec(preset)
    with torch.device("meta"):
        model = spec.build()
    assert spec.mlp_matrices == 3
    assert spec.body_params() == _matrices(model)


def test_small_presets_hold_about_berts_weights_per_block() -> None:
    for size in ("tiny", "mini", "small"):
        modern, bert = get_spec(f"modernbert-{size}"), get_spec(f"bert-{size}")
        assert modern.layer_params() == pytest.approx(bert.layer_params(), rel=0.01)


def test_attention_pattern_is_one_global_layer_in_three() -> None:
    assert layer_types(4) == [
        "full_attention",
        "sliding_attention",
        "sliding_attention",
        "full_attention",
    ]


@pytest.mark.parametrize("objective", ["ce", "cwt"])
def test_it_pretrains_and_loads_with_plain_auto_classes(tmp_path, objective: str) -> None:
    from transformers import AutoModel, AutoModelForMaskedLM

    from tests.tiny import TINY_RUN
    from zoo.train.config import PretrainConfig
    from zoo.train.metadata import read_metadata
    from zoo.train.pretrain import pretrain

    cfg = PretrainConfig(
        preset="modernbert-tiny", objective=objective, output_dir=str(tmp_path), steps=2, **TINY_RUN
    )
    final = pretrain(cfg)
    mlm = AutoModelForMaskedLM.from_pretrained(final)
    body = AutoModel.from_pretrained(final)
    assert type(mlm).__name__ == "ModernBertForMaskedLM" and read_metadata(final).family == (
        "modernbert"
    )
    ids = torch.tensor([[2, 7, 8, 9, 3]])
    with torch.no_grad():
        torch.testing.assert_close(
            body(input_ids=ids).last_hidden_state, mlm.model(input_ids=ids).last_hidden_state
        )
