"""Typed checkpoint metadata: schema version, clear errors naming the file, lineage kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import zoo
from zoo.errors import UserError
from zoo.train.causal_finetune import CausalFinetuneConfig, finetune_causal
from zoo.train.config import PretrainConfig
from zoo.train.metadata import METADATA, SCHEMA_VERSION, find_metadata, read_metadata
from zoo.train.pretrain import pretrain

TINY = dict(
    corpus=["synthetic:300"], vocab_size=600, steps=4, batch_size=4, seq_len=32, progress=False
)


@pytest.fixture(scope="module")
def decoder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dec")
    return pretrain(
        PretrainConfig(preset="pythia-tiny", objective="cwt", output_dir=str(out), **TINY)
    )


def test_metadata_is_typed_and_complete(decoder: Path) -> None:
    meta = read_metadata(decoder)
    assert meta.schema_version == SCHEMA_VERSION
    assert (meta.kind, meta.family, meta.preset, meta.objective) == (
        "decoder",
        "gpt_neox",
        "pythia-tiny",
        "cwt",
    )
    assert meta.headless and meta.causal_finetune is None
    assert meta.objective_source == f"hlm {zoo.__version__}"  # a built-in objective
    assert (
        meta.tokenizer.source == "trained" and meta.tokenizer.vocab_size <= meta.vocab_size == 600
    )
    assert (meta.world_size, meta.loss_options().negatives, meta.loss_options().duplicates) == (
        1,
        "local",
        "keep",
    )
    assert meta.negatives == 4 * 31  # K per forward: every next-token position of 4 x 32
    assert (meta.recipe.batch_size, meta.recipe.micro_batch_size, meta.recipe.grad_accum) == (
        4,
        4,
        1,
    )
    assert meta.tokens_seen == 4 * 4 * 32 and meta.train_flops > 0 and meta.steps == 4
    assert {"torch", "transformers", "lm_eval", "headless-zoo"} <= set(meta.versions)
    assert "val_loss" in meta.validation


def test_a_folder_without_metadata_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(UserError, match=rf"{METADATA}: not found"):
        read_metadata(tmp_path)
    assert find_metadata(tmp_path) is None  # a foreign checkpoint is allowed where optional
    # causal fine-tuning used to assume a pythia-tiny decoder trained on `synthetic`
    with pytest.raises(UserError, match=rf"{tmp_path}/{METADATA}: not found"):
        finetune_causal(str(tmp_path), str(tmp_path.parent / f"{tmp_path.name}-ft"))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({"kind": "decoder"}), "no schema_version"),
        (json.dumps({"schema_version": 99}), "schema_version 99 is unknown"),
        (json.dumps({"schema_version": 1, "kind": "decoder"}), "preset: Field required"),
    ],
)
def test_unreadable_metadata_is_an_error_naming_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    (tmp_path / METADATA).write_text(content)
    with pytest.raises(UserError, match=message) as info:
        find_metadata(tmp_path)
    assert str(tmp_path / METADATA) in str(info.value)


def test_causal_finetuning_keeps_the_pretraining_objective(decoder: Path, tmp_path: Path) -> None:
    ft = finetune_causal(
        str(decoder),
        str(tmp_path / "ft"),
        CausalFinetuneConfig(steps=2, warmup_steps=1, progress=False),
    )
    meta = read_metadata(ft)
    assert meta.objective == "cwt" and meta.headless  # was "ce" before
    assert meta.causal_finetune is not None
    assert meta.causal_finetune.from_checkpoint == str(decoder)
    # Table 15: a batch a quarter of pretraining's (4 // 4)
    assert (meta.causal_finetune.batch_size, meta.causal_finetune.warmup_steps) == (1, 1)
    assert meta.causal_finetune.tokens == 2 * 1 * 32
    assert meta.tokens_seen == read_metadata(decoder).tokens_seen + 2 * 1 * 32
