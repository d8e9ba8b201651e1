"""cwt_loss against straightforward references, its gradient, stability and duplicate modes."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.testing import assert_close

from zoo.objectives import cwt_loss


def paper_cwt(h: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
    """Figure 9 of the paper, verbatim (exp / divide)."""
    exp_sim = torch.exp(torch.mm(h, e.T))
    return -(exp_sim.diagonal() / (exp_sim.sum(-1) + 1e-9)).log().mean()


def reference(h: torch.Tensor, e: torch.Tensor, tau: float = 1.0) -> torch.Tensor:
    s = (h.double() @ e.double().T) / tau
    return (torch.logsumexp(s, dim=1) - s.diagonal()).mean()


@pytest.mark.parametrize("tau", [1.0, 0.5, 2.0])
def test_value_and_gradient_match_reference(tau: float) -> None:
    g = torch.Generator().manual_seed(0)
    h = torch.randn(37, 16, generator=g, requires_grad=True)
    e = torch.randn(37, 16, generator=g, requires_grad=True)
    loss = cwt_loss(h, e, tau)
    h2, e2 = h.detach().double().requires_grad_(), e.detach().double().requires_grad_()
    ref = reference(h2, e2, tau)
    assert_close(loss.double(), ref, rtol=1e-6, atol=1e-6)
    loss.backward()
    ref.backward()
    assert_close(h.grad.double(), h2.grad, rtol=1e-5, atol=1e-6)
    assert_close(e.grad.double(), e2.grad, rtol=1e-5, atol=1e-6)


def test_matches_paper_formula_where_it_is_finite() -> None:
    g = torch.Generator().manual_seed(1)
    h, e = torch.randn(20, 8, generator=g), torch.randn(20, 8, generator=g)
    assert_close(cwt_loss(h, e), paper_cwt(h, e), rtol=1e-5, atol=1e-5)


def test_finite_where_paper_formula_overflows() -> None:
    g = torch.Generator().manual_seed(2)
    h, e = 10 * torch.randn(16, 32, generator=g), 10 * torch.randn(16, 32, generator=g)
    assert not torch.isfinite(paper_cwt(h, e))
    loss = cwt_loss(h, e)
    assert torch.isfinite(loss)
    assert_close(loss.double(), reference(h, e), rtol=1e-6, atol=1e-6)


def test_under_bf16_autocast_the_products_are_bf16_and_the_softmax_fp32() -> None:
    g = torch.Generator().manual_seed(3)
    h, e = torch.randn(64, 32, generator=g), torch.randn(64, 32, generator=g)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = cwt_loss(h, e)  # score_dtype="autocast", as the vocabulary head's logits
        fp32 = cwt_loss(h, e, score_dtype="fp32")
    assert loss.dtype == fp32.dtype == torch.float32
    scores = (h.bfloat16() @ e.bfloat16().T).float()  # bf16 products, fp32 softmax
    assert_close(loss, F.cross_entropy(scores, torch.arange(64)))
    assert_close(fp32, cwt_loss(h, e))  # fp32 products: autocast makes no difference
    assert (loss - fp32).abs() > 1e-4  # the two are different computations
    assert_close(loss, fp32, rtol=1e-2, atol=0)
    # without autocast, bf16 inputs are multiplied in fp32 whatever score_dtype says
    for score_dtype in ("autocast", "fp32"):
        loss_bf16 = cwt_loss(h.bfloat16(), e.bfloat16(), score_dtype=score_dtype)  # type: ignore[arg-type]
        assert loss_bf16.dtype == torch.float32
        assert_close(
            loss_bf16.double(),
            reference(h.bfloat16().float(), e.bfloat16().float()),
            rtol=1e-5,
            atol=1e-5,
        )


def _dup_batch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(4)
    ids = torch.tensor([5, 3, 5, 7, 3, 5, 9])
    table = torch.randn(10, 8, generator=g)
    h = torch.randn(len(ids), 8, generator=g)
    return h, table[ids], ids


def test_mask_mode_removes_same_token_negatives() -> None:
    h, e, ids = _dup_batch()
    s = h.double() @ e.double().T
    rows = []
    for i in range(len(ids)):
        keep = (ids != ids[i]) | (torch.arange(len(ids)) == i)
        rows.append(torch.logsumexp(s[i][keep], 0) - s[i, i])
    expected = torch.stack(rows).mean()
    assert_close(
        cwt_loss(h, e, duplicates="mask", target_ids=ids).double(), expected, rtol=1e-6, atol=1e-6
    )


def test_unique_mode_is_softmax_over_distinct_tokens() -> None:
    h, e, ids = _dup_batch()
    uniq = ids.unique()
    table = {int(t): e[(ids == t).nonzero()[0, 0]] for t in uniq}
    eu = torch.stack([table[int(t)] for t in uniq]).double()
    s = h.double() @ eu.T
    target = torch.searchsorted(uniq, ids)
    expected = torch.nn.functional.cross_entropy(s, target)
    assert_close(
        cwt_loss(h, e, duplicates="unique", target_ids=ids).double(), expected, rtol=1e-6, atol=1e-6
    )


def test_all_modes_agree_without_duplicates() -> None:
    g = torch.Generator().manual_seed(5)
    ids = torch.randperm(50, generator=g)[:12]
    h, e = torch.randn(12, 8, generator=g), torch.randn(12, 8, generator=g)
    keep = cwt_loss(h, e)
    assert_close(cwt_loss(h, e, duplicates="mask", target_ids=ids), keep)
    assert_close(
        cwt_loss(h, e, duplicates="unique", target_ids=ids)[()], keep[()], rtol=1e-6, atol=1e-6
    )


def test_bad_arguments() -> None:
    h = torch.randn(4, 3)
    with pytest.raises(ValueError, match="expects hidden"):
        cwt_loss(h, torch.randn(5, 3))
    with pytest.raises(ValueError, match="needs target_ids"):
        cwt_loss(h, h, duplicates="mask")
    with pytest.raises(ValueError, match="temperature"):
        cwt_loss(h, h, 0.0)
