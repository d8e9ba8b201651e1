"""The preset ladders people use, each against its published parameter count: the compact
BERTs of Turc et al. (2019) and the Pythia suite (Biderman et al., 2023, Table 1)."""

from __future__ import annotations

import pytest

from zoo.models import get_spec


def _count(module) -> int:
    return sum(p.numel() for p in module.parameters())


# Turc et al.'s counts are of the released checkpoints: the encoder, its pooler and the MLM head
@pytest.mark.parametrize(
    ("preset", "published"),
    [("bert-mini", 11.3e6), ("bert-small", 29.1e6), ("bert-medium", 41.7e6)],
)
def test_compact_berts_match_turc_et_al(preset: str, published: float) -> None:
    spec = get_spec(preset)
    model = spec.build()
    h = spec.hidden_size
    pooler = h * h + h  # the pretraining checkpoints carry one; our MLM builds none
    n = _count(model) + pooler
    assert n == pytest.approx(published, rel=0.005), n
    assert spec.vocab_size == 30522


@pytest.mark.parametrize(
    ("preset", "published"),
    [("pythia-70m", 70_426_624), ("pythia-160m", 162_322_944), ("pythia-410m", 405_334_016)],
)
def test_pythia_shapes_match_the_suite_exactly(preset: str, published: int) -> None:
    spec = get_spec(preset)
    model = spec.build(tie_word_embeddings=False)  # Pythia's head is its own matrix
    assert _count(model) == published
