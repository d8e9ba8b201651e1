"""The probe task end to end on a tiny checkpoint and the real GLUE files: a row for every
probe and feature, the trivial baselines beside them, the diagnostics, all finite."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.tasks.base import TASKS, TaskContext
from harness.tasks.probe import ProbeParams, run_probe
from tests.tiny import TINY_RUN
from zoo.errors import UserError
from zoo.models import PRESETS
from zoo.train.config import PretrainConfig
from zoo.train.pretrain import pretrain


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[PretrainConfig, Path]:
    out = tmp_path_factory.mktemp("probe") / "r"
    cfg = PretrainConfig(preset="bert-tiny", objective="ce", output_dir=str(out), steps=1)
    cfg = cfg.model_copy(update=TINY_RUN)
    return cfg, pretrain(cfg)


def _ctx(tiny: tuple[PretrainConfig, Path], **params: object) -> TaskContext:
    cfg, final = tiny
    return TaskContext(
        spec=PRESETS.get("bert-tiny")(),
        objective="ce",
        pretrain=cfg,
        params=ProbeParams.model_validate({"max_examples": 60, "batch_size": 32, **params}),
        seed=0,
        checkpoint=final,
    )


def test_every_probe_and_baseline_is_a_row(tiny, data_root) -> None:
    rows = {(r.task, r.metric): r.value for r in run_probe(_ctx(tiny))}
    expected = {
        ("probe/sst2/mean", "accuracy"),
        ("probe/sst2/static", "accuracy"),
        ("probe/sst2", "majority"),
        ("probe/mrpc/mean", "f1"),
        ("probe/mrpc/static", "accuracy"),
        ("probe/mrpc", "jaccard"),
        ("probe/mrpc", "majority"),
        ("probe/stsb/mean-cosine", "pearson"),
        ("probe/stsb/static-ridge", "pearson"),
        ("probe/stsb", "jaccard"),
        ("probe/diagnostics", "token_cosine"),
        ("probe/diagnostics", "effective_rank"),
    }
    assert expected <= set(rows)
    assert all(math.isfinite(v) for v in rows.values())
    assert 0.5 < rows[("probe/stsb", "jaccard")] < 0.8  # token overlap's known strength


def test_held_out_training_phrases_are_a_second_sst2_test_set(tiny, data_root) -> None:
    """`heldout`: phrases kept out of the fit, the same for every seed, scored beside dev
    with what the fit's majority answer scores there; none by default."""
    from harness.tasks.probe import _sst2_splits

    rows = {(r.task, r.metric): r.value for r in run_probe(_ctx(tiny, tasks=["sst2"], heldout=200))}
    for metric in ("accuracy", "answer_share", "majority"):
        assert 0 <= rows[("probe/sst2-heldout/mean", metric)] <= 1
    assert ("probe/sst2/mean", "accuracy") in rows and ("probe/sst2", "majority") in rows
    p = ProbeParams.model_validate({"heldout": 200, "max_examples": 60})
    (fit0, held0), (fit1, held1) = _sst2_splits(p, seed=0), _sst2_splits(p, seed=1)
    assert len(held0) == 200 and [e.text_a for e in held0] == [e.text_a for e in held1]
    assert len(fit0) == 60 and not {id(e) for e in fit0} & {id(e) for e in held0}
    assert [e.text_a for e in fit0] != [e.text_a for e in fit1]  # the fit is drawn per seed
    plain = {(r.task, r.metric) for r in run_probe(_ctx(tiny, tasks=["sst2"]))}
    assert not any(task.startswith("probe/sst2-heldout") for task, _ in plain)
    with pytest.raises(UserError, match="heldout: 100000, but SST-2 has 67349 training phrases"):
        _sst2_splits(ProbeParams.model_validate({"heldout": 100_000}), seed=0)


def test_last_token_features_are_a_decoders(tiny, data_root) -> None:
    with pytest.raises(UserError, match="`last` is a decoder's feature"):
        run_probe(_ctx(tiny, features=["last"], tasks=["sst2"]))


def test_the_probe_task_is_registered_with_its_metrics() -> None:
    probe = TASKS.get("probe")
    assert {"accuracy", "f1", "pearson", "jaccard", "token_cosine"} <= set(probe.metrics)


def test_the_probe_gates_pass_the_papers_kind_of_model_and_refuse_a_constant_one() -> None:
    """SST-2 and STS-B frozen-feature gates: mean-pooled BERT-base (85.5 % on SST, 0.47 on
    STS-B; Reimers & Gurevych, 2019) passes; a majority answer or flat cosines do not."""
    from harness.tasks import TASKS

    gates = TASKS.get("probe").gates
    assert gates["sst2"].check(0.855, lambda _: None).passed
    assert not gates["sst2"].check(0.509, lambda _: None).passed  # SST-2 dev's majority
    assert gates["stsb"].check(0.47, lambda _: None).passed
    assert not gates["stsb"].check(0.0, lambda _: None).passed
    twin = gates["sst2"].check_untrained(0.637, 0.620, "bert-tiny-untrained")
    assert twin is not None and not twin.passed  # the committed bert-tiny-ce: not past its twin


def test_a_decoder_is_probed_by_its_last_and_mean_token_states(tiny_decoder, data_root) -> None:
    """A causal model has read the sentence by its last token: `last` is its feature, beside
    the mean and the static embeddings, every row finite."""
    from zoo.train.config import load_config

    cfg = load_config(str(tiny_decoder.parent / "config.yaml"), {})
    ctx = TaskContext(
        spec=PRESETS.get(cfg.preset)(),
        objective=cfg.objective,
        pretrain=cfg,
        params=ProbeParams.model_validate(
            {"max_examples": 60, "batch_size": 32, "features": ["last", "mean"]}
        ),
        seed=0,
        checkpoint=tiny_decoder,
    )
    rows = {(r.task, r.metric): r.value for r in run_probe(ctx)}
    assert {("probe/sst2/last", "accuracy"), ("probe/stsb/last-cosine", "pearson")} <= set(rows)
    assert {("probe/mrpc/mean", "f1"), ("probe/diagnostics", "effective_rank")} <= set(rows)
    assert all(math.isfinite(v) for v in rows.values())


@pytest.mark.parametrize("preset", ["bert-tiny", "modernbert-tiny", "pythia-tiny"])
def test_the_features_are_the_whole_models_last_states_bit_for_bit(preset: str) -> None:
    """The probe runs the body alone (no vocabulary head, most of a tiny model's work): its
    states are exactly those the whole model returns, so committed rows stay comparable."""
    import torch

    from harness.tasks.probe import encode
    from zoo.models import get_spec
    from zoo.tokenizers import train_tokenizer

    torch.manual_seed(0)
    spec = get_spec(preset, 400)
    model = spec.build().eval()
    texts = ["ka bamo dusis lo fetari.", "lo fetari.", "ka bamo dusis lo fetari ka bamo."]
    tokenizer = train_tokenizer(texts * 50, 400, spec.kind)
    params = ProbeParams.model_validate({"batch_size": 2, "features": ["mean", "last"]})
    got = encode(model, tokenizer, texts, params, [])
    enc = tokenizer(texts[:2], padding=True, return_tensors="pt")
    with torch.no_grad():
        whole = model(**enc, output_hidden_states=True).hidden_states[-1]  # (B, T, D)
    mask = enc["attention_mask"].unsqueeze(-1).float()
    mean = (whole * mask).sum(1) / mask.sum(1)
    assert torch.equal(torch.from_numpy(got["mean"][:2]), mean)
