"""The encoder's last layer computed only at the selected positions: same values, same
gradients, fewer FLOPs."""

from __future__ import annotations

import pytest
import torch
from torch.testing import assert_close

from zoo.data.batches import IGNORE
from zoo.flops import body_forward_flops, train_step_flops
from zoo.models import get_spec
from zoo.objectives import OBJECTIVES, LossOptions
from zoo.train.step import TrainModule


def _batch(vocab: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (3, 20), generator=g)
    mask = torch.ones(3, 20, dtype=torch.long)
    mask[1, 15:] = 0  # padded rows
    mask[2, 6:] = 0
    selected = torch.rand(3, 20, generator=g) < 0.3
    selected[0, 0] = selected[0, 19] = True  # first and last positions
    selected[2] = False  # a row with nothing selected
    selected[2, 3] = True
    return ids, mask, selected


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("padded", [False, True])
def test_selected_body_equals_the_full_body_at_the_selected_positions(
    attn: str, padded: bool
) -> None:
    spec = get_spec("bert-tiny", 300)
    torch.manual_seed(0)
    model = spec.build().eval()  # no dropout: both paths are deterministic
    model.config._attn_implementation = attn
    ids, mask, selected = _batch(300)
    am = mask if padded else None
    full = spec.body(model, ids, am)[selected]
    w = torch.randn_like(full)
    (full * w).sum().backward()
    ref = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    model.zero_grad(set_to_none=True)
    part = spec.selected_body(model, ids, am, selected)
    (part * w).sum().backward()
    assert_close(part, full, rtol=1e-5, atol=1e-5)
    got = {n: p.grad for n, p in model.named_parameters() if p.grad is not None}
    assert got.keys() == ref.keys()
    for name in ref:  # sums over every token: compare at the scale of the whole gradient
        scale = max(float(ref[name].abs().max()), 1.0)  # key biases: exactly 0 up to rounding
        assert_close(got[name], ref[name], rtol=1e-5, atol=1e-6 * scale, msg=name)


@pytest.mark.parametrize("objective", ["ce", "cwt"])
def test_train_step_loss_is_the_same_with_and_without_pruning(objective: str) -> None:
    spec = get_spec("bert-tiny", 300)
    torch.manual_seed(0)
    model = spec.build().eval()
    ids, _, selected = _batch(300, seed=1)
    labels = ids.masked_fill(~selected, IGNORE)
    obj = OBJECTIVES.get(objective)
    losses = [
        TrainModule(model, spec, obj, LossOptions(), prune_last_layer=p)(ids, labels)["loss"]
        for p in (False, True)
    ]
    assert_close(losses[1], losses[0])


def test_decoders_gather_from_the_whole_body() -> None:
    spec = get_spec("pythia-tiny", 300)
    torch.manual_seed(0)
    model = spec.build().eval()
    ids, _, selected = _batch(300)
    assert_close(
        spec.selected_body(model, ids, None, selected), spec.body(model, ids, None)[selected]
    )


def test_pruned_flops() -> None:
    spec = get_spec("bert-small", 50_000)
    b, t = 32, 128
    full = body_forward_flops(spec, b, t)
    assert body_forward_flops(spec, b, t, last_layer_queries=b * t) == pytest.approx(full)
    pruned = body_forward_flops(spec, b, t, last_layer_queries=b * 28)
    # the last of 4 layers keeps K/V (2 of its 12 D^2 per token) and 28 of 128 query rows
    assert 0.78 < pruned / full < 0.85
    cwt = OBJECTIVES.get("cwt")
    assert train_step_flops(spec, cwt, b, t, 614, b * 28) < train_step_flops(spec, cwt, b, t, 614)
