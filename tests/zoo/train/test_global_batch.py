"""The recipe's batch is the global batch: micro-batch x accumulation x world size."""

from __future__ import annotations

import pytest

from zoo.errors import UserError
from zoo.models import get_spec
from zoo.train.config import PretrainConfig
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain
from zoo.train.recipe import resolve_recipe, split_batch


@pytest.mark.parametrize(
    ("batch", "world", "seq", "micro", "expected"),
    [
        (256, 1, 128, None, (128, 2)),  # bert-base: 32768 tokens at once would not fit
        (1024, 2, 2048, None, (8, 64)),  # pythia-70m over 2 processes
        (16, 1, 64, None, (16, 1)),
        (12, 2, 64, 2, (2, 3)),
    ],
)
def test_split_batch(
    batch: int, world: int, seq: int, micro: int | None, expected: tuple[int, int]
) -> None:
    m, accum = split_batch(batch, world, seq, micro, 16384)
    assert (m, accum) == expected and m * accum * world == batch


def test_indivisible_batches_are_refused() -> None:
    with pytest.raises(UserError, match="does not split over 3 processes"):
        split_batch(8, 3, 32, None, 16384)
    with pytest.raises(UserError, match="micro_batch_size 3 does not divide"):
        split_batch(8, 1, 32, 3, 16384)


def test_preset_batches_are_global() -> None:
    cfg = PretrainConfig(preset="pythia-70m", output_dir="x")
    r = resolve_recipe(cfg, get_spec("pythia-70m"), world_size=4)
    assert (r.batch_size, r.micro_batch_size * r.grad_accum * 4) == (1024, 1024)
    assert r.micro_batch_size * r.seq_len <= cfg.micro_tokens


def test_accumulation_trains_the_global_batch(tmp_path) -> None:
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cwt",
        output_dir=str(tmp_path / "r"),
        corpus=["synthetic:300"],
        vocab_size=600,
        steps=3,
        batch_size=8,
        micro_batch_size=2,
        seq_len=32,
        progress=False,
    )
    meta = read_metadata(pretrain(cfg))
    assert (meta.recipe.micro_batch_size, meta.recipe.grad_accum) == (2, 4)
    assert meta.batch_size == 8 and meta.tokens_seen == 3 * 8 * 32
    assert meta.negatives == round(2 * 30 * 0.15)  # K of one forward pass (local negatives)
