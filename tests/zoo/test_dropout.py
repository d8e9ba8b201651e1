"""Fast CPU dropout masks: the right distribution, the right gradient, and models that train
with them and still save as plain Hugging Face checkpoints."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close
from transformers import AutoModelForMaskedLM

from zoo.models import get_spec
from zoo.models.dropout import (
    ATTENTION,
    FastDropout,
    fast_dropout,
    fast_dropout_attention,
    keep_mask,
    use_fast_dropout,
)


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_keep_mask_drops_with_probability_p_and_rescales(p: float) -> None:
    torch.manual_seed(0)
    keep, scale = keep_mask((1000, 1000), p)
    assert keep.dtype == torch.bool and keep.shape == (1000, 1000)
    dropped = 1 - float(keep.float().mean())
    sd = (p * (1 - p) / 1e6) ** 0.5
    assert abs(dropped - p) < 5 * sd + 2**-16
    p_real = 1 - 1 / scale
    assert abs(p_real - p) <= 2**-16  # the realised probability, scaled for exactly


def test_keep_mask_lanes_are_independent() -> None:
    """Four mask elements come from one 64-bit word: neighbours must not be correlated, and
    the fourth lane (whose top bit random_ leaves at 0) must drop as often as the others."""
    torch.manual_seed(1)
    p = 0.3
    keep, _ = keep_mask((4_000_000,), p)
    drop = (~keep).float().view(-1, 4)  # (words, lanes)
    sd = (p * (1 - p) / 1e6) ** 0.5
    for lane in range(4):
        assert abs(float(drop[:, lane].mean()) - p) < 5 * sd
    both = float((drop[:, :-1] * drop[:, 1:]).mean())  # neighbouring lanes dropped together
    assert abs(both - p * p) < 0.003


def test_keep_mask_edges_and_seed() -> None:
    assert bool(keep_mask((64,), 0.0)[0].all())
    keep, scale = keep_mask((64,), 1.0)
    assert not bool(keep.any()) and scale == 0.0
    torch.manual_seed(3)
    a = keep_mask((1000,), 0.2)[0]
    torch.manual_seed(3)
    assert torch.equal(a, keep_mask((1000,), 0.2)[0])  # torch.manual_seed reproduces it


def test_fast_dropout_value_and_gradient() -> None:
    x = torch.randn(64, 33, requires_grad=True)
    torch.manual_seed(5)
    y = fast_dropout(x, 0.25)
    torch.manual_seed(5)
    keep, scale = keep_mask(x.shape, 0.25)
    assert_close(y, x.detach() * keep * scale)
    (y * 2).sum().backward()
    assert x.grad is not None
    assert_close(x.grad, 2 * keep.float() * scale)
    assert fast_dropout(x, 0.25, training=False) is x  # evaluation: identity, like F.dropout
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        fast_dropout(x, 1.5)


def _attention_reference(q, k, v, mask, keep, scale):  # type: ignore[no-untyped-def]
    s = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if mask is not None:
        s = s.masked_fill(~mask, torch.finfo(s.dtype).min)
    return ((torch.softmax(s, -1) * keep * scale) @ v).transpose(1, 2)


@pytest.mark.parametrize("causal", [False, True])
def test_attention_with_dropout_matches_the_reference(causal: bool) -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 7, 4, generator=g) for _ in range(3))  # (B, H, T, d)
    pad = torch.ones(2, 1, 7, 7, dtype=torch.bool)
    pad[1, ..., 5:] = False  # the second row's last two keys are padding
    module = torch.nn.Module()
    module.is_causal = causal  # type: ignore[assignment]
    mask = None if causal else pad
    torch.manual_seed(9)
    out, _ = fast_dropout_attention(module, q, k, v, mask, dropout=0.2)
    torch.manual_seed(9)
    keep, scale = keep_mask((2, 3, 7, 7), 0.2)
    ref_mask = torch.ones(7, 7, dtype=torch.bool).tril() if causal else pad
    assert_close(out, _attention_reference(q, k, v, ref_mask, keep, scale))


def test_attention_without_dropout_is_sdpa() -> None:
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 7, 4, generator=g) for _ in range(3))
    module = torch.nn.Module()
    module.is_causal = True  # type: ignore[assignment]
    out, _ = fast_dropout_attention(module, q, k, v, None, dropout=0.0)
    assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2))


def test_models_train_with_it_and_save_as_plain_hugging_face(tmp_path) -> None:
    spec = get_spec("bert-tiny", 300)
    torch.manual_seed(0)
    model, twin = spec.build(), spec.build()
    twin.load_state_dict(model.state_dict())
    assert use_fast_dropout(model) == 7  # embeddings + 3 per layer x 2 layers
    assert model.config._attn_implementation == ATTENTION
    assert all(type(m) is not torch.nn.Dropout for m in model.modules())
    assert any(isinstance(m, FastDropout) for m in model.modules())
    ids = torch.randint(5, 300, (2, 12))
    model.eval(), twin.eval()
    assert_close(model(ids).logits, twin(ids).logits)  # no dropout: the same model
    model.train()
    loss = model(ids, labels=ids).loss
    loss.backward()
    assert torch.isfinite(loss) and model.bert.embeddings.word_embeddings.weight.grad is not None
    model.save_pretrained(tmp_path)
    assert ATTENTION not in json.dumps(json.loads((tmp_path / "config.json").read_text()))
    loaded = AutoModelForMaskedLM.from_pretrained(tmp_path).eval()
    assert loaded.config._attn_implementation == "sdpa"
    assert_close(loaded(ids).logits, twin(ids).logits)


def test_decoders_keep_sdpa_without_dropout() -> None:
    spec = get_spec("pythia-tiny", 300)
    torch.manual_seed(0)
    model, twin = spec.build(), spec.build()
    twin.load_state_dict(model.state_dict())
    use_fast_dropout(model)
    ids = torch.randint(5, 300, (2, 12))
    model.train(), twin.train()  # Pythia's dropout is 0: training outputs are deterministic
    assert_close(model(ids).logits, twin(ids).logits)
