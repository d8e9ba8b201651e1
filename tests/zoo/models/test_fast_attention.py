"""The CPU attention with dropout (`zoo.models.fast_attention`): the same values and gradients
as the eager computation with the same masks, and models that train with it and still save
as plain Hugging Face checkpoints."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close
from transformers import AutoModelForMaskedLM

import zoo.models.fast_attention as fa
from zoo.models import get_spec
from zoo.models.dropout import FastDropout, keep_mask
from zoo.models.fast_attention import ATTENTION, fast_dropout_attention, use_fast_dropout


def _reference(q, k, v, allowed, p, rows):  # type: ignore[no-untyped-def]
    """Eager attention with dropout, drawing one `keep_mask` per slice of `rows` batch rows,
    in order (the draws the sliced attention makes); gradients by autograd."""
    out = []
    for r0 in range(0, q.shape[0], rows):
        sl = slice(r0, r0 + rows)
        s = q[sl] @ k[sl].transpose(-1, -2) / q.shape[-1] ** 0.5
        if allowed is not None:
            s = s.masked_fill(~allowed[sl] if allowed.shape[0] > 1 else ~allowed, -3.4e38)
        probs = torch.softmax(s, -1)
        keep, scale = keep_mask(probs.shape, p)
        out.append((probs * keep * scale) @ v[sl])
    return torch.cat(out).transpose(1, 2)  # (B, Tq, H, d)


def _qkv(b, h, tq, tk, d, kv_heads=None, dtype=torch.float64):  # type: ignore[no-untyped-def]
    """q, k, v as the projections make them: (B, T, H * d) tensors viewed as (B, H, T, d)."""
    g = torch.Generator().manual_seed(0)
    kvh = kv_heads or h
    leaves = [
        torch.randn(b, t, n * d, generator=g, dtype=dtype, requires_grad=True)
        for t, n in ((tq, h), (tk, kvh), (tk, kvh))
    ]
    views = [x.view(b, x.shape[1], -1, d).transpose(1, 2) for x in leaves]
    return leaves, views


@pytest.mark.parametrize("mask", ["none", "padding", "causal"])
def test_sliced_attention_matches_eager_values_and_gradients(mask: str, monkeypatch) -> None:
    b, h, t, d, p = 5, 3, 7, 4, 0.3
    monkeypatch.setattr(fa, "SLICE_BYTES", 2 * h * t * t * 8)  # 2 rows a slice: 3 slices
    assert fa.slice_rows(h, t, t, 8) == 2
    leaves, (q, k, v) = _qkv(b, h, t, t, d)
    allowed = None
    if mask == "padding":
        allowed = torch.ones(b, 1, t, t, dtype=torch.bool)
        allowed[1, ..., 5:] = False  # the second row's last two keys are padding
    module = torch.nn.Module()
    module.is_causal = mask == "causal"  # type: ignore[assignment]
    grad = torch.randn(b, t, h, d, dtype=torch.float64)
    torch.manual_seed(9)
    out, _ = fast_dropout_attention(module, q, k, v, allowed, dropout=p)
    got = torch.autograd.grad(out, leaves, grad)
    if mask == "causal":
        allowed = torch.ones(t, t, dtype=torch.bool).tril()[None, None]
    torch.manual_seed(9)
    ref = _reference(q, k, v, allowed, p, rows=2)
    want = torch.autograd.grad(ref, leaves, grad)
    assert out.is_contiguous() and out.shape == (b, t, h, d)
    assert_close(out, ref)
    for a, w in zip(got, want, strict=True):
        assert_close(a, w)


def test_grouped_query_and_bf16_autocast_take_the_eager_path_with_the_same_masks() -> None:
    _, (q, k, v) = _qkv(2, 4, 6, 6, 8, kv_heads=2, dtype=torch.float32)
    module = torch.nn.Module()
    module.is_causal = False  # type: ignore[assignment]
    torch.manual_seed(4)
    out, _ = fast_dropout_attention(module, q, k, v, None, dropout=0.2)
    k2, v2 = k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)
    torch.manual_seed(4)
    assert_close(out, _reference(q, k2, v2, None, 0.2, rows=2))  # one slice: 2 rows
    with torch.autocast("cpu", dtype=torch.bfloat16):  # bf16 operands: the eager path
        qb, kb, vb = (x.to(torch.bfloat16) for x in (q, k2, v2))
        torch.manual_seed(4)
        low, _ = fast_dropout_attention(module, qb, kb, vb, None, dropout=0.2)
    assert low.dtype == torch.bfloat16
    assert_close(low.float(), out, atol=0.05, rtol=0.05)


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
