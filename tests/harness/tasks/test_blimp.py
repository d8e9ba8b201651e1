"""The `blimp` task: rows per paradigm, field and overall beside BLiMP's reference models; a
decoder's sentence scores equal to lm-eval's loglikelihoods; a planted preference seen, and an
untrained model at chance."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from harness.downstream.blimp_data import PARADIGMS, load_pairs
from harness.downstream.minimal_pairs import decoder_scores, encoder_scores
from harness.tasks import TASKS
from harness.tasks.base import TaskContext
from harness.tasks.blimp import BlimpParams, run_blimp
from zoo.errors import UserError
from zoo.models import get_spec
from zoo.tokenizers import load_tokenizer
from zoo.train.checkpoint import load_model
from zoo.train.config import PretrainConfig
from zoo.train.metadata import read_metadata

TWO = ["anaphor_gender_agreement", "determiner_noun_agreement_1"]


def _ctx(checkpoint: Path, **params: object) -> TaskContext:
    meta = read_metadata(checkpoint)
    return TaskContext(
        spec=get_spec(meta.preset, meta.vocab_size),
        objective=meta.objective,
        pretrain=PretrainConfig(preset=meta.preset, output_dir=str(checkpoint.parent)),
        params=BlimpParams.model_validate(params),
        seed=0,
        checkpoint=checkpoint,
    )


@pytest.mark.parametrize("model", ["tiny_decoder", "tiny_encoder"])
def test_rows_per_paradigm_field_and_overall(model: str, request, data_root) -> None:
    checkpoint = request.getfixturevalue(model)
    rows = run_blimp(_ctx(checkpoint, paradigms=TWO, max_pairs=8))
    got = {(r.task, r.metric): r for r in rows}
    for task in ["blimp", *(f"blimp/{p}" for p in TWO), "blimp/field-morphology"]:
        assert 0 <= got[(task, "accuracy")].value <= 1
        assert {"ref_5gram", "ref_lstm", "ref_txl", "ref_gpt2"} <= {m for t, m in got if t == task}
    gpt2 = json.loads((data_root / "blimp" / "models_summary.jsonl").read_text().split("\n")[0])
    assert got[("blimp/anaphor_gender_agreement", "ref_gpt2")].value == gpt2["gpt2"]
    assert len(got[("blimp", "accuracy")].samples or {}) == 16
    headless = read_metadata(checkpoint).objective == "cwt"
    assert got[("blimp", "cwt_scorer")].value == float(headless)  # said in the row


def test_a_decoders_scores_are_lm_evals_loglikelihoods(tiny_decoder, data_root) -> None:
    """The sum of next-token log-probabilities after the beginning-of-text token is what
    lm-eval's HFLM gives the sentence from an empty context (as its blimp tasks score)."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    pairs = load_pairs(data_root, TWO, 3)
    texts = [s for p in pairs for s in (p.good, p.bad)]
    ours = decoder_scores(
        load_model(str(tiny_decoder)).eval(),
        get_spec("pythia-tiny", read_metadata(tiny_decoder).vocab_size),
        load_tokenizer(str(tiny_decoder)),
        texts,
        "head",
        512,
    )
    lm = HFLM(pretrained=str(tiny_decoder), batch_size=4, device="cpu")
    requests = [
        Instance("loglikelihood", {}, ("", t), i) for i, t in enumerate(texts)
    ]  # fmt: skip
    theirs = np.array([ll for ll, _ in lm.loglikelihood(requests)])
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-4)


def test_the_pseudo_log_likelihood_masks_each_token_in_turn(tiny_encoder) -> None:
    """On an MLM model with a head (a headless checkpoint ships none: a fresh BERT here)."""
    spec = get_spec("bert-tiny", read_metadata(tiny_encoder).vocab_size)
    torch.manual_seed(0)
    model, tok = spec.build().eval(), load_tokenizer(str(tiny_encoder))
    text = "the cat sat"
    ids = tok(text)["input_ids"]
    want = 0.0
    with torch.no_grad():
        for t in range(1, len(ids) - 1):  # [CLS] ... [SEP]
            masked = torch.tensor([[*ids[:t], tok.mask_token_id, *ids[t + 1 :]]])
            h = spec.body(model, masked, torch.ones_like(masked))[0, t]  # (D,)
            logits = spec.vocab_head(model).logits(h[None])  # (1, V)
            want += float(torch.log_softmax(logits, -1)[0, ids[t]])
    got = encoder_scores(model, spec, tok, [text], "head", 64)
    assert got[0] == pytest.approx(want, abs=1e-4)


def test_a_planted_preference_is_seen_and_an_untrained_model_is_at_chance(
    tmp_path, data_root
) -> None:
    """A decoder trained on the grammatical sentences of a paradigm prefers them; its untrained
    twin scores near chance: the instrument can see an effect."""
    from zoo.train.pretrain import pretrain

    name = "determiner_noun_agreement_1"
    pairs = load_pairs(data_root, [name], None)
    corpus = tmp_path / "good.txt"
    corpus.write_text("\n\n".join(p.good for p in pairs))
    cfg = dict(
        preset="pythia-tiny", objective="ce", corpus=[str(corpus)], vocab_size=1000, seq_len=32,
        batch_size=16, lr=3e-3, warmup_steps=10, progress=False, validation_fraction=0.01,
    )  # fmt: skip
    trained = pretrain(PretrainConfig(output_dir=str(tmp_path / "t"), steps=150, **cfg))
    twin = pretrain(PretrainConfig(output_dir=str(tmp_path / "u"), steps=0, **cfg))
    score = {
        label: next(
            r.value
            for r in run_blimp(_ctx(ckpt, paradigms=[name], max_pairs=200))
            if r.task == "blimp" and r.metric == "accuracy"
        )
        for label, ckpt in (("trained", trained), ("twin", twin))
    }
    assert score["trained"] > 0.8 and abs(score["twin"] - 0.5) < 0.15, score


def test_params_are_checked() -> None:
    with pytest.raises(ValueError, match="did you mean 'anaphor_gender_agreement'"):
        BlimpParams(paradigms=["anaphor_gender_agreemnt"])
    with pytest.raises(ValueError, match="given twice"):
        BlimpParams(paradigms=[PARADIGMS[0], PARADIGMS[0]])
    assert len(PARADIGMS) == 67 and TASKS.get("blimp").params is BlimpParams


def test_a_missing_paradigm_file_is_named(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HLM_DATA_ROOT", str(tmp_path))
    with pytest.raises(UserError, match=r"blimp/adjunct_island\.jsonl"):
        load_pairs(tmp_path, ["adjunct_island"], None)
