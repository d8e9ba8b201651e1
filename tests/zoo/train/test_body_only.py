"""Body-only checkpoints: a headless encoder ships its body; every reader of ours loads it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from torch.testing import assert_close
from transformers import AutoModel, AutoModelForSequenceClassification

from tests.tiny import TINY_RUN
from zoo.errors import UserError
from zoo.models import get_spec
from zoo.objectives import OBJECTIVES
from zoo.train.atomic import COMMIT
from zoo.train.body_only import body_model, is_body_only, writes_body_only
from zoo.train.checkpoint import load_model, load_under_new_head
from zoo.train.config import PretrainConfig
from zoo.train.metadata import METADATA
from zoo.train.pretrain import pretrain

ENCODERS = {"bert-tiny": "BertModel", "modernbert-tiny": "ModernBertModel"}


@pytest.fixture(scope="module")
def finals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 3-step CWT checkpoint of each encoder family."""
    root = tmp_path_factory.mktemp("body-only")
    return {
        preset: pretrain(
            PretrainConfig(
                preset=preset, objective="cwt", output_dir=str(root / preset), steps=3, **TINY_RUN
            )
        )
        for preset in ENCODERS
    }


@pytest.mark.parametrize(
    ("preset", "objective", "body_only"),
    [
        ("bert-tiny", "cwt", True),
        ("modernbert-tiny", "cwt", True),
        ("bert-tiny", "ce", False),  # its head is what it trained
        ("bert-tiny", "ce+cwt", False),
        ("bert-tiny", "nce", False),  # its loss trained the separate target matrix
        ("pythia-tiny", "cwt", False),  # a decoder's head is its input embeddings: CWT's scores
    ],
)
def test_which_runs_ship_their_body_only(preset: str, objective: str, body_only: bool) -> None:
    spec = get_spec(preset, 400)
    assert writes_body_only(spec.build(), spec, OBJECTIVES.get(objective)) is body_only


@pytest.mark.parametrize("preset", ENCODERS)
def test_the_project_reads_the_body_it_trained(finals: dict[str, Path], preset: str) -> None:
    """`load_model` (validation, probes, BLiMP) gives the family's pretraining class with the
    body's weights as saved, the same head at initialisation every time; AutoModel's body
    computes the same hidden states."""
    final = finals[preset]
    assert is_body_only(AutoModel.from_pretrained(final).config)
    a, b = load_model(str(final)), load_model(str(final))
    assert type(a).__name__.endswith("ForMaskedLM")
    for (name, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y), name  # the unread head too: drawn under a fixed seed
    saved = load_file(str(final / "model.safetensors"))
    prefix = f"{a.base_model_prefix}."
    for name, value in a.state_dict().items():
        if name.startswith(prefix):
            assert torch.equal(value, saved[name.removeprefix(prefix)]), name
    ids = torch.tensor([[1, 5, 9, 12, 7, 2]])
    spec = get_spec(preset, 400)
    with torch.no_grad():
        ours = spec.body(a.eval(), ids, None)
        theirs = AutoModel.from_pretrained(final).eval()(input_ids=ids).last_hidden_state
    assert_close(theirs, ours)


def test_fine_tuning_starts_bit_for_bit_as_from_an_mlm_checkpoint(
    finals: dict[str, Path], tmp_path: Path
) -> None:
    """BERT's pooler, shipped at initialisation, is left unread: a classifier starts from the
    same weights, under the same seed, as from the body saved as BertForMaskedLM (no pooler),
    so the headless arm's pooler is drawn under the fine-tuning seed as the vanilla arm's."""
    final = finals["bert-tiny"]
    old = tmp_path / "mlm"
    load_model(str(final)).save_pretrained(old)
    started = []
    for folder in (old, final):
        torch.manual_seed(7)
        model = load_under_new_head(AutoModelForSequenceClassification, str(folder), num_labels=3)
        started.append(model.state_dict())
    assert started[0].keys() == started[1].keys()
    for name, value in started[0].items():
        assert torch.equal(value, started[1][name]), name


def test_a_foreign_body_only_checkpoint_keeps_its_pooler(
    finals: dict[str, Path], tmp_path: Path
) -> None:
    """A sentence-transformers-like BertModel (no metadata of ours) may have trained its
    pooler: fine-tuning reads it."""
    foreign = tmp_path / "foreign"
    shutil.copytree(finals["bert-tiny"], foreign)
    (foreign / METADATA).unlink()
    (foreign / COMMIT).unlink()
    pooler = load_file(str(foreign / "model.safetensors"))["pooler.dense.weight"]
    model = load_under_new_head(AutoModelForSequenceClassification, str(foreign), num_labels=2)
    assert torch.equal(model.bert.pooler.dense.weight, pooler)


def test_a_body_weight_missing_is_refused_by_name(finals: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(finals["bert-tiny"], broken)
    (broken / COMMIT).unlink()
    state = load_file(str(broken / "model.safetensors"))
    del state["encoder.layer.1.output.dense.weight"]
    save_file(state, str(broken / "model.safetensors"), metadata={"format": "pt"})
    with pytest.raises(UserError, match=r"missing keys: bert\.encoder\.layer\.1\.output\.dense"):
        load_model(str(broken))


def test_a_reader_of_the_head_is_refused(finals: dict[str, Path]) -> None:
    from harness.downstream.minimal_pairs import sentence_scores
    from zoo.tokenizers import load_tokenizer

    final = finals["modernbert-tiny"]
    model, spec = load_model(str(final)).eval(), get_spec("modernbert-tiny", 400)
    tokenizer = load_tokenizer(str(final))
    with pytest.raises(UserError, match=r"ships its body only \(ModernBertModel"):
        sentence_scores(model, spec, tokenizer, ["ka bamo."], "head", 256)
    cwt = sentence_scores(model, spec, tokenizer, ["ka bamo.", "lo fetari."], "cwt", 256)
    assert cwt.shape == (2,) and bool(torch.isfinite(torch.as_tensor(cwt)).all())


def test_the_pooler_is_drawn_under_the_seed_it_is_given() -> None:
    spec = get_spec("bert-tiny", 400)
    model = spec.build()
    a, b, c = (body_model(model, None, seed) for seed in (0, 0, 1))
    assert torch.equal(a.pooler.dense.weight, b.pooler.dense.weight)
    assert not torch.equal(a.pooler.dense.weight, c.pooler.dense.weight)
    assert model.config.architectures != ["BertModel"]  # the training model's config untouched


@pytest.mark.parametrize("objective", ["ce", "cwt"])
def test_pretraining_goes_on_from_a_body_only_checkpoint(
    finals: dict[str, Path], tmp_path: Path, objective: str
) -> None:
    """`--init-from` a headless encoder: its body starts as saved. A CE run trains the head
    from its initialisation; a headless run saves its body alone again."""
    from zoo.train.metadata import read_metadata

    parent = finals["bert-tiny"]
    cfg = PretrainConfig(
        preset="bert-tiny",
        objective=objective,
        output_dir=str(tmp_path / objective),
        init_from=str(parent),
        steps=1,
        **{**TINY_RUN, "vocab_size": None},
    )
    final = pretrain(cfg)
    config = AutoModel.from_pretrained(final).config
    assert is_body_only(config) is (objective == "cwt")
    assert read_metadata(final).objective == objective
    started = load_file(str(parent / "model.safetensors"))["embeddings.word_embeddings.weight"]
    trained = load_model(str(final)).bert.embeddings.word_embeddings.weight
    assert trained.shape == started.shape and not torch.equal(trained, started)  # it trained on
