"""The paper's recipes: per-objective values, Pythia's untied head and cosine floor."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from zoo.models import get_spec
from zoo.models.spec import Recipe
from zoo.objectives import OBJECTIVES
from zoo.train.config import PretrainConfig
from zoo.train.metadata import read_metadata
from zoo.train.pretrain import pretrain
from zoo.train.recipe import resolve_recipe, unreached_peak
from zoo.train.schedule import lr_factor
from zoo.train.step import head_from_embeddings, prepare_for_objective


def test_headless_values_of_table_7() -> None:
    spec = get_spec("bert-base")
    vanilla = resolve_recipe(
        PretrainConfig(preset="bert-base", objective="ce", output_dir="x"), spec
    )
    headless = resolve_recipe(
        PretrainConfig(preset="bert-base", objective="cwt", output_dir="x"), spec
    )
    assert (vanilla.batch_size, headless.batch_size) == (256, 512)
    assert (
        resolve_recipe(
            PretrainConfig(preset="bert-base", objective="cwt", output_dir="x", batch_size=64), spec
        ).batch_size
        == 64
    )  # a config still wins
    with pytest.raises(ValueError, match="unknown recipe fields"):
        Recipe(lr=1e-3, weight_decay=0.0, headless=(("batchsize", 2),))


def test_pythia_70m_is_untied_with_70m_parameters() -> None:
    for objective in ("ce", "cwt", "nce"):  # the model each objective builds, as pretraining does
        obj = OBJECTIVES.get(objective)
        model = get_spec("pythia-70m").build(tie_word_embeddings=not obj.needs_output_embeddings)
        assert model.get_output_embeddings().weight is not model.get_input_embeddings().weight
        n = sum(p.numel() for p in model.parameters())
        assert 69e6 < n < 72e6, (objective, n)


def test_an_untied_headless_head_is_frozen_and_saved_as_the_embeddings() -> None:
    spec = get_spec("pythia-70m", 300)
    model = spec.build()
    cwt = OBJECTIVES.get("cwt")
    prepare_for_objective(model, spec, cwt)
    head, emb = model.get_output_embeddings().weight, model.get_input_embeddings().weight
    assert not head.requires_grad and emb.requires_grad
    head_from_embeddings(model, spec, cwt)
    torch.testing.assert_close(head, emb)


def test_cosine_ends_at_the_floor() -> None:
    assert math.isclose(lr_factor(999, "cosine", 10, 1000, floor=0.1), 0.1, abs_tol=1e-4)
    assert math.isclose(lr_factor(505, "cosine", 10, 1000, floor=0.1), 0.55, abs_tol=1e-2)
    assert lr_factor(999, "cosine", 10, 1000) < 1e-4
    assert (
        resolve_recipe(
            PretrainConfig(preset="pythia-70m", output_dir="x"), get_spec("pythia-70m")
        ).min_lr_ratio
        == 0.1
    )


def test_an_untied_headless_decoder_trains_and_evaluates_through_its_embeddings(tmp_path) -> None:
    import dataclasses

    from zoo.models import PRESETS

    untied = dataclasses.replace(
        get_spec("pythia-tiny", 400), name="pythia-tiny-untied", tied=False
    )
    PRESETS.add(
        "pythia-tiny-untied",
        lambda vocab_size=400: dataclasses.replace(untied, vocab_size=vocab_size),
    )
    cfg = PretrainConfig(
        preset="pythia-tiny-untied",
        objective="cwt",
        output_dir=str(tmp_path / "r"),
        corpus=["synthetic:200"],
        vocab_size=400,
        steps=3,
        batch_size=4,
        seq_len=32,
        progress=False,
    )
    final = pretrain(cfg)
    from safetensors.torch import load_file

    w = load_file(str(final / "model.safetensors"))
    torch.testing.assert_close(w["embed_out.weight"], w["gpt_neox.embed_in.weight"])
    assert math.isfinite(read_metadata(final).validation["val_ce"])
    # its validation along the run scores through the embeddings too, as the tied twin's does
    # (it once scored through the head it was initialised with, which no loss trains)
    every = {"eval_every": 1, "steps": 2}
    untied_run = pretrain(cfg.model_copy(update={**every, "output_dir": str(tmp_path / "u")}))
    tied_run = pretrain(
        cfg.model_copy(update={**every, "preset": "pythia-tiny", "output_dir": str(tmp_path / "t")})
    )

    def curve(run: Path) -> list[float]:
        lines = (run.parent / "metrics.jsonl").read_text().splitlines()
        return [json.loads(x)["val_ce"] for x in lines if "val_ce" in json.loads(x)]

    assert len(curve(untied_run)) == 3 and curve(untied_run) == pytest.approx(curve(tied_run))


def test_a_tied_headless_model_keeps_training_its_embeddings() -> None:
    spec = get_spec("bert-tiny", 300)
    model = spec.build()
    prepare_for_objective(model, spec, OBJECTIVES.get("cwt"))
    assert model.get_input_embeddings().weight.requires_grad  # the tied head is the embedding


def test_a_preset_warm_up_the_steps_never_pass_is_warned_of(tmp_path) -> None:
    """bert-small's paper warm-up (10 000 of 400 000 steps) left unset on a 2 000-step run:
    the rate would climb throughout; the warning gives the recipe's share (50). A warm-up
    the user set, or one below the steps, says nothing."""
    spec = get_spec("bert-small")
    short = PretrainConfig(preset="bert-small", objective="cwt", output_dir="x", steps=2000)
    why = unreached_peak(short, resolve_recipe(short, spec), spec)
    assert why is not None and why.startswith("warmup_steps: the preset bert-small's 10000 ")
    assert why.endswith("set warmup_steps (the recipe's share of 2000 steps is 50)")
    chosen = short.model_copy(update={"warmup_steps": 2000})
    assert unreached_peak(chosen, resolve_recipe(chosen, spec), spec) is None
    long = short.model_copy(update={"steps": 20_000})
    assert unreached_peak(long, resolve_recipe(long, spec), spec) is None
    tiny = dict(batch_size=4, seq_len=32, vocab_size=400, corpus=["synthetic:300"])
    run = PretrainConfig(
        preset="bert-tiny", objective="ce", output_dir=str(tmp_path / "r"), steps=2, **tiny
    )
    with pytest.warns(UserWarning, match=r"the preset bert-tiny's 20 \(for its recipe's 200"):
        pretrain(run.model_copy(update={"progress": False}))
