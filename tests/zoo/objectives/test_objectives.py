"""Objectives in the training step: parity with transformers, and no vocabulary projection
anywhere in a headless step."""

from __future__ import annotations

import pytest
import torch
from torch.testing import assert_close
from torch.utils._python_dispatch import TorchDispatchMode

from zoo.data.batches import IGNORE, clm_labels
from zoo.errors import UserError
from zoo.models import get_spec
from zoo.objectives import OBJECTIVES, LossOptions
from zoo.train.step import TrainModule, prepare_for_objective

V = 1031  # a vocabulary size no other dimension in these tiny models has


def _encoder_batch(spec, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, V, (3, 24), generator=g)
    labels = torch.full_like(ids, IGNORE)
    pick = torch.rand(ids.shape, generator=g) < 0.2
    labels[pick] = ids[pick]
    inputs = ids.masked_fill(pick, 4)
    return inputs, labels


@pytest.mark.parametrize("preset", ["bert-tiny", "pythia-tiny", "gpt2-11m"])
def test_ce_objective_equals_transformers_loss(preset: str) -> None:
    torch.manual_seed(0)
    spec = get_spec(preset, vocab_size=V)
    model = spec.build().eval()
    module = TrainModule(model, spec, OBJECTIVES.get("ce"), LossOptions())
    if spec.is_encoder:
        inputs, labels = _encoder_batch(spec)
        expected = model(input_ids=inputs, labels=labels).loss
    else:
        inputs = torch.randint(0, V, (3, 24), generator=torch.Generator().manual_seed(1))
        labels = clm_labels(inputs)
        expected = model(input_ids=inputs, labels=inputs).loss
    assert_close(module(inputs, labels)["loss"], expected, rtol=1e-5, atol=1e-5)


class ShapeRecorder(TorchDispatchMode):
    """Records the shape of every tensor produced by every op (forward and backward)."""

    def __init__(self) -> None:
        super().__init__()
        self.shapes: list[tuple[str, tuple[int, ...]]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                self.shapes.append((str(func), tuple(t.shape)))
        return out


def _vocab_projections(
    shapes: list[tuple[str, tuple[int, ...]]], k: int
) -> list[tuple[str, tuple[int, ...]]]:
    """Tensors shaped like a projection onto the vocabulary: [..., V] over positions (not the
    [V, D] / [D, V] weight matrices themselves, D = 128 in these presets)."""
    return [(f, s) for f, s in shapes if len(s) >= 2 and s[-1] == V and s[0] not in (V, 128)]


@pytest.mark.parametrize("preset", ["bert-tiny", "pythia-tiny"])
@pytest.mark.parametrize("objective", ["cwt", "nce"])
def test_headless_step_builds_no_vocabulary_projection(preset: str, objective: str) -> None:
    spec = get_spec(preset, vocab_size=V)
    obj = OBJECTIVES.get(objective)
    model = spec.build(tie_word_embeddings=not obj.needs_output_embeddings)
    prepare_for_objective(model, spec, obj)
    module = TrainModule(model, spec, obj, LossOptions())
    inputs, labels = (
        _encoder_batch(spec)
        if spec.is_encoder
        else (torch.randint(0, V, (3, 24)), clm_labels(torch.randint(0, V, (3, 24))))
    )
    with ShapeRecorder() as rec:
        module(inputs, labels)["loss"].backward()
    k = int((labels != IGNORE).sum())
    assert _vocab_projections(rec.shapes, k) == []
    # the recorder does see vocabulary projections when they exist (the test can fail):
    ce = TrainModule(model, spec, OBJECTIVES.get("ce"), LossOptions())
    if obj.needs_output_embeddings:
        return
    with ShapeRecorder() as rec2:
        ce(inputs, labels)["loss"].backward()
    assert (k, V) in [s for _, s in _vocab_projections(rec2.shapes, k)]


def test_vanilla_ce_projects_only_selected_positions() -> None:
    spec = get_spec("bert-tiny", vocab_size=V)
    model = spec.build()
    inputs, labels = _encoder_batch(spec)
    k = int((labels != IGNORE).sum())
    with ShapeRecorder() as rec:
        TrainModule(model, spec, OBJECTIVES.get("ce"), LossOptions())(inputs, labels)
    vocab_shapes = {s for _, s in _vocab_projections(rec.shapes, k)}
    assert vocab_shapes == {(k, V)}  # never [B, T, V]


def test_headless_freezes_head_only_parameters() -> None:
    spec = get_spec("bert-tiny", vocab_size=V)
    model = spec.build()
    prepare_for_objective(model, spec, OBJECTIVES.get("cwt"))
    frozen = {n for n, p in model.named_parameters() if not p.requires_grad}
    assert frozen and all(n.startswith("cls.predictions") for n in frozen)
    assert model.get_input_embeddings().weight.requires_grad


def test_nce_needs_untied_output_matrix_and_adds_parameters() -> None:
    spec = get_spec("bert-small", vocab_size=30522)
    tied, untied = spec.build(), spec.build(tie_word_embeddings=False)
    with pytest.raises(UserError, match="untied"):
        prepare_for_objective(tied, spec, OBJECTIVES.get("nce"))
    ratio = sum(p.numel() for p in untied.parameters()) / sum(p.numel() for p in tied.parameters())
    assert 1.5 < ratio < 1.6  # the paper's "x1.57 parameters" for NCE wo/ WT at BERT-small


def test_ce_plus_cwt_is_the_sum() -> None:
    torch.manual_seed(0)
    spec = get_spec("pythia-tiny", vocab_size=V)
    model = spec.build().eval()
    ids = torch.randint(0, V, (2, 16))
    labels = clm_labels(ids)
    parts = {
        n: TrainModule(model, spec, OBJECTIVES.get(n), LossOptions())(ids, labels)["loss"]
        for n in ("ce", "cwt", "ce+cwt")
    }
    assert_close(parts["ce+cwt"], parts["ce"] + parts["cwt"])
