"""`hlm bench` part `cwt`: the CWT loss kernels side by side (time, memory, FLOP/s), the
duplicate modes on Zipfian targets, and under bf16 autocast the score products in bf16 (the
default, as the vocabulary head's logits) beside fp32 ones (`loss.score_dtype: fp32`).

Goals: chunked memory / plain <= 1/8 and recompute memory / plain <= 1/8 at K = 16384 (INFO
under --quick, whose K = 8192 is too small for them), chunked time / plain <= 1.15, chunked
FLOP/s >= 0.8 of the matmul roofline. The plain kernel's FLOP/s is INFO: it is the naive
reference the memory goals are measured against, bound by memory passes, not by its products.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import torch

from harness.bench.probe import probe
from harness.bench.timing import Roofline, Row, check, interleaved, spread_row
from zoo.objectives import cwt_loss

SETTLE = 0.03  # a comparison's rounds go on until each variant's best is seen twice within 3%


def loss_step(
    k: int,
    d: int,
    impl: str,
    duplicates: str = "keep",
    ids: torch.Tensor | None = None,
    score_dtype: str | None = None,
) -> Callable[[], float]:
    """A closure timing one CWT forward + backward on fixed random [K, D] inputs; with a
    `score_dtype`, under bf16 autocast with the products in that dtype."""
    g = torch.Generator().manual_seed(0)
    h = torch.randn(k, d, generator=g).requires_grad_()  # LayerNorm-scale outputs
    e = (0.05 * torch.randn(k, d, generator=g)).requires_grad_()  # embedding-scale targets

    def run() -> float:
        t = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=score_dtype is not None):
            loss = cwt_loss(
                h,
                e,
                duplicates=duplicates,  # type: ignore[arg-type]
                target_ids=ids,
                impl=impl,  # type: ignore[arg-type]
                score_dtype=score_dtype or "autocast",  # type: ignore[arg-type]
            )
        loss.backward()
        return time.perf_counter() - t

    return run


def _memory_rows(k: int, d: int, judged: bool) -> list[Row]:
    mem = {
        i: probe("cwt", k=k, d=d, impl=i)["growth_mb"] for i in ("plain", "chunked", "recompute")
    }
    rows = [Row(f"cwt K={k} {i}: peak extra memory", mem[i], "MiB") for i in mem]
    for impl in ("chunked", "recompute"):
        name, ratio = f"cwt K={k}: {impl} memory / plain", mem[impl] / mem["plain"]
        rows.append(check(name, ratio, "x", "<=", 1 / 8) if judged else Row(name, ratio, "x"))
    return rows


def _duplicate_rows(quick: bool, d: int) -> list[Row]:
    kd = 4096 if quick else 8192
    g = torch.Generator().manual_seed(0)
    zipf = 1.0 / torch.arange(1, 50_001, dtype=torch.float64)
    ids = torch.multinomial(zipf / zipf.sum(), kd, replacement=True, generator=g)
    steps = {m: loss_step(kd, d, "auto", m, ids) for m in ("keep", "mask", "unique")}
    dup = interleaved(steps, warmup=1, reps=3).best
    share = float((torch.bincount(ids)[ids] > 1).float().mean())
    return [
        *[Row(f"cwt K={kd} zipf duplicates={m}: ms/step", 1000 * dup[m], "ms") for m in dup],
        Row(f"cwt K={kd} zipf: rows whose token repeats in the batch", share, "frac"),
        Row(f"cwt K={kd} zipf: unique speed-up over keep", dup["keep"] / dup["unique"], "x"),
    ]


def bench_cwt(quick: bool, peak: Roofline) -> list[Row]:
    k, d = (8192, 768) if quick else (16384, 768)
    impls = ["plain", "chunked", "recompute", "torch"]
    steps = {i: loss_step(k, d, i) for i in impls}
    ct = interleaved(steps, warmup=1, reps=2 if quick else 3, peak=peak, settle=SETTLE)
    med = ct.best
    flops = 3 * 2.0 * k * k * d  # forward scores + the two gradient matmuls
    rows = [Row(f"cwt K={k} D={d} {i}: ms/step", 1000 * med[i], "ms") for i in impls]
    rows += _memory_rows(k, d, judged=not quick)
    rows += [
        check(f"cwt K={k}: chunked time / plain", med["chunked"] / med["plain"], "x", "<=", 1.15),
        Row(f"cwt K={k}: recompute time / plain", med["recompute"] / med["plain"], "x"),
        Row(
            f"cwt K={k}: torch linear_cross_entropy time / plain", med["torch"] / med["plain"], "x"
        ),
        Row(f"cwt K={k} plain: FLOP/s / matmul roofline", ct.mfu("plain", flops), "x"),
        check(
            f"cwt K={k} chunked: FLOP/s / matmul roofline", ct.mfu("chunked", flops), "x", ">=", 0.8
        ),
        spread_row(f"cwt K={k}", ct),
    ]
    return rows + _duplicate_rows(quick, d) + _score_dtype_rows(quick)


def _score_dtype_rows(quick: bool) -> list[Row]:
    """The chunked CWT step under bf16 autocast, its products in bf16 and in fp32: what an
    fp32 contrastive loss beside a bf16 vocabulary head would cost the headless side (INFO:
    bf16 products are fast only where the CPU multiplies bf16 natively, AMX or AVX-512 BF16)."""
    k, d = (8192, 512) if quick else (16384, 512)
    steps = {dt: loss_step(k, d, "chunked", score_dtype=dt) for dt in ("autocast", "fp32")}
    best = interleaved(steps, warmup=1, reps=2 if quick else 3, settle=SETTLE).best
    name = f"cwt K={k} D={d} chunked under bf16 autocast"
    return [
        Row(f"{name}, bf16 products: ms/step", 1000 * best["autocast"], "ms"),
        Row(f"{name}, fp32 products: ms/step", 1000 * best["fp32"], "ms"),
        Row(f"{name}: fp32 products time / bf16", best["fp32"] / best["autocast"], "x"),
    ]
