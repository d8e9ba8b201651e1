"""Optimiser set-up: fused AdamW, sparse embedding updates, gradient clipping."""

from __future__ import annotations

import json

import pytest
import torch
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
from torch.testing import assert_close

from zoo.errors import UserError
from zoo.models import get_spec
from zoo.objectives import OBJECTIVES
from zoo.train.checkpoint import load_model
from zoo.train.config import PretrainConfig
from zoo.train.layout import list_checkpoints
from zoo.train.optim import clip_grad_norm, make_optimizer
from zoo.train.pretrain import pretrain
from zoo.train.recipe import ResolvedRecipe
from zoo.train.sharded import SHARDED

RECIPE = ResolvedRecipe(
    steps=1,
    batch_size=2,
    micro_batch_size=2,
    grad_accum=1,
    seq_len=16,
    lr=1e-2,
    weight_decay=0.01,
    betas=(0.9, 0.999),
    eps=1e-8,
    grad_clip=1.0,
    schedule="constant",
    warmup_steps=0,
)


def _model_and_loss(objective: str, seed: int = 0):
    torch.manual_seed(seed)
    spec = get_spec("bert-tiny", 300)
    model = spec.build(tie_word_embeddings=True).eval()  # no dropout: deterministic twins
    ids = torch.randint(8, 150, (2, 16))  # rows >= 150 of the embedding are never used

    def loss() -> torch.Tensor:
        return model.bert(input_ids=ids).last_hidden_state.pow(2).mean()

    return spec, model, OBJECTIVES.get(objective), loss


def test_adamw_is_fused_and_matches_the_reference_update() -> None:
    spec, model, obj, loss = _model_and_loss("ce")
    opt = make_optimizer(model, spec, obj, RECIPE, sparse_embeddings=False)
    assert all(g["fused"] for g in opt.param_groups)
    _, ref_model, _, ref_loss = _model_and_loss("ce")
    ref = torch.optim.AdamW(
        [
            {"params": [p for p in ref_model.parameters() if p.ndim >= 2], "weight_decay": 0.01},
            {"params": [p for p in ref_model.parameters() if p.ndim < 2], "weight_decay": 0.0},
        ],
        lr=1e-2,
        foreach=False,
    )
    for o, f in ((opt, loss), (ref, ref_loss)):  # one step: both see the same gradients
        o.zero_grad()
        f().backward()
        o.step()
    for p, q in zip(model.parameters(), ref_model.parameters(), strict=True):
        assert_close(p, q, rtol=1e-5, atol=1e-6)  # a wrong update would be ~lr = 1e-2


def test_sparse_embeddings_touch_only_the_batch_rows() -> None:
    spec, model, obj, loss = _model_and_loss("cwt")
    opt = make_optimizer(model, spec, obj, RECIPE, sparse_embeddings=True)
    emb = spec.input_embeddings(model).weight
    before = emb.detach().clone()
    opt.zero_grad()
    loss().backward()
    assert emb.grad is not None and emb.grad.is_sparse
    opt.step()
    assert torch.equal(emb[150:], before[150:])  # untouched rows: no decay, no update
    assert not torch.equal(emb[8:150], before[8:150])
    state = opt.state_dict()
    opt.load_state_dict(state)  # the combined optimiser round-trips (resume)


def test_sparse_embeddings_refuse_objectives_that_use_the_matrix_densely() -> None:
    spec, model, _, _ = _model_and_loss("ce")
    with pytest.raises(UserError, match="headless"):
        make_optimizer(model, spec, OBJECTIVES.get("ce"), RECIPE, sparse_embeddings=True)


def test_clip_grad_norm_matches_torch_on_dense_gradients() -> None:
    torch.manual_seed(0)
    a = [torch.nn.Parameter(torch.randn(5, 3)) for _ in range(3)]
    b = [torch.nn.Parameter(p.detach().clone()) for p in a]
    for p, q in zip(a, b, strict=True):
        p.grad = torch.randn_like(p) * 3
        q.grad = p.grad.clone()
    norm = float(clip_grad_norm(a, 1.0))
    ref = torch.nn.utils.clip_grad_norm_(b, 1.0)
    assert norm == pytest.approx(float(ref), rel=1e-6)
    for p, q in zip(a, b, strict=True):
        assert_close(p.grad, q.grad)


def test_clip_grad_norm_counts_a_sparse_gradient_like_its_dense_twin() -> None:
    dense = torch.nn.Parameter(torch.zeros(6, 2))
    sparse = torch.nn.Parameter(torch.zeros(6, 2))
    idx = torch.tensor([[1, 1, 4]])  # row 1 twice: coalescing sums before the norm
    vals = torch.tensor([[3.0, 0.0], [1.0, 0.0], [0.0, 2.0]])
    sparse.grad = torch.sparse_coo_tensor(idx, vals, (6, 2), check_invariants=True)
    dense.grad = sparse.grad.to_dense()
    assert float(clip_grad_norm([sparse], 100.0)) == pytest.approx(float(dense.grad.norm()))
    assert float(clip_grad_norm([sparse], 1.0)) == pytest.approx(20**0.5)
    assert float(sparse.grad.coalesce()._values().norm()) == pytest.approx(1.0, rel=1e-5)


def test_pretrain_with_sparse_embeddings_learns(tmp_path) -> None:
    cfg = PretrainConfig(
        preset="pythia-tiny",
        objective="cwt",
        output_dir=str(tmp_path / "run"),
        steps=30,
        batch_size=8,
        seq_len=32,
        vocab_size=400,
        lr=3e-3,
        corpus=["synthetic:300"],
        progress=False,
        log_every=1,
        save_every=10,  # intermediate checkpoints keep the training state (optimizer)
        sparse_embeddings=True,
    )
    out = pretrain(cfg)
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in rows if "loss" in r]
    assert len(losses) == 30
    assert all(x == x for x in losses)  # no NaN
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5
    # the run really used SparseAdam: its state has two parts, and embedding rows of tokens the
    # corpus never produced are bit-for-bit the initial ones (dense AdamW's decay moves them all)
    last = list_checkpoints(tmp_path / "run")[-1]
    dcp_to_torch_save(last / SHARDED, tmp_path / "state.pt")
    groups = torch.load(tmp_path / "state.pt", weights_only=False)["optimizer"]["param_groups"]
    sparse = [g for g in groups if "gpt_neox.embed_in.weight" in g["params"]]
    assert len(groups) == 3 and "weight_decay" not in sparse[0]  # SparseAdam's group
    torch.manual_seed(cfg.seed)
    initial = get_spec("pythia-tiny", 400).build().gpt_neox.embed_in.weight.detach()
    final = load_model(str(out)).gpt_neox.embed_in.weight.detach()
    untouched = (final == initial).all(dim=1)  # (V,)
    assert 0 < int(untouched.sum()) < 400
