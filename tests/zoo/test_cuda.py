"""CUDA: the loss kernels, the vendors' kernels and a training run on a GPU.

Marked `cuda`, so the default test command (CPU, CI) deselects them; on a GPU machine with the
`gpu` extra installed (cut-cross-entropy, liger-kernel) run `pytest -m cuda`.
"""

from __future__ import annotations

import json

import pytest
import torch
from torch.testing import assert_close

from zoo.objectives import LossOptions, cwt_loss
from zoo.objectives.base import LossInputs, VocabHead
from zoo.objectives.builtin import ce_loss

pytestmark = pytest.mark.cuda
DEV = torch.device("cuda")


def _pair(k: int, d: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator(device=DEV).manual_seed(seed)
    h = torch.randn(k, d, device=DEV, generator=g)
    e = 0.3 * torch.randn(k, d, device=DEV, generator=g)
    return h, e


def _loss_and_grads(fn, h, e):  # type: ignore[no-untyped-def]
    h, e = h.clone().requires_grad_(), e.clone().requires_grad_()
    loss = fn(h, e)
    loss.backward()
    return loss.detach(), h.grad, e.grad


def _close(got: torch.Tensor, ref: torch.Tensor, impl: str) -> None:
    """fp32 kernels: elementwise to 1e-4. CCE rounds its products to bf16 (8 bits of mantissa):
    the loss to 1e-3 and each gradient to 1% in norm, small entries being relatively noisy."""
    if impl != "cce":
        assert_close(got, ref, rtol=1e-4, atol=1e-6)
    elif ref.ndim == 0:
        assert_close(got.float(), ref, rtol=1e-3, atol=0.0)
    else:
        assert float((got.float() - ref).norm() / ref.norm()) < 1e-2


@pytest.fixture(autouse=True)
def _exact_fp32():  # type: ignore[no-untyped-def]
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 references must be fp32
    yield
    torch.backends.cuda.matmul.allow_tf32 = before


@pytest.mark.parametrize("impl", ["chunked", "recompute", "cce", "liger"])
@pytest.mark.parametrize("duplicates", ["keep", "unique"])
def test_cwt_kernels_match_plain_on_cuda(impl: str, duplicates: str) -> None:
    h, e = _pair(3000, 64)
    ids = torch.randint(0, 500, (3000,), device=DEV)
    e = e[ids % 700] if duplicates == "unique" else e  # repeated targets have equal rows

    def run(i: str):  # type: ignore[no-untyped-def]
        return lambda h, e: cwt_loss(
            h, e, 0.5, duplicates=duplicates, target_ids=ids % 700, impl=i, chunk=512
        )

    if impl == "cce":  # CCE multiplies in bf16: the reference sees the same rounded inputs
        h, e = h.bfloat16().float(), e.bfloat16().float()
    ref = _loss_and_grads(run("plain"), h, e)
    got = _loss_and_grads(run(impl), h, e)
    for a, b in zip(got, ref, strict=True):
        _close(a, b, impl)


@pytest.mark.parametrize("impl", ["chunked", "recompute"])
def test_chunked_cwt_under_bf16_autocast_multiplies_as_plain_does(impl: str) -> None:
    """`score_dtype: autocast`: bf16 products as the plain loss's under the same autocast,
    a gradient's bf16 rounding apart; `fp32`: fp32 throughout, as without autocast."""
    h, e = _pair(2048, 64)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        ref = _loss_and_grads(lambda h, e: cwt_loss(h, e, impl="plain"), h, e)
        got = _loss_and_grads(lambda h, e: cwt_loss(h, e, impl=impl), h, e)
        fp32 = _loss_and_grads(lambda h, e: cwt_loss(h, e, impl=impl, score_dtype="fp32"), h, e)
    assert got[0].dtype == fp32[0].dtype == torch.float32
    assert_close(got[0], ref[0], rtol=1e-4, atol=1e-6)
    for a, b in zip(got[1:], ref[1:], strict=True):
        assert float((a - b).norm() / b.norm()) < 1e-2
    plain32 = _loss_and_grads(lambda h, e: cwt_loss(h, e, impl="plain"), h, e)  # no autocast
    for a, b in zip(fp32, plain32, strict=True):
        assert_close(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("impl", ["chunked", "cce", "liger"])
def test_vanilla_ce_kernels_match_plain_on_cuda(impl: str) -> None:
    g = torch.Generator(device=DEV).manual_seed(1)
    h = torch.randn(700, 96, device=DEV, generator=g)
    w = 0.2 * torch.randn(5000, 96, device=DEV, generator=g)
    b = 0.1 * torch.randn(5000, device=DEV, generator=g)
    y = torch.randint(0, 5000, (700,), device=DEV, generator=g)

    def run(i: str):  # type: ignore[no-untyped-def]
        hh, ww, bb = (t.clone().requires_grad_() for t in (h, w, b))
        head = VocabHead(transform=lambda x: x, weight=ww, bias=bb)
        emb = torch.nn.Embedding(1, 1)
        loss = ce_loss(LossInputs(hh, y, emb, head=head), LossOptions(ce_impl=i))["loss"]
        loss.backward()
        return loss.detach(), hh.grad, ww.grad, bb.grad

    if impl == "cce":  # bf16 operands (see zoo.objectives.external): compare on rounded inputs
        h, w, b = h.bfloat16().float(), w.bfloat16().float(), b.bfloat16().float()
    for a, ref in zip(run(impl), run("plain"), strict=True):
        _close(a, ref, impl)


def test_pretraining_on_cuda_learns_and_saves_a_plain_checkpoint(tmp_path) -> None:
    from transformers import AutoModelForMaskedLM

    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cwt",
        output_dir=str(tmp_path / "run"),
        steps=40,
        batch_size=16,
        seq_len=64,
        vocab_size=500,
        lr=3e-3,
        corpus=["synthetic:400"],
        progress=False,
        log_every=1,
        device="cuda",
        bf16=True,
        sparse_embeddings=True,
    )
    out = pretrain(cfg)
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    losses = [r["loss"] for r in rows if "loss" in r]
    assert len(losses) == 40 and all(x == x for x in losses)
    assert sum(losses[-5:]) / 5 < sum(losses[:5]) / 5
    meta = json.loads((out / "hlm_metadata.json").read_text())
    assert meta["device"] == "cuda" and meta["hardware"] == torch.cuda.get_device_name(0)
    model = AutoModelForMaskedLM.from_pretrained(out)  # on the CPU, no custom code
    assert model.config._attn_implementation == "sdpa"


def test_a_compiled_cuda_step_trains_like_the_eager_one(tmp_path) -> None:
    import torch._inductor.config

    from zoo.train.config import PretrainConfig
    from zoo.train.pretrain import pretrain

    def losses(out: str, compile: bool) -> list[float]:
        cfg = PretrainConfig(
            preset="pythia-tiny",
            objective="cwt",
            output_dir=str(tmp_path / out),
            steps=5,
            batch_size=8,
            seq_len=64,
            vocab_size=500,
            corpus=["synthetic:300"],
            progress=False,
            log_every=1,
            device="cuda",
            compile=compile,
        )
        pretrain(cfg)
        rows = (tmp_path / out / "metrics.jsonl").read_text().splitlines()
        return [json.loads(x)["loss"] for x in rows if '"loss"' in x]

    eager = losses("eager", False)
    with torch._inductor.config.patch(fallback_random=True):  # eager's dropout draws
        compiled = losses("compiled", True)
    assert_close(compiled, eager, rtol=1e-3, atol=1e-4)


def test_bench_steppers_run_on_cuda() -> None:
    from harness.bench.stepper import Stepper, variant
    from zoo.models import get_spec

    spec = get_spec("bert-tiny", 1000)
    for v in (
        variant("ce", hf_default=True, bf16=True),
        variant("cwt", sparse_embeddings=True, bf16=True),
    ):
        s = Stepper(spec, v, 4, 32, 0, device="cuda")
        assert s.step() > 0 and next(s.model.parameters()).is_cuda


def test_throughput_task_on_cuda_reports_allocator_peak_and_largest_batch() -> None:
    from harness.tasks import TaskContext
    from harness.tasks.throughput import ThroughputParams, run_throughput
    from zoo.models import get_spec
    from zoo.train.config import PretrainConfig

    cfg = PretrainConfig(
        preset="bert-tiny",
        objective="cwt",
        output_dir="",
        vocab_size=1000,
        batch_size=8,
        seq_len=64,
        device="cuda",
    )
    ctx = TaskContext(
        spec=get_spec("bert-tiny", 1000),
        objective="cwt",
        pretrain=cfg,
        params=ThroughputParams(steps=2, warmup=1, max_batch=True),
        seed=0,
    )
    got = {r.metric: r.value for r in run_throughput(ctx)}
    assert got["cuda_peak_mb"] > 0 and got["max_batch"] >= 8 and got["speedup_vs_hf"] > 0


@pytest.mark.parametrize("preset", ["bert-tiny", "pythia-tiny"])
def test_xformers_attention_matches_sdpa(preset: str) -> None:
    pytest.importorskip("xformers")
    from zoo.models import get_spec
    from zoo.models.xformers_attention import check_xformers, use_xformers

    check_xformers("cuda")  # a wheel without kernels for this torch fails here, by name

    spec = get_spec(preset, 500)
    torch.manual_seed(0)
    ref = spec.build().cuda().eval()
    fast = spec.build().cuda().eval()
    fast.load_state_dict(ref.state_dict())
    use_xformers(fast)
    ids = torch.randint(5, 500, (2, 40), device="cuda")
    mask = torch.ones_like(ids)
    mask[1, 30:] = 0  # padding: the bias path
    for m in (None, mask):
        assert_close(
            fast(ids, attention_mask=m).logits,
            ref(ids, attention_mask=m).logits,
            rtol=2e-3,
            atol=2e-3,
        )
